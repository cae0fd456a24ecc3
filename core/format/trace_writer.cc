#include "core/format/trace_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/scoped_fd.h"
#include "core/format/content_id.h"
#include "core/format/event_codec.h"
#include "core/format/event_stream.h"
#include "core/format/file_util.h"
#include "core/format/sparse_copy.h"
#include "core/format/trace_format.h"
#include "core/format/trace_trailer.h"

namespace repro::format {
namespace {

// Renames a finished temporary copy to its content-addressed name; on
// failure the temporary copy is removed and the error names both paths.
Status move_into_place(const std::string& temp_path, const std::string& final_path) {
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    Status status =
        Status::from_errno(errno, fmt::format("renaming '{}' to '{}'", temp_path, final_path));
    ::unlink(temp_path.c_str());
    return status;
  }
  return Status::ok();
}

// Bytes read per call when hashing or copying a file into files/.
constexpr size_t kCopyChunkBytes = 1024 * 1024;

// Gives DIR exactly kTraceDirMode: mkdir's mode passes through the umask,
// which may take away the owner's bits.
Status restrict_directory(const std::string& dir) {
  if (::chmod(dir.c_str(), kTraceDirMode) != 0) {
    return Status::from_errno(errno, fmt::format("chmod of '{}'", dir));
  }
  return Status::ok();
}

// Ok if DIR does not exist (and creates it) or is an empty directory.
Status make_empty_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), kTraceDirMode) == 0) {
    return restrict_directory(dir);
  }
  int err = errno;
  if (err != EEXIST) {
    return Status::from_errno(err, fmt::format("creating trace directory '{}'", dir));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return Status::from_errno(errno, fmt::format("stat of '{}'", dir));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("'{}' exists and is not a directory", dir));
  }
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) {
    return Status::from_errno(errno, fmt::format("opening directory '{}'", dir));
  }
  bool empty = true;
  while (struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(stream);
  if (!empty) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("trace directory '{}' exists and is not empty", dir));
  }
  return restrict_directory(dir);  // an empty directory made by someone else may be open
}

}  // namespace

class TraceWriter::Impl {
 public:
  explicit Impl(std::string dir)
      : dir_(std::move(dir)),
        files_dir_(join_path(dir_, kFilesDirName)),
        events_path_(join_path(dir_, kEventsFileName)) {}

  Status create(const TraceHeader& header);
  Status append(const Event& event);
  Status flush();
  Result<std::string> store_file(const std::string& path);
  Result<std::string> store_mapped_range(const std::string& path, uint64_t offset,
                                         uint64_t length);
  Result<std::string> store_bytes(const std::string& bytes);
  Status finish();
  uint64_t event_count() const { return event_count_; }
  const std::string& dir() const { return dir_; }
  bool needs_flush_on_destruction() const {
    return !finished_ && error_.is_ok() && events_fd_.valid();
  }

 private:
  // Makes `status` the sticky error and returns it.
  Status fail(Status status) {
    error_ = std::move(status);
    return error_;
  }
  Status usable() const {
    if (!error_.is_ok()) {
      return error_;
    }
    if (finished_) {
      return Status::error(StatusCode::kInvalidArgument,
                           fmt::format("trace '{}' is already finished", dir_));
    }
    return Status::ok();
  }
  Result<std::string> copy_into_files(int source_fd, const std::string& source_path);

  std::string dir_;
  std::string files_dir_;
  std::string events_path_;
  dev_t files_device_ = 0;
  ScopedFd events_fd_;
  ScopedFd marker_fd_;  // the locked `incomplete` marker
  FrameEncoder encoder_;
  ByteBuffer compressed_;
  ByteBuffer copy_buffer_;
  uint64_t event_count_ = 0;
  uint64_t events_bytes_ = 0;
  Status error_;
  bool finished_ = false;
};

