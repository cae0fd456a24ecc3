#include "tracer/file_read_references.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "core/format/file_util.h"
#include "core/format/trace_format.h"

namespace repro::tracer {
namespace {

// Files bigger than this are not copied for their reads: a program reading
// a little of a huge file would pay for all of it.
constexpr int64_t kMaxReferencedFileBytes = 256ll * 1024 * 1024;
// New copies of one file (it changed between reads) before its reads go
// back to storing bytes: a log the program appends to and reads back would
// otherwise be copied whole on every read.
constexpr int kMaxCopiesPerFile = 3;

bool is_file_read(int number) {
  return number == SYS_read || number == SYS_pread64 || number == SYS_readv ||
         number == SYS_preadv || number == SYS_preadv2;
}


// Where in the file the bytes of the read in `event` came from; a read at
// the current position ends at `position_after`, or where fdinfo says the
// descriptor stands now.
std::optional<uint64_t> read_offset(pid_t tid, const format::Event& event,
                                    std::optional<uint64_t> position_after) {
  int64_t explicit_offset = static_cast<int64_t>(event.args[3]);
  switch (event.syscall_number) {
    case SYS_pread64:
    case SYS_preadv:
      return event.args[3];
    case SYS_preadv2:
      if (explicit_offset != -1) {
        return event.args[3];
      }
      break;
    default:
      break;
  }
  // read, readv, preadv2 at the current position: the read moved it.
  std::optional<uint64_t> after =
      position_after ? position_after : file_position(tid, static_cast<int>(event.args[0]));
  if (!after || *after < static_cast<uint64_t>(event.result)) {
    return std::nullopt;
  }
  return *after - static_cast<uint64_t>(event.result);
}

int64_t nanoseconds(const struct timespec& t) { return t.tv_sec * 1'000'000'000ll + t.tv_nsec; }

}  // namespace

std::optional<uint64_t> file_position(pid_t tid, int fd) {
  std::string path = fmt::format("/proc/{}/fdinfo/{}", tid, fd);
  FILE* info = std::fopen(path.c_str(), "re");
  if (info == nullptr) {
    return std::nullopt;
  }
  std::optional<uint64_t> position;
  unsigned long long value = 0;
  if (std::fscanf(info, "pos: %llu", &value) == 1) {
    position = value;
  }
  std::fclose(info);
  return position;
}

namespace {

// Whether `st` has time stamps: the library's statx asks for none
// (preload/fastpath.c), and the kernel may then leave them zero.
bool has_times(const struct stat& st) {
  return nanoseconds(st.st_mtim) != 0 || nanoseconds(st.st_ctim) != 0;
}

}  // namespace

FileReadReferences::Copy* FileReadReferences::current_copy(const std::string& fd_path,
                                                           const struct stat& st, bool stale) {
  Copy& copy = copies_[{st.st_dev, st.st_ino}];
  bool times_known = has_times(st) && (copy.mtime_ns != 0 || copy.ctime_ns != 0);
  bool same_times = !times_known || (copy.mtime_ns == nanoseconds(st.st_mtim) &&
                                     copy.ctime_ns == nanoseconds(st.st_ctim));
  if (!stale && copy.fd.valid() && copy.size == st.st_size && same_times) {
    return &copy;
  }
  if (copy.copies_made >= kMaxCopiesPerFile) {
    return nullptr;
  }
  ++copy.copies_made;
  copy.fd.reset();
  auto stored = writer_->store_file(fd_path);
  if (!stored.is_ok()) {
    return nullptr;  // gone, unreadable: the read keeps its bytes
  }
  std::string path = format::join_path(format::join_path(writer_->dir(), format::kFilesDirName), *stored);
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return nullptr;
  }
  copy.size = st.st_size;
  copy.mtime_ns = nanoseconds(st.st_mtim);
  copy.ctime_ns = nanoseconds(st.st_ctim);
  copy.content_id = *stored;
  copy.fd = std::move(fd);
  return &copy;
}

bool FileReadReferences::matches(const Copy& copy, uint64_t offset, const format::Event& event) {
  for (const format::MemoryWrite& write : event.writes) {
    compare_buffer_.resize(write.bytes.size());
    size_t done = 0;
    while (done < write.bytes.size()) {
      ssize_t n = ::pread(copy.fd.get(), compare_buffer_.data() + done, write.bytes.size() - done,
                          static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return false;
      }
      done += static_cast<size_t>(n);
    }
    if (compare_buffer_ != write.bytes) {
      return false;
    }
    offset += write.bytes.size();
  }
  return true;
}

bool FileReadReferences::reference(pid_t tid, format::Event* event,
                                   std::optional<uint64_t> position_after,
                                   const struct stat* file, const std::string* source_path) {
  if (!is_file_read(event->syscall_number) || event->result < kMinReferencedReadBytes ||
      event->result > static_cast<int64_t>(format::kMaxFileCopyReadBytes) ||
      event->writes.empty() || event->syscall_flags != 0) {
    return false;
  }
  uint64_t total = 0;
  for (const format::MemoryWrite& write : event->writes) {
    total += write.bytes.size();
  }
  if (total != static_cast<uint64_t>(event->result)) {
    return false;
  }
  std::string fd_path = fmt::format("/proc/{}/fd/{}", tid, static_cast<int>(event->args[0]));
  struct stat st;
  if (file != nullptr) {
    st = *file;
  } else if (::stat(fd_path.c_str(), &st) != 0) {
    return false;
  }
  if (source_path != nullptr) {
    struct stat named;
    if (::stat(source_path->c_str(), &named) != 0 || named.st_dev != st.st_dev ||
        named.st_ino != st.st_ino) {
      return false;  // gone, or another file by that name now
    }
    fd_path = *source_path;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > kMaxReferencedFileBytes) {
    return false;
  }
  std::optional<uint64_t> offset = read_offset(tid, *event, position_after);
  if (!offset) {
    return false;
  }
  Copy* copy = current_copy(fd_path, st, /*stale=*/false);
  bool same = copy != nullptr && matches(*copy, *offset, *event);
  if (!same && copy != nullptr && !has_times(st)) {
    // Without time stamps a file rewritten at the same size looks the
    // same: a read that differs from the copy takes a new one.
    copy = current_copy(fd_path, st, /*stale=*/true);
    same = copy != nullptr && matches(*copy, *offset, *event);
  }
  if (!same) {
    return false;
  }
  event->syscall_flags |= format::kSyscallReadsFileCopy;
  event->content_id = copy->content_id;
  event->file_offset = *offset;
  ++referenced_reads_;
  referenced_bytes_ += total;
  return true;
}

}  // namespace repro::tracer
