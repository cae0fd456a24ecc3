#include "core/os/memory_hash.h"

#include "core/os/proc_maps.h"
#include "core/os/file_mapping_pages.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <string>
#include <vector>

using repro::os::kPageBytes;
using repro::os::memory_hash_of;
using repro::os::PageHash;

namespace {

uint64_t xxh3_of_words(const std::vector<uint64_t>& words) {
  return XXH3_64bits(words.data(), words.size() * sizeof(uint64_t));
}

}  // namespace

TEST_CASE("memory hash is XXH3-64 of each run's start address and its page hashes",
          "[os][memory_hash]") {
  // Two runs: 0x1000-0x3000 and 0x7000-0x8000.
  std::vector<PageHash> pages = {{0x1000, 11}, {0x2000, 22}, {0x7000, 77}};
  CHECK(memory_hash_of(pages) == xxh3_of_words({0x1000, 11, 22, 0x7000, 77}));
}

TEST_CASE("memory hash does not see where one mapping ends and the next begins",
          "[os][memory_hash]") {
  // The page list carries no mapping boundaries, so adjacent mappings
  // (merged or not by the kernel) hash as one run.
  std::vector<PageHash> pages = {{0x1000, 11}, {0x2000, 22}};
  CHECK(memory_hash_of(pages) == xxh3_of_words({0x1000, 11, 22}));
}

TEST_CASE("memory hash changes with a page's content and with a gap between pages",
          "[os][memory_hash]") {
  std::vector<PageHash> pages = {{0x1000, 11}, {0x2000, 22}};
  std::vector<PageHash> other_content = {{0x1000, 11}, {0x2000, 23}};
  std::vector<PageHash> with_gap = {{0x1000, 11}, {0x3000, 22}};
  CHECK(memory_hash_of(pages) != memory_hash_of(other_content));
  CHECK(memory_hash_of(pages) != memory_hash_of(with_gap));
}

TEST_CASE("memory hash of no pages is the hash of nothing", "[os][memory_hash]") {
  CHECK(memory_hash_of({}) == XXH3_64bits(nullptr, 0));
}

TEST_CASE("page hash is XXH3-64 of a whole page; the zero page's is that of zeros",
          "[os][memory_hash]") {
  std::string page(kPageBytes, '\0');
  CHECK(repro::os::zero_page_hash() == XXH3_64bits(page.data(), page.size()));
  page[100] = 1;
  CHECK(repro::os::page_hash(page.data()) == XXH3_64bits(page.data(), page.size()));
  CHECK(repro::os::page_hash(page.data()) != repro::os::zero_page_hash());
}

// The tests below hash this process's whole writable memory, which under
// AddressSanitizer includes terabytes of reserved shadow: only its
// populated pages are read (populated_pages.h), so the sanitizer build
// runs them too.

TEST_CASE("hashing this process's memory lists its pages in order and hashes that list",
          "[os][memory_hash]") {
  // Reads our own memory (no fork, no ptrace): the pages and the hash come
  // from the same pass, whatever changes while it runs.
  std::vector<PageHash> visited;
  auto memory = repro::os::hash_writable_memory(getpid(), {}, 0, [&](const PageHash& page,
                                                                  const char* bytes) {
    CHECK(page.hash == repro::os::page_hash(bytes));
    visited.push_back(page);
  });
  REQUIRE(memory.is_ok());
  REQUIRE(!memory->pages.empty());
  // Every page read is visited; the list leaves out those of zeros.
  std::erase_if(visited, [](const PageHash& page) {
    return page.hash == repro::os::zero_page_hash();
  });
  CHECK(memory->pages == visited);
  CHECK(memory->hash == memory_hash_of(memory->pages));
  for (size_t i = 1; i < memory->pages.size(); ++i) {
    CHECK(memory->pages[i].address % kPageBytes == 0);
    CHECK(memory->pages[i].address > memory->pages[i - 1].address);
  }
}

