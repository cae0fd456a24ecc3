#include "core/format/file_copy_reads.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "core/format/content_id.h"
#include "core/format/file_copy_check.h"
#include "core/format/file_util.h"

namespace repro::format {

Result<int> FileCopyReads::open_copy(const std::string& content_id) {
  auto found = copies_.find(content_id);
  if (found != copies_.end()) {
    return found->second.get();
  }
  if (!is_valid_content_id(content_id)) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("a read refers to '{}', which is not a content id", content_id));
  }
  std::string path = join_path(files_dir_, content_id);
  Status intact = check_file_copy(path, content_id);
  if (intact.code() == StatusCode::kNotFound) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("a read refers to the stored file {}, which is missing from {}",
                                     content_id, files_dir_));
  }
  REPRO_RETURN_IF_ERROR(intact);
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::from_errno(errno, fmt::format("opening the stored file '{}'", path));
  }
  int raw = fd.get();
  copies_.emplace(content_id, std::move(fd));
  return raw;
}

Status FileCopyReads::fill(Event* event) {
  if (event->kind != EventKind::kSyscall || !(event->syscall_flags & kSyscallReadsFileCopy)) {
    return Status::ok();
  }
  auto fd = open_copy(event->content_id);
  REPRO_RETURN_IF_ERROR(fd.status());
  uint64_t offset = event->file_offset;
  for (MemoryWrite& write : event->writes) {
    size_t done = 0;
    while (done < write.bytes.size()) {
      ssize_t n = ::pread(*fd, write.bytes.data() + done, write.bytes.size() - done,
                          static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        return Status::from_errno(errno, fmt::format("reading the stored file {}", event->content_id));
      }
      if (n == 0) {
        return Status::error(
            StatusCode::kCorruption,
            fmt::format("a read refers to bytes {}..{} of the stored file {}, which ends before",
                        offset, offset + write.bytes.size(), event->content_id));
      }
      done += static_cast<size_t>(n);
    }
    offset += write.bytes.size();
  }
  return Status::ok();
}

}  // namespace repro::format
