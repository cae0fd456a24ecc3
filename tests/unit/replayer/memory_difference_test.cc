#include "replayer/memory_difference.h"

#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <string>
#include <vector>

using repro::format::PageHash;
using repro::replayer::AddressNamer;
using repro::replayer::compare_bytes;
using repro::replayer::describe_memory_finding;
using repro::replayer::first_memory_difference;
using repro::replayer::hex_bytes;
using repro::replayer::MemoryDifference;
using repro::replayer::MemoryFinding;
using Kind = repro::replayer::MemoryDifference::Kind;

namespace {

constexpr uint64_t kPage = repro::os::kPageBytes;

std::vector<repro::os::PageHash> live(const std::vector<PageHash>& pages) {
  std::vector<repro::os::PageHash> result;
  for (const PageHash& page : pages) {
    result.push_back({page.address, page.hash});
  }
  return result;
}

// Names every address after the variable "counter" at 0x5000 and every
// range after the heap.
AddressNamer fake_namer() {
  AddressNamer namer;
  namer.name_address = [](uint64_t address) {
    return fmt::format("counter+{:#x} in /bin/prog (.bss)", address - 0x5000);
  };
  namer.name_range = [](uint64_t, uint64_t) { return std::string("[heap] rw-p"); };
  return namer;
}

}  // namespace

TEST_CASE("page lists that are the same have no difference", "[replayer][memory]") {
  std::vector<PageHash> pages = {{0x1000, 1}, {0x2000, 2}, {0x9000, 9}};
  CHECK(first_memory_difference(pages, live(pages)).kind == Kind::kNone);
  CHECK(first_memory_difference({}, {}).kind == Kind::kNone);
}

TEST_CASE("the first page whose hash differs is the difference, in address order",
          "[replayer][memory]") {
  std::vector<PageHash> recorded = {{0x1000, 1}, {0x2000, 2}, {0x3000, 3}};
  std::vector<PageHash> replayed = {{0x1000, 1}, {0x2000, 20}, {0x3000, 30}};
  CHECK(first_memory_difference(recorded, live(replayed)) ==
        MemoryDifference{Kind::kPage, 0x2000, 0x3000, 2});
}

TEST_CASE("pages replay lacks are a missing range, up to the end of their run",
          "[replayer][memory]") {
  std::vector<PageHash> recorded = {{0x1000, 1}, {0x2000, 2}, {0x3000, 3}, {0x9000, 9}};
  std::vector<PageHash> replayed = {{0x1000, 1}, {0x9000, 9}};
  CHECK(first_memory_difference(recorded, live(replayed)) ==
        MemoryDifference{Kind::kMissing, 0x2000, 0x4000, 0});
}

TEST_CASE("a missing range stops where replay's next page begins", "[replayer][memory]") {
  std::vector<PageHash> recorded = {{0x1000, 1}, {0x2000, 2}, {0x3000, 3}};
  std::vector<PageHash> replayed = {{0x3000, 3}};
  CHECK(first_memory_difference(recorded, live(replayed)) ==
        MemoryDifference{Kind::kMissing, 0x1000, 0x3000, 0});
}

TEST_CASE("pages the recording lacks are an extra range, also at the end",
          "[replayer][memory]") {
  std::vector<PageHash> recorded = {{0x1000, 1}};
  std::vector<PageHash> replayed = {{0x1000, 1}, {0x8000, 8}, {0x9000, 9}, {0xb000, 11}};
  CHECK(first_memory_difference(recorded, live(replayed)) ==
        MemoryDifference{Kind::kExtra, 0x8000, 0xa000, 0});
  CHECK(first_memory_difference({}, live(recorded)) ==
        MemoryDifference{Kind::kExtra, 0x1000, 0x2000, 0});
}

TEST_CASE("compare_bytes shows the differing bytes from the first to the last within the window",
          "[replayer][memory]") {
  std::string recorded(64, '\0');
  std::string replayed = recorded;
  replayed[8] = 0x11;
  replayed[10] = 0x22;
  replayed[50] = 0x33;  // beyond the 32-byte window from offset 8, still counted
  auto difference = compare_bytes(recorded, replayed);
  REQUIRE(difference);
  CHECK(difference->first_offset == 8);
  CHECK(difference->differing_bytes == 3);
  CHECK(hex_bytes(difference->recorded) == "00 00 00");
  CHECK(hex_bytes(difference->replayed) == "11 00 22");
}

