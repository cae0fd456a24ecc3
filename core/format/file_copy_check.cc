#include "core/format/file_copy_check.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "core/format/content_id.h"
#include "core/format/file_util.h"
#include "core/format/sparse_copy.h"
#include "core/format/trace_format.h"

namespace repro::format {
namespace {

// Bytes read per call: as the writer copies (large enough that a syscall
// per piece is cheap, small enough to stay in cache while hashed).
constexpr size_t kReadChunkBytes = 1024 * 1024;

Result<std::string> whole_content_id(int fd, const std::string& path) {
  ContentHasher hasher;
  std::vector<char> buffer(kReadChunkBytes);
  uint64_t offset = 0;
  while (true) {
    ssize_t n = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return Status::from_errno(errno, fmt::format("reading '{}'", path));
    }
    if (n == 0) {
      return hasher.content_id();
    }
    hasher.update(buffer.data(), static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
}

}  // namespace

Status check_file_copy(const std::string& path, const std::string& content_id) {
  uint64_t size_bytes = 0;
  REPRO_ASSIGN_OR_RETURN(ScopedFd fd,
                         open_regular_file(path, StatusCode::kCorruption, &size_bytes));
  if (size_bytes > kWholeFileLimitBytes) {
    // Most likely a sparse copy of a mapped range: its id reads no holes.
    REPRO_ASSIGN_OR_RETURN(std::string sparse_id,
                           sparse_copy_content_id(fd.get(), path, size_bytes));
    if (sparse_id == content_id) {
      return Status::ok();
    }
  }
  REPRO_ASSIGN_OR_RETURN(std::string actual, whole_content_id(fd.get(), path));
  if (actual == content_id) {
    return Status::ok();
  }
  return Status::error(
      StatusCode::kCorruption,
      fmt::format("'{}': its {} bytes hash to {}, not to its name", path, size_bytes, actual));
}

}  // namespace repro::format
