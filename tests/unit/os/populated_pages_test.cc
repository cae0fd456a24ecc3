#include "core/os/populated_pages.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "core/os/memory_hash.h"

using repro::os::kPageBytes;
using repro::os::PageRange;
using repro::os::populated_ranges;
using repro::os::populated_ranges_from_pagemap;

namespace {

// A private anonymous reservation of `pages` pages, unmapped at the end.
struct Reservation {
  explicit Reservation(size_t pages) : bytes(pages * kPageBytes) {
    base = static_cast<char*>(
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0));
  }
  ~Reservation() { munmap(base, bytes); }
  uint64_t at(size_t page) const { return reinterpret_cast<uint64_t>(base) + page * kPageBytes; }
  char* base;
  size_t bytes;
};

}  // namespace

TEST_CASE("populated ranges: only the pages written, merged where adjacent", "[os][pagemap]") {
  // 64 GiB reserved, three pages touched: the scan must not cost the size.
  Reservation memory(size_t{16} << 20);
  REQUIRE(memory.base != MAP_FAILED);
  memory.base[5 * kPageBytes] = 1;
  memory.base[6 * kPageBytes] = 2;
  memory.base[(size_t{16} << 20) * kPageBytes - 1] = 3;
  auto ranges = populated_ranges(getpid(), memory.at(0), memory.at(size_t{16} << 20));
  REQUIRE(ranges.is_ok());
  CHECK(*ranges == std::vector<PageRange>{{memory.at(5), memory.at(7)},
                                          {memory.at((size_t{16} << 20) - 1),
                                           memory.at(size_t{16} << 20)}});
  // Given back with MADV_DONTNEED: zeros again, and no longer populated.
  REQUIRE(madvise(memory.base + 5 * kPageBytes, kPageBytes, MADV_DONTNEED) == 0);
  ranges = populated_ranges(getpid(), memory.at(0), memory.at(8));
  REQUIRE(ranges.is_ok());
  CHECK(*ranges == std::vector<PageRange>{{memory.at(6), memory.at(7)}});
}

TEST_CASE("populated ranges: the pagemap fallback gives the same answer", "[os][pagemap]") {
  Reservation memory(4096);
  REQUIRE(memory.base != MAP_FAILED);
  for (size_t page : {0, 1, 2, 100, 4095}) {
    memory.base[page * kPageBytes] = 7;
  }
  auto scanned = populated_ranges(getpid(), memory.at(0), memory.at(4096));
  auto read = populated_ranges_from_pagemap(getpid(), memory.at(0), memory.at(4096));
  REQUIRE(scanned.is_ok());
  REQUIRE(read.is_ok());
  CHECK(*read == std::vector<PageRange>{{memory.at(0), memory.at(3)},
                                        {memory.at(100), memory.at(101)},
                                        {memory.at(4095), memory.at(4096)}});
  CHECK(*scanned == *read);
}