TEST_CASE("a stack's memory below a thread's stack pointer and red zone hashes as zeros",
          "[os][memory_hash]") {
  // A stack as pthreads makes one: a guard page, then the stack itself.
  constexpr size_t kStackPages = 2;
  auto* base = static_cast<char*>(mmap(nullptr, (kStackPages + 1) * kPageBytes,
                                       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(base != MAP_FAILED);
  REQUIRE(mprotect(base, kPageBytes, PROT_NONE) == 0);
  char* stack = base + kPageBytes;
  std::memset(stack, 0x5a, kStackPages * kPageBytes);  // "left by calls that returned"
  const uint64_t page = reinterpret_cast<uint64_t>(stack);
  const uint64_t sp = page + 3000;  // live from sp - 128 on

  auto hash_of_page = [&](const std::vector<uint64_t>& stack_pointers) {
    auto memory = repro::os::hash_writable_memory(getpid(), stack_pointers);
    REQUIRE(memory.is_ok());
    for (const PageHash& hashed : memory->pages) {
      if (hashed.address == page) {
        return hashed.hash;
      }
    }
    FAIL("the stack page was not hashed");
    return uint64_t{0};
  };
  std::string expected(stack, kPageBytes);
  CHECK(hash_of_page({}) == repro::os::page_hash(expected.data()));
  std::memset(expected.data(), 0, 3000 - 128);
  CHECK(hash_of_page({sp}) == repro::os::page_hash(expected.data()));
  munmap(base, (kStackPages + 1) * kPageBytes);
}

TEST_CASE("a file mapping's pages in holes of the file are left out without being read",
          "[os][memory_hash]") {
  constexpr size_t kBytes = size_t{256} << 20;
  // Shared memory of a memfd: one page written. Reading the others would
  // allocate them.
  int fd = static_cast<int>(syscall(SYS_memfd_create, "holes-test", 1 /* MFD_CLOEXEC */));
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, kBytes) == 0);
  auto* shared =
      static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  REQUIRE(shared != MAP_FAILED);
  shared[kBytes / 2] = 3;
  // A private mapping of the memfd with a page copied on write inside a
  // hole of the file: not zero, though the file is.
  auto* copied =
      static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  REQUIRE(copied != MAP_FAILED);
  copied[kPageBytes] = 4;

  auto mappings = repro::os::read_mappings(getpid());
  REQUIRE(mappings.is_ok());
  for (const repro::os::Mapping& m : *mappings) {
    if (m.start == reinterpret_cast<uint64_t>(copied)) {
      auto ranges = repro::os::file_mapping_data_ranges(getpid(), m);
      REQUIRE(ranges.has_value());
      const uint64_t base = m.start;
      auto covered = [&](uint64_t address) {
        for (const repro::os::PageRange& r : *ranges) {
          if (address >= r.start && address < r.end) {
            return true;
          }
        }
        return false;
      };
      CHECK_FALSE(covered(base));                 // a hole
      CHECK(covered(base + kPageBytes));          // copied on write
      CHECK(covered(base + kBytes / 2));          // data in the file
      CHECK_FALSE(covered(base + kBytes / 4));    // a hole
    }
  }

  auto memory = repro::os::hash_writable_memory(getpid(), {});
  REQUIRE(memory.is_ok());
  auto hashed = [&](const char* address) {
    for (const PageHash& page : memory->pages) {
      if (page.address == reinterpret_cast<uint64_t>(address)) {
        return true;
      }
    }
    return false;
  };
  CHECK(hashed(shared + kBytes / 2));
  CHECK(hashed(copied + kPageBytes));
  CHECK_FALSE(hashed(shared));  // zeros: left out
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  CHECK(st.st_blocks * 512 < 16 * 1024 * 1024);  // the memfd was not filled in
  munmap(shared, kBytes);
  munmap(copied, kBytes);
  close(fd);
}