Status TraceWriter::Impl::create(const TraceHeader& header) {
  REPRO_RETURN_IF_ERROR(make_empty_directory(dir_));
  if (::mkdir(files_dir_.c_str(), kTraceDirMode) != 0) {
    return Status::from_errno(errno, fmt::format("creating '{}'", files_dir_));
  }
  REPRO_RETURN_IF_ERROR(restrict_directory(files_dir_));
  struct stat st;
  if (::stat(files_dir_.c_str(), &st) != 0) {
    return Status::from_errno(errno, fmt::format("stat of '{}'", files_dir_));
  }
  files_device_ = st.st_dev;

  std::string marker_path = join_path(dir_, kIncompleteMarkerName);
  marker_fd_.reset(
      ::open(marker_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kTraceFileMode));
  if (!marker_fd_.valid()) {
    return Status::from_errno(errno, fmt::format("creating '{}'", marker_path));
  }
  // Held until finish(): tells a reader a live recorder owns the trace.
  if (::flock(marker_fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    return Status::from_errno(errno, fmt::format("locking '{}'", marker_path));
  }

  events_fd_.reset(::open(events_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
                          kTraceFileMode));
  if (!events_fd_.valid()) {
    return Status::from_errno(errno, fmt::format("creating '{}'", events_path_));
  }

  // The header goes last: a directory with a header always has the rest.
  TraceHeader stored = header;
  stored.format_version = kTraceFormatVersion;
  REPRO_RETURN_IF_ERROR(
      write_file_atomic(dir_, kHeaderFileName, header_to_json(stored), kTraceFileMode));
  REPRO_RETURN_IF_ERROR(fsync_directory(dir_));
  encoder_.begin(0);
  return Status::ok();
}

Status TraceWriter::Impl::append(const Event& event) {
  if (!error_.is_ok() || finished_) {
    return usable();
  }
  REPRO_RETURN_IF_ERROR(encoder_.add(event));
  ++event_count_;
  if (encoder_.content_bytes() >= kFrameRawBytes) {
    return flush();
  }
  return Status::ok();
}

Status TraceWriter::Impl::flush() {
  REPRO_RETURN_IF_ERROR(usable());
  if (encoder_.event_count() == 0) {
    return Status::ok();
  }
  Status status = compress_frame(encoder_.finish(), &compressed_);
  if (!status.is_ok()) {
    return fail(status.context(fmt::format("writing '{}'", events_path_)));
  }
  status = write_all(events_fd_.get(), compressed_.data(), compressed_.size(), events_path_);
  if (!status.is_ok()) {
    return fail(status);
  }
  events_bytes_ += compressed_.size();
  encoder_.begin(event_count_);
  return Status::ok();
}

Result<std::string> TraceWriter::Impl::copy_into_files(int source_fd,
                                                       const std::string& source_path) {
  // Hashes while copying, so the id always names exactly the bytes stored
  // even if the source changed since it was hashed.
  std::string temp_path =
      join_path(files_dir_, fmt::format("{}copy-{}", kTempFilePrefix, ::getpid()));
  ScopedFd out(
      ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kStoredCopyMode));
  if (!out.valid()) {
    return fail(Status::from_errno(errno, fmt::format("creating '{}'", temp_path)));
  }
  ContentHasher hasher;
  uint8_t* buffer = copy_buffer_.reserve_extra(kCopyChunkBytes);
  uint64_t offset = 0;
  while (true) {
    ssize_t n = ::pread(source_fd, buffer, kCopyChunkBytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      Status status = Status::from_errno(errno, fmt::format("reading '{}'", source_path));
      ::unlink(temp_path.c_str());
      return status;
    }
    if (n == 0) {
      break;
    }
    hasher.update(buffer, static_cast<size_t>(n));
    // A chunk of zeros (a hole of a sparse file) is left a hole in the copy.
    bool zeros = buffer[0] == 0 && std::memcmp(buffer, buffer + 1, static_cast<size_t>(n) - 1) == 0;
    Status status = zeros ? Status::ok()
                          : write_all(out.get(), buffer, static_cast<size_t>(n), temp_path);
    offset += static_cast<uint64_t>(n);
    if (status.is_ok() && zeros && ::lseek(out.get(), static_cast<off_t>(offset), SEEK_SET) < 0) {
      status = Status::from_errno(errno, fmt::format("seeking in '{}'", temp_path));
    }
    if (!status.is_ok()) {
      ::unlink(temp_path.c_str());
      return fail(status);
    }
  }
  // No fsync here: finish() syncs the file system of files/ once (a copy
  // per file read costs a disk flush each, tar's thousands of them
  // seconds), and a copy a crash cut short fails its content id check.
  if (::ftruncate(out.get(), static_cast<off_t>(offset)) != 0 || ::close(out.release()) != 0) {
    Status status = Status::from_errno(errno, fmt::format("writing '{}'", temp_path));
    ::unlink(temp_path.c_str());
    return fail(status);
  }
  std::string id = hasher.content_id();
  std::string final_path = join_path(files_dir_, id);
  if (Status moved = move_into_place(temp_path, final_path); !moved.is_ok()) {
    return fail(moved);
  }
  return id;
}

