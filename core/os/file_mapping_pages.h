#pragma once
// Which pages of a file mapping can hold anything but zeros, found without
// reading them. A page that lies in a hole of the file reads as zeros, and
// reading it anyway costs as much as reading a written one; for shared
// memory (shmem, a memfd) it also makes the kernel allocate the page. A
// 1 GiB memfd or sparse file holding a few pages would be read, and
// allocated, whole by each memory hash. Instead the holes are asked for
// with SEEK_DATA/SEEK_HOLE on /proc/PID/map_files/START-END; a private
// mapping adds its populated pages (populated_pages.h), which may have been
// copied on write. The private anonymous counterpart is populated_pages.h.
//
// Stateless; thread-safe.

#include <sys/types.h>

#include <optional>
#include <vector>

#include "core/os/populated_pages.h"
#include "core/os/proc_maps.h"

namespace repro::os {

/// The ranges of `mapping` (a mapping with a file behind it: a file, a
/// memfd, shared anonymous memory) of process `pid` whose pages may hold
/// anything but zeros, in address order: the pages holding file data
/// (not in a hole), within the file's size, and for a private mapping also
/// its populated pages. Pages past the file's end are left out (they
/// cannot be read). nullopt where /proc cannot tell (no permission to open
/// map_files, not a regular file, no SEEK_DATA): then any page may.
/// Requires: all threads of `pid` are stopped.
std::optional<std::vector<PageRange>> file_mapping_data_ranges(pid_t pid, const Mapping& mapping);

}  // namespace repro::os
