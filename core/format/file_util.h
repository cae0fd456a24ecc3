#pragma once
// Small POSIX file helpers for the trace writer and reader. Every function
// returns ok or an io_error whose message names the path and ends with
// strerror(errno); none throws. Thread-safe (no shared state).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/scoped_fd.h"
#include "core/base/status.h"

namespace repro::format {

/// "dir/name" (no separator doubling when dir ends in '/').
std::string join_path(const std::string& dir, const std::string& name);

/// Writes all `length` bytes with as few write() calls as the kernel allows
/// (one, normally), retrying on EINTR and short writes. `what` names the
/// file in the error message.
Status write_all(int fd, const void* bytes, size_t length, const std::string& what);

/// Writes `content` to DIR/.tmp-NAME-PID, fsyncs it, then renames it to
/// DIR/NAME, so readers see either the old file or the whole new one.
/// The file gets permission bits `mode`.
Status write_file_atomic(const std::string& dir, const std::string& name, std::string_view content,
                         unsigned mode = 0600);

/// Opens `path` read-only and checks it is a regular file; *size_bytes gets
/// its size. Errors: not_found if absent, `not_regular` if it is not a
/// regular file, io_error otherwise.
Result<ScopedFd> open_regular_file(const std::string& path, StatusCode not_regular,
                                   uint64_t* size_bytes);

/// Reads a whole file of at most `max_bytes`. Errors: not_found if absent,
/// corruption if larger than max_bytes, io_error otherwise.
Result<std::string> read_small_file(const std::string& path, size_t max_bytes);

/// fsyncs a directory so renames and new entries in it are durable.
Status fsync_directory(const std::string& path);

/// Whether PATH exists (any file type; false on any error).
bool path_exists(const std::string& path);

}  // namespace repro::format
