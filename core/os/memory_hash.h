#pragma once
// A hash of a process's writable memory, used to name a preemption point
// without hardware counters: between two events only the scheduled thread
// runs, so (registers, writable memory) at the preemption identifies the
// point; replay stops at the first state that matches both.
//
// The hash is built from one hash per page that is not all zeros, which
// the trace keeps too (docs/trace-format.md, "preempt pages"): when
// replay's memory differs, comparing the page lists says where, at the
// cost of one 8-byte hash per such page, computed in the same pass over
// the memory. Pages of zeros are left out, so memory a program reserved
// but never touched (a sanitizer's shadow, a runtime's heap reservation)
// costs neither a read nor a hash (populated_pages.h).

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/base/status.h"

namespace repro::os {

/// repro runs on x86-64 only, where pages are 4 KiB; the trace format
/// hashes and copies memory in pages of this size.
constexpr uint64_t kPageBytes = 4096;

/// The x86-64 ABI lets a function use this much below its stack pointer:
/// live memory, though below rsp.
inline constexpr uint64_t kRedZoneBytes = 128;

/// The hash of one page of writable memory (XXH3-64 of its kPageBytes
/// bytes). The recorder copies it into a format::PageHash (core/os does not
/// depend on core/format).
struct PageHash {
  uint64_t address = 0;
  uint64_t hash = 0;
  bool operator==(const PageHash&) const = default;
};

/// A process's writable memory at one moment, as hash_writable_memory()
/// saw it.
struct WritableMemory {
  uint64_t hash = 0;            // memory_hash_of(pages)
  std::vector<PageHash> pages;  // every readable page not all zeros, in address order
};

/// Called with each page hash_writable_memory() hashes, in address order;
/// `bytes` (kPageBytes of them) are valid only during the call. Lets the
/// recorder copy the pages it wants without reading them a second time.
using PageVisitor = std::function<void(const PageHash& page, const char* bytes)>;

/// Hashes every page of every writable mapping of `pid`, in address order
/// (in private anonymous memory, only pages that are populated: the others
/// are zeros),
/// leaving out `[vvar]`, `[vsyscall]` and a mapping that starts at
/// `skipped_mapping` (replay's own trampoline page; 0 for none). The dead
/// part of each thread's stack is hashed, and visited, as zeros: below
/// each of `stack_pointers` (the process's threads' rsp) less the 128-byte
/// red zone, in a stack mapping ([stack], or anonymous memory above a
/// guard page). Calls that returned leave bytes there that differ between
/// runs of the same program (XSAVEC in ld.so's lazy-binding resolver).
/// Record and replay must pass the same stack pointers: those of the
/// threads as they stand (at their syscall's entry for a thread inside one). A page
/// that cannot be read (a file mapping beyond the file's end) is left out
/// with the rest of its mapping. Calls `visit` (if set) for each page
/// read. Returns the pages that are not all zeros and their
/// memory_hash_of(); io_error if /proc/PID/maps or pagemap cannot be read.
/// Requires: all threads of `pid` are stopped.
Result<WritableMemory> hash_writable_memory(pid_t pid, const std::vector<uint64_t>& stack_pointers,
                                            uint64_t skipped_mapping = 0,
                                            const PageVisitor& visit = nullptr);

/// XXH3-64 over the start address of each run of contiguous pages in
/// `pages` (in address order) and the page hashes of that run, each as 8
/// little-endian bytes. Pages of adjacent mappings form one run: replay may
/// map a file as anonymous memory, which the kernel may merge with a
/// neighbour, so mapping boundaries must not count.
uint64_t memory_hash_of(const std::vector<PageHash>& pages);

/// XXH3-64 of kPageBytes bytes at `bytes`.
uint64_t page_hash(const void* bytes);

/// page_hash() of a page of zeros: such a page needs no copy to be known.
uint64_t zero_page_hash();

/// XXH3-64 of a stopped thread's FPU/SSE registers: the legacy FXSAVE part
/// of the XSAVE area (x87, MXCSR, XMM0-15, 416 bytes); the rest holds
/// bookkeeping that need not match across runs.
Result<uint64_t> hash_extended_registers(pid_t tid);

}  // namespace repro::os