TEST_CASE("compare_bytes cuts the window at 32 bytes", "[replayer][memory]") {
  std::string recorded(100, 'a');
  std::string replayed(100, 'b');
  auto difference = compare_bytes(recorded, replayed);
  REQUIRE(difference);
  CHECK(difference->first_offset == 0);
  CHECK(difference->differing_bytes == 100);
  CHECK(difference->recorded.size() == repro::replayer::kByteWindow);
}

TEST_CASE("compare_bytes finds nothing in equal bytes or bytes of other lengths",
          "[replayer][memory]") {
  CHECK_FALSE(compare_bytes("abc", "abc"));
  CHECK_FALSE(compare_bytes("abc", "abcd"));
}

TEST_CASE("hex_bytes writes two lowercase digits per byte, space separated",
          "[replayer][memory]") {
  CHECK(hex_bytes(std::string("\x3a\x1f\x02\xff", 4)) == "3a 1f 02 ff");
  CHECK(hex_bytes("") == "");
}

TEST_CASE("a differing page with a recorded copy is shown byte by byte", "[replayer][memory]") {
  MemoryFinding finding;
  finding.difference = {Kind::kPage, 0x5000, 0x5000 + kPage, 42};
  finding.recorded_page = std::string(kPage, '\0');
  finding.replayed_page = *finding.recorded_page;
  finding.recorded_page->replace(0xc8, 3, "\x3a\x1f\x02");
  finding.replayed_page.replace(0xc8, 3, "\x9c\x44\x01");
  CHECK(describe_memory_finding(finding, fake_namer()) ==
        ": first at 0x50c8, counter+0xc8 in /bin/prog (.bss): recorded 3a 1f 02, "
        "replayed 9c 44 01 (3 bytes of the page differ)");
  finding.replayed_page[0xc9] = 0x1f;
  finding.replayed_page[0xca] = 0x02;
  CHECK(describe_memory_finding(finding, AddressNamer{}) ==
        ": first at 0x50c8: recorded 3a, replayed 9c (1 byte of the page differs)");
}

TEST_CASE("a differing page without a recorded copy shows replay's first non-zero bytes",
          "[replayer][memory]") {
  MemoryFinding finding;
  finding.difference = {Kind::kPage, 0x5000, 0x5000 + kPage, 42};
  finding.replayed_page = std::string(kPage, '\0');
  finding.replayed_page.replace(0x10, 2, "\x07\x08");
  CHECK(describe_memory_finding(finding, AddressNamer{}) ==
        ": first in the page at 0x5000, of which the trace holds no copy (the recorder copies "
        "no pages once its snapshot budget, --snapshot-budget-mib, is used up); replayed, from "
        "0x5010: 07 08 00 00 00 00 00 "
        "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 (2 non-zero "
        "bytes in the page)");
}

TEST_CASE("missing and extra ranges say what replay has there", "[replayer][memory]") {
  MemoryFinding missing;
  missing.difference = {Kind::kMissing, 0x7000, 0x9000, 0};
  CHECK(describe_memory_finding(missing, AddressNamer{}) ==
        ": first at 0x7000: the recording had non-zero writable memory at 0x7000-0x9000 (2 pages) "
        "where replay has nothing mapped");
  CHECK(describe_memory_finding(missing, fake_namer()) ==
        ": first at 0x7000: the recording had non-zero writable memory at 0x7000-0x9000 (2 pages) "
        "where replay has zeros: [heap] rw-p");
  MemoryFinding extra;
  extra.difference = {Kind::kExtra, 0x7000, 0x8000, 0};
  CHECK(describe_memory_finding(extra, fake_namer()) ==
        ": first at 0x7000: replay has non-zero writable memory at 0x7000-0x8000 (1 page: [heap] "
        "rw-p) where the recording had zeros or nothing mapped");
}
