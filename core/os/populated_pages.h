#pragma once
// Which pages of a private anonymous mapping hold anything. A page that is
// neither present nor swapped out was never written (or was given back
// with MADV_DONTNEED): it reads as zeros without being read. Programs
// reserve far more such memory than they touch (AddressSanitizer's shadow
// is terabytes; language runtimes reserve heaps of gigabytes), so the
// memory hash must find the touched pages without reading the rest.
//
// Two ways, the same answer:
//   - the PAGEMAP_SCAN ioctl (Linux 6.7), which returns ranges: the cost
//     follows what is populated, not the mapping's size;
//   - reading /proc/PID/pagemap, 8 bytes per page of the range: where the
//     ioctl is missing, or with REPRO_PAGEMAP_SCAN=0 in the environment
//     (which tests use to check this path on any host).
//
// Stateless; thread-safe.

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "core/base/status.h"

namespace repro::os {

struct PageRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  bool operator==(const PageRange&) const = default;
};

/// The ranges of [start, end) (page-aligned) of `pid` whose pages are
/// present or swapped out, in address order and merged where adjacent.
/// Pages that map the shared zero page may be left out: they read as
/// zeros. Only meaningful for private anonymous memory (a file's page may
/// hold data without being mapped yet). Errors: io_error (no such
/// process, or /proc/PID/pagemap not readable).
Result<std::vector<PageRange>> populated_ranges(pid_t pid, uint64_t start, uint64_t end);

/// The same, read from /proc/PID/pagemap whatever the kernel offers.
Result<std::vector<PageRange>> populated_ranges_from_pagemap(pid_t pid, uint64_t start,
                                                             uint64_t end);

}  // namespace repro::os