Result<std::string> TraceWriter::Impl::store_file(const std::string& path) {
  REPRO_RETURN_IF_ERROR(usable());
  // Errors about the source file are the caller's business and not sticky;
  // errors writing into the trace are.
  ScopedFd source(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!source.valid()) {
    int err = errno;
    if (err == ENOENT) {
      return Status::error(StatusCode::kNotFound,
                           fmt::format("storing '{}' in the trace: no such file", path));
    }
    return Status::from_errno(err, fmt::format("storing '{}' in the trace: opening it", path));
  }
  struct stat st;
  if (::fstat(source.get(), &st) != 0) {
    return Status::from_errno(errno, fmt::format("stat of '{}'", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("storing '{}' in the trace: not a regular file", path));
  }

  ContentHasher hasher;
  uint8_t* buffer = copy_buffer_.reserve_extra(kCopyChunkBytes);
  uint64_t offset = 0;
  while (true) {
    ssize_t n = ::pread(source.get(), buffer, kCopyChunkBytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return Status::from_errno(errno, fmt::format("reading '{}'", path));
    }
    if (n == 0) {
      break;
    }
    hasher.update(buffer, static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  std::string id = hasher.content_id();
  std::string final_path = join_path(files_dir_, id);
  if (path_exists(final_path)) {
    return id;
  }
  // A file nobody may write cannot change under the trace (short of root or
  // chmod), so a hard link is as good as a copy. Link the inode we hashed,
  // not whatever PATH names now.
  if (st.st_dev == files_device_ && (st.st_mode & 0222) == 0) {
    std::string fd_path = fmt::format("/proc/self/fd/{}", source.get());
    if (::linkat(AT_FDCWD, fd_path.c_str(), AT_FDCWD, final_path.c_str(), AT_SYMLINK_FOLLOW) == 0 ||
        errno == EEXIST) {
      return id;
    }
    // EPERM (protected_hardlinks), EMLINK, no /proc, ...: copy instead.
  }
  return copy_into_files(source.get(), path);
}

Result<std::string> TraceWriter::Impl::store_mapped_range(const std::string& path,
                                                          uint64_t offset, uint64_t length) {
  REPRO_RETURN_IF_ERROR(usable());
  ScopedFd source(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!source.valid() || ::fstat(source.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) <= kWholeFileLimitBytes) {
    return store_file(path);  // which reports what is wrong with it
  }
  std::string temp_path =
      join_path(files_dir_, fmt::format("{}range-{}", kTempFilePrefix, ::getpid()));
  ScopedFd out(
      ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kStoredCopyMode));
  if (!out.valid()) {
    return fail(Status::from_errno(errno, fmt::format("creating '{}'", temp_path)));
  }
  // A mapping shows whole pages: the last one up to its end.
  const uint64_t end = offset + ((length + 4095) & ~uint64_t{4095});
  Result<std::string> id = write_sparse_range(source.get(), path, static_cast<uint64_t>(st.st_size),
                                              offset, end, out.get(), temp_path);
  if (id.is_ok() && ::close(out.release()) != 0) {  // synced at finish(), as copies are
    id = Status::from_errno(errno, fmt::format("writing '{}'", temp_path));
  }
  if (!id.is_ok()) {
    ::unlink(temp_path.c_str());
    return fail(id.status());
  }
  std::string final_path = join_path(files_dir_, *id);
  if (path_exists(final_path)) {
    ::unlink(temp_path.c_str());
    return id;
  }
  if (Status moved = move_into_place(temp_path, final_path); !moved.is_ok()) {
    return fail(moved);
  }
  return id;
}

Result<std::string> TraceWriter::Impl::store_bytes(const std::string& bytes) {
  REPRO_RETURN_IF_ERROR(usable());
  std::string id = content_id_of_bytes(bytes);
  if (path_exists(join_path(files_dir_, id))) {
    return id;
  }
  Status status = write_file_atomic(files_dir_, id, bytes, kStoredCopyMode);
  if (!status.is_ok()) {
    return fail(status);
  }
  return id;
}

Status TraceWriter::Impl::finish() {
  REPRO_RETURN_IF_ERROR(flush());
  // The copies in files/, written without an fsync each.
  ScopedFd files(::open(files_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!files.valid() || ::syncfs(files.get()) != 0) {
    return fail(Status::from_errno(errno, fmt::format("syncing '{}'", files_dir_)));
  }
  if (::fsync(events_fd_.get()) != 0) {
    return fail(Status::from_errno(errno, fmt::format("fsync of '{}'", events_path_)));
  }
  if (::close(events_fd_.release()) != 0) {
    return fail(Status::from_errno(errno, fmt::format("closing '{}'", events_path_)));
  }
  TraceTrailer trailer;
  trailer.event_count = event_count_;
  trailer.events_bytes = events_bytes_;
  Status status =
      write_file_atomic(dir_, kTrailerFileName, trailer_to_json(trailer), kTraceFileMode);
  if (!status.is_ok()) {
    return fail(status);
  }
  std::string incomplete = join_path(dir_, kIncompleteMarkerName);
  std::string complete = join_path(dir_, kCompleteMarkerName);
  if (::rename(incomplete.c_str(), complete.c_str()) != 0) {
    return fail(
        Status::from_errno(errno, fmt::format("renaming '{}' to '{}'", incomplete, complete)));
  }
  status = fsync_directory(files_dir_);
  if (status.is_ok()) {
    status = fsync_directory(dir_);
  }
  if (!status.is_ok()) {
    return fail(status);
  }
  marker_fd_.reset();  // releases the lock
  finished_ = true;
  return Status::ok();
}

// ---------------------------------------------------------------------------

Result<std::unique_ptr<TraceWriter>> TraceWriter::create(const std::string& dir,
                                                         const TraceHeader& header) {
  if (dir.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "empty trace directory name");
  }
  auto impl = std::make_unique<Impl>(dir);
  REPRO_RETURN_IF_ERROR(impl->create(header).context(fmt::format("creating trace '{}'", dir)));
  return std::unique_ptr<TraceWriter>(new TraceWriter(std::move(impl)));
}

TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TraceWriter::~TraceWriter() {
  // Never lose buffered events: an unfinished trace stays incomplete but
  // keeps everything appended. Errors have no one to go to here.
  if (impl_ != nullptr && impl_->needs_flush_on_destruction()) {
    (void)impl_->flush();
  }
}

Status TraceWriter::append(const Event& event) { return impl_->append(event); }
Status TraceWriter::flush() { return impl_->flush(); }
Result<std::string> TraceWriter::store_file(const std::string& path) {
  return impl_->store_file(path);
}

Result<std::string> TraceWriter::store_mapped_range(const std::string& path, uint64_t offset,
                                                    uint64_t length) {
  return impl_->store_mapped_range(path, offset, length);
}
Result<std::string> TraceWriter::store_bytes(const std::string& bytes) {
  return impl_->store_bytes(bytes);
}
Status TraceWriter::finish() { return impl_->finish(); }
uint64_t TraceWriter::event_count() const { return impl_->event_count(); }
const std::string& TraceWriter::dir() const { return impl_->dir(); }

}  // namespace repro::format
