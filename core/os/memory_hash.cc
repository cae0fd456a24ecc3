#include "core/os/memory_hash.h"

#include "core/os/file_mapping_pages.h"
#include "core/os/populated_pages.h"
#include "core/os/proc_maps.h"
#include "core/os/tracee.h"

#include <fmt/core.h>
#include <sys/uio.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <memory>
#include <optional>
#include <vector>

namespace repro::os {
namespace {

// Hashes the pages of [start, end) of `pid` that read, up to the first
// that does not, as zeros below `dead_end`; visits each and appends those
// that are not all zeros to `pages`.
void hash_range(pid_t pid, uint64_t start, uint64_t end, uint64_t dead_end, char* buffer,
                size_t buffer_bytes, const PageVisitor& visit, std::vector<PageHash>& pages) {
  const uint64_t zero_hash = zero_page_hash();
  for (uint64_t at = start; at < end;) {
    size_t n = std::min<uint64_t>(buffer_bytes, end - at);
    iovec local{buffer, n};
    iovec remote{reinterpret_cast<void*>(at), n};
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    // A read stops at the first page it cannot read; the next read, from
    // there, fails. Mappings are page-aligned, so whole pages came in.
    size_t whole_pages = got > 0 ? static_cast<size_t>(got) / kPageBytes : 0;
    if (whole_pages == 0) {
      return;  // unreadable tail (e.g. beyond a file's end): same on both sides
    }
    if (dead_end > at) {
      size_t dead = std::min<uint64_t>(dead_end - at, whole_pages * kPageBytes);
      std::memset(buffer, 0, dead);
    }
    for (size_t i = 0; i < whole_pages; ++i) {
      const char* bytes = buffer + i * kPageBytes;
      PageHash page{at + i * kPageBytes, page_hash(bytes)};
      if (visit) {
        visit(page, bytes);
      }
      if (page.hash != zero_hash) {
        pages.push_back(page);
      }
    }
    at += whole_pages * kPageBytes;
  }
}

}  // namespace

Result<WritableMemory> hash_writable_memory(pid_t pid, const std::vector<uint64_t>& stack_pointers,
                                            uint64_t skipped_mapping, const PageVisitor& visit) {
  REPRO_ASSIGN_OR_RETURN(std::vector<Mapping> mappings, read_mappings(pid));
  WritableMemory memory;
  // Not zeroed (a memset of it would cost as much as a small program's
  // hash): every byte hashed was read first. 1 MiB: large enough that the
  // syscall per read is lost in the hashing, small enough to stay in L2.
  constexpr size_t kBufferBytes = 1 << 20;
  static_assert(kBufferBytes % kPageBytes == 0);
  auto buffer = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  for (size_t m = 0; m < mappings.size(); ++m) {
    const Mapping& mapping = mappings[m];
    if (!mapping.writable() || mapping.start == skipped_mapping ||
        mapping.name.starts_with("[vvar") || mapping.name == "[vsyscall]") {
      continue;
    }
    const uint64_t start = mapping.start;
    const uint64_t end = mapping.end;
    // A thread's stack: the main one, or an anonymous mapping right above
    // a guard page (how pthreads allocates them).
    bool after_guard = m > 0 && mappings[m - 1].end == start && mappings[m - 1].perms == "---p";
    bool is_stack = mapping.name == "[stack]" || (after_guard && mapping.name.empty());
    // Below its stack pointer and red zone a stack is dead: what lies
    // there was left by calls that returned, and some of it differs from
    // run to run for the same program (ld.so's lazy-binding resolver saves
    // registers with XSAVEC, whose output depends on the processor's
    // XINUSE state, which depends on the kernel's context switches). It
    // is hashed as zeros.
    uint64_t dead_end = start;
    for (uint64_t sp : stack_pointers) {
      if (is_stack && sp >= start + kRedZoneBytes && sp <= end) {
        dead_end = dead_end == start ? sp - kRedZoneBytes : std::min(dead_end, sp - kRedZoneBytes);
      }
    }
    if (mapping.inode == 0 && mapping.is_private() && !mapping.name.starts_with("/")) {
      // Private anonymous memory: only its populated pages can hold
      // anything but zeros.
      REPRO_ASSIGN_OR_RETURN(std::vector<PageRange> ranges, populated_ranges(pid, start, end));
      for (const PageRange& range : ranges) {
        hash_range(pid, range.start, range.end, dead_end, buffer.get(), kBufferBytes, visit,
                   memory.pages);
      }
    } else if (mapping.inode != 0 && end - start >= kBufferBytes) {
      // A file, memfd or shared memory: only pages outside the file's
      // holes (and, if private, pages copied on write) can hold anything
      // but zeros. Finding them costs a few syscalls, more than reading a
      // mapping smaller than one read.
      std::optional<std::vector<PageRange>> ranges = file_mapping_data_ranges(pid, mapping);
      if (!ranges) {
        ranges = std::vector<PageRange>{{start, end}};
      }
      for (const PageRange& range : *ranges) {
        hash_range(pid, range.start, range.end, dead_end, buffer.get(), kBufferBytes, visit,
                   memory.pages);
      }
    } else {
      hash_range(pid, start, end, dead_end, buffer.get(), kBufferBytes, visit, memory.pages);
    }
  }
  memory.hash = memory_hash_of(memory.pages);
  return memory;
}

uint64_t memory_hash_of(const std::vector<PageHash>& pages) {
  // One buffer and one XXH3 call: cheaper than a streaming update per
  // 8-byte word, and the words are what the definition hashes.
  std::vector<uint64_t> words;
  words.reserve(pages.size() + pages.size() / 8 + 1);
  uint64_t next = 0;  // the address that continues the current run
  for (const PageHash& page : pages) {
    if (words.empty() || page.address != next) {
      words.push_back(page.address);
    }
    words.push_back(page.hash);
    next = page.address + kPageBytes;
  }
  static_assert(std::endian::native == std::endian::little, "the hash is of little-endian words");
  return XXH3_64bits(words.data(), words.size() * sizeof(uint64_t));
}

uint64_t page_hash(const void* bytes) { return XXH3_64bits(bytes, kPageBytes); }

uint64_t zero_page_hash() {
  static const uint64_t hash = [] {
    static const char zeros[kPageBytes] = {};
    return page_hash(zeros);
  }();
  return hash;
}

Result<uint64_t> hash_extended_registers(pid_t tid) {
  constexpr size_t kFxsaveBytes = 416;
  REPRO_ASSIGN_OR_RETURN(std::string xstate, get_extended_registers(tid));
  return XXH3_64bits(xstate.data(), std::min(xstate.size(), kFxsaveBytes));
}

}  // namespace repro::os
