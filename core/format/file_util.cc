#include "core/format/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/base/scoped_fd.h"
#include "core/format/trace_format.h"

namespace repro::format {

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) {
    return name;
  }
  if (dir.back() == '/') {
    return dir + name;
  }
  return dir + "/" + name;
}

Status write_all(int fd, const void* bytes, size_t length, const std::string& what) {
  const char* p = static_cast<const char*>(bytes);
  while (length > 0) {
    ssize_t n = ::write(fd, p, length);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return Status::from_errno(errno, fmt::format("writing {} bytes to '{}'", length, what));
    }
    if (n == 0) {
      return Status::error(StatusCode::kIoError,
                           fmt::format("writing {} bytes to '{}': write returned 0", length, what));
    }
    p += n;
    length -= static_cast<size_t>(n);
  }
  return Status::ok();
}

Status write_file_atomic(const std::string& dir, const std::string& name, std::string_view content,
                         unsigned mode) {
  std::string final_path = join_path(dir, name);
  std::string temp_path = join_path(dir, fmt::format("{}{}-{}", kTempFilePrefix, name, ::getpid()));
  ScopedFd fd(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                     static_cast<mode_t>(mode)));
  if (!fd.valid()) {
    return Status::from_errno(errno, fmt::format("creating '{}'", temp_path));
  }
  Status status = write_all(fd.get(), content.data(), content.size(), temp_path);
  if (status.is_ok() && ::fsync(fd.get()) != 0) {
    status = Status::from_errno(errno, fmt::format("fsync of '{}'", temp_path));
  }
  if (status.is_ok() && ::close(fd.release()) != 0) {
    status = Status::from_errno(errno, fmt::format("closing '{}'", temp_path));
  }
  if (status.is_ok() && ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    status = Status::from_errno(errno, fmt::format("renaming '{}' to '{}'", temp_path, final_path));
  }
  if (!status.is_ok()) {
    ::unlink(temp_path.c_str());
  }
  return status;
}

Result<ScopedFd> open_regular_file(const std::string& path, StatusCode not_regular,
                                   uint64_t* size_bytes) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    if (err == ENOENT) {
      return Status::error(StatusCode::kNotFound, fmt::format("'{}' does not exist", path));
    }
    return Status::from_errno(err, fmt::format("opening '{}'", path));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return Status::from_errno(errno, fmt::format("stat of '{}'", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::error(not_regular, fmt::format("'{}' is not a regular file", path));
  }
  *size_bytes = static_cast<uint64_t>(st.st_size);
  return fd;
}

Result<std::string> read_small_file(const std::string& path, size_t max_bytes) {
  uint64_t size_bytes = 0;
  REPRO_ASSIGN_OR_RETURN(ScopedFd fd, open_regular_file(path, StatusCode::kCorruption, &size_bytes));
  if (size_bytes > max_bytes) {
    return Status::error(
        StatusCode::kCorruption,
        fmt::format("'{}' is {} bytes, more than the {} allowed", path, size_bytes, max_bytes));
  }
  std::string content;
  content.resize(static_cast<size_t>(size_bytes));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::read(fd.get(), content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return Status::from_errno(errno, fmt::format("reading '{}'", path));
    }
    if (n == 0) {
      break;
    }
    done += static_cast<size_t>(n);
  }
  content.resize(done);
  return content;
}

Status fsync_directory(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::from_errno(errno, fmt::format("opening directory '{}'", path));
  }
  if (::fsync(fd.get()) != 0) {
    return Status::from_errno(errno, fmt::format("fsync of directory '{}'", path));
  }
  return Status::ok();
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace repro::format
