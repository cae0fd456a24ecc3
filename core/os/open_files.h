#pragma once
// Who holds a file open: the processes with a descriptor for it, read from
// /proc/PID/fd and /proc/PID/fdinfo. The deadlock detector asks it whether
// every writer of a pipe is a recorded process. A scan of all processes:
// for rare questions, not for hot paths. Thread-safe (no state).

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "core/base/status.h"

namespace repro::os {

/// The identity of an open file: its device and inode (st_dev, st_ino).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool is_fifo = false;  // a pipe or a named FIFO
  bool operator==(const FileIdentity&) const = default;
};

/// The file behind descriptor `fd` of process `pid`. Errors: not_found
/// (no such descriptor), io_error.
Result<FileIdentity> descriptor_file(pid_t pid, int fd);

/// A descriptor of some process for a file, and how it was opened.
struct FileHolder {
  pid_t pid = 0;
  int fd = -1;
  bool can_read = false;
  bool can_write = false;
};

struct FileHolders {
  std::vector<FileHolder> holders;
  /// Some process's descriptors could not be read (another user's, with
  /// no right to look): the list may miss holders.
  bool incomplete = false;
};

/// Every descriptor, in every process on the machine, for `file`.
FileHolders holders_of(const FileIdentity& file);

}  // namespace repro::os
