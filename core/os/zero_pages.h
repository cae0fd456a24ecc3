#pragma once
// Pages of a mapping known to hold zeros without reading them. Reading a
// page a program never touched costs as much as reading a written one, and
// for shared memory (shmem, a memfd) makes the kernel allocate it; a 1 GiB
// mapping holding a few bytes would be read, and allocated, whole by each
// memory hash. Instead:
//   - a private anonymous page that is neither present nor swapped out
//     (/proc/PID/pagemap) was never written: zeros;
//   - a page of a file mapping that lies in a hole of the file
//     (SEEK_DATA/SEEK_HOLE on /proc/PID/map_files/...) holds zeros, unless
//     the mapping is private and the page was copied on write (present as
//     anonymous memory, or swapped out).
// Where /proc cannot tell (no permission, no SEEK_DATA, a device), no page
// is known to be zero and callers read them all: the answer only saves
// reads, it never changes what a page holds.
//
// Stateless; thread-safe.

#include <sys/types.h>

#include <vector>

#include "core/os/proc_maps.h"

namespace repro::os {

/// For each page of `mapping` of process `pid`, whether it is known to hold
/// zeros; empty if nothing is known. Pages past the end of a mapped file
/// are never known to be zero (reading them fails, which callers rely on).
/// Requires: all threads of `pid` are stopped.
std::vector<bool> known_zero_pages(pid_t pid, const Mapping& mapping);

}  // namespace repro::os
