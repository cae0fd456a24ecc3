#include "replayer/memory_difference.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>

namespace repro::replayer {
namespace {

constexpr uint64_t kPage = os::kPageBytes;

// The end of the run of contiguous pages of `pages` that starts at index
// `i`, cut at `bound` (page-aligned, above pages[i].address).
template <typename Page>
uint64_t run_end(const std::vector<Page>& pages, size_t i, uint64_t bound) {
  uint64_t end = pages[i].address + kPage;
  for (size_t k = i + 1; k < pages.size() && pages[k].address == end && end < bound; ++k) {
    end += kPage;
  }
  return end;
}

std::string page_count(uint64_t start, uint64_t end) {
  uint64_t pages = (end - start) / kPage;
  return fmt::format("{} page{}", pages, pages == 1 ? "" : "s");
}

}  // namespace

MemoryDifference first_memory_difference(const std::vector<format::PageHash>& recorded,
                                         const std::vector<os::PageHash>& replayed) {
  constexpr uint64_t kNoBound = std::numeric_limits<uint64_t>::max();
  size_t i = 0;
  size_t j = 0;
  while (i < recorded.size() || j < replayed.size()) {
    if (j == replayed.size() || (i < recorded.size() && recorded[i].address < replayed[j].address)) {
      uint64_t bound = j < replayed.size() ? replayed[j].address : kNoBound;
      return {MemoryDifference::Kind::kMissing, recorded[i].address, run_end(recorded, i, bound)};
    }
    if (i == recorded.size() || replayed[j].address < recorded[i].address) {
      uint64_t bound = i < recorded.size() ? recorded[i].address : kNoBound;
      return {MemoryDifference::Kind::kExtra, replayed[j].address, run_end(replayed, j, bound)};
    }
    if (recorded[i].hash != replayed[j].hash) {
      return {MemoryDifference::Kind::kPage, recorded[i].address, recorded[i].address + kPage,
              recorded[i].hash};
    }
    ++i;
    ++j;
  }
  return {};
}

std::optional<ByteDifference> compare_bytes(std::string_view recorded, std::string_view replayed) {
  if (recorded.size() != replayed.size()) {
    return std::nullopt;
  }
  ByteDifference difference;
  size_t last_in_window = 0;
  for (size_t k = 0; k < recorded.size(); ++k) {
    if (recorded[k] == replayed[k]) {
      continue;
    }
    if (difference.differing_bytes == 0) {
      difference.first_offset = k;
    }
    ++difference.differing_bytes;
    if (k < difference.first_offset + kByteWindow) {
      last_in_window = k;
    }
  }
  if (difference.differing_bytes == 0) {
    return std::nullopt;
  }
  size_t length = last_in_window - difference.first_offset + 1;
  difference.recorded = std::string(recorded.substr(difference.first_offset, length));
  difference.replayed = std::string(replayed.substr(difference.first_offset, length));
  return difference;
}

std::string hex_bytes(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size() * 3);
  for (char byte : bytes) {
    if (!text.empty()) {
      text += ' ';
    }
    text += fmt::format("{:02x}", static_cast<unsigned char>(byte));
  }
  return text;
}

std::string describe_memory_finding(const MemoryFinding& finding, const AddressNamer& namer) {
  auto named = [&](uint64_t address) -> std::string {
    std::string name = namer.name_address ? namer.name_address(address) : "";
    return name.empty() ? "" : ", " + name;
  };
  auto range_name = [&](uint64_t start, uint64_t end) -> std::string {
    return namer.name_range ? namer.name_range(start, end) : "";
  };
  const MemoryDifference& d = finding.difference;
  switch (d.kind) {
    case MemoryDifference::Kind::kNone:
      return ", though every page has its recorded hash";
    case MemoryDifference::Kind::kMissing: {
      std::string there = range_name(d.start, d.end);
      return fmt::format(": first at {:#x}: the recording had non-zero writable memory at "
                         "{:#x}-{:#x} ({}) where replay has {}",
                         d.start, d.start, d.end, page_count(d.start, d.end),
                         there.empty() ? "nothing mapped" : "zeros: " + there);
    }
    case MemoryDifference::Kind::kExtra: {
      std::string there = range_name(d.start, d.end);
      return fmt::format(": first at {:#x}: replay has non-zero writable memory at {:#x}-{:#x} "
                         "({}{}) where the recording had zeros or nothing mapped",
                         d.start, d.start, d.end, page_count(d.start, d.end),
                         there.empty() ? "" : ": " + there);
    }
    case MemoryDifference::Kind::kPage:
      break;
  }
  if (finding.replayed_page.size() != kPage) {
    return fmt::format(": first in the page at {:#x}{}, which replay could not read", d.start,
                       named(d.start));
  }
  if (!finding.recorded_page) {
    // Nothing to compare with: show where replay's page holds something,
    // which is often the variable at fault.
    const std::string& page = finding.replayed_page;
    size_t first = page.find_first_not_of('\0');
    std::string head = fmt::format(
        ": first in the page at {:#x}{}, of which the trace holds no copy (the recorder copies "
        "no pages once its snapshot budget, --snapshot-budget-mib, is used up)",
        d.start, named(d.start));
    if (first == std::string::npos) {
      return head + "; replayed, the page is all zeros";
    }
    size_t nonzero = static_cast<size_t>(
        std::count_if(page.begin(), page.end(), [](char byte) { return byte != '\0'; }));
    size_t length = std::min(kByteWindow, page.size() - first);
    return head + fmt::format("; replayed, from {:#x}{}: {} ({} non-zero byte{} in the page)",
                              d.start + first, named(d.start + first),
                              hex_bytes(std::string_view(page).substr(first, length)), nonzero,
                              nonzero == 1 ? "" : "s");
  }
  std::optional<ByteDifference> bytes = compare_bytes(*finding.recorded_page, finding.replayed_page);
  if (!bytes) {
    return fmt::format(": first in the page at {:#x}{}, whose bytes read as recorded when read "
                       "again (they changed after hashing)",
                       d.start, named(d.start));
  }
  uint64_t address = d.start + bytes->first_offset;
  return fmt::format(": first at {:#x}{}: recorded {}, replayed {} ({} byte{} of the page differ{})",
                     address, named(address), hex_bytes(bytes->recorded),
                     hex_bytes(bytes->replayed), bytes->differing_bytes,
                     bytes->differing_bytes == 1 ? "" : "s",
                     bytes->differing_bytes == 1 ? "s" : "");
}

}  // namespace repro::replayer
