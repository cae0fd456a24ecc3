#pragma once
// FileReadReferences: stores what a read from a regular file returned as a
// reference to one copy of the file in the trace's files/ (content id,
// offset, length: kSyscallReadsFileCopy) instead of the bytes themselves.
//
// Why: a file read many times (headers a build includes again and again,
// data files every process of a pipeline opens) then costs its size once,
// and a file nobody may write is hard-linked rather than copied
// (TraceWriter::store_file), so it costs nothing.
//
// Correct whatever happens to the file: the bytes the read returned are
// compared with the copy at that offset, and only an exact match becomes a
// reference; otherwise the bytes are stored as before. A file that changes
// while the recording runs (written by the program itself, or from
// outside) gets a new copy when its size or times change (where the stat
// has no times, the library's statx, when a read differs from the copy),
// at most kMaxCopiesPerFile times; after that its reads store their bytes.
//
// Not thread-safe; owned by the RecordSession.

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "core/base/scoped_fd.h"
#include "core/base/status.h"
#include "core/format/event.h"
#include "core/format/trace_writer.h"

namespace repro::tracer {

/// Reads shorter than this keep their bytes: the lookups a reference costs
/// (a stat and, for read/readv, the file position) would outweigh the bytes.
inline constexpr int64_t kMinReferencedReadBytes = 1024;

/// The position of descriptor `fd` of thread `tid`, from its fdinfo.
std::optional<uint64_t> file_position(pid_t tid, int fd);

class FileReadReferences {
 public:
  explicit FileReadReferences(format::TraceWriter* writer) : writer_(writer) {}

  /// For a completed read, pread64, readv, preadv or preadv2 in `event`
  /// (writes captured) by thread `tid`: turns its bytes into a reference
  /// when they came from a regular file and match a copy of it, and says
  /// whether it did; leaves every other event alone. A read at the current
  /// position ended at `position_after` if given (a fast-path read, looked
  /// at later), else where the descriptor stands now. A file that cannot
  /// be copied or compared keeps its bytes; a copy that fails for the
  /// trace's sake (a full disk) leaves the writer's sticky error, which
  /// its next append reports. `file`, if given, is what stat says of the
  /// read's descriptor (a fast-path read: what the library's fstat said
  /// before it). `source_path`, if given, is where the file can be opened
  /// for its copy now that the descriptor is closed (a path that must
  /// still name the same file), instead of /proc/PID/fd/N.
  bool reference(pid_t tid, format::Event* event,
                 std::optional<uint64_t> position_after = std::nullopt,
                 const struct stat* file = nullptr, const std::string* source_path = nullptr);

  /// Reads turned into references so far, and the bytes they did not store.
  uint64_t referenced_reads() const { return referenced_reads_; }
  uint64_t referenced_bytes() const { return referenced_bytes_; }

 private:
  struct Copy {
    int64_t size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    std::string content_id;
    ScopedFd fd;  // the copy in files/, open for comparing
    int copies_made = 0;
  };

  // The copy of the file open as `fd_path`, made now if it changed since
  // the last copy or the caller found it `stale`; nullptr if it should not
  // be referenced.
  Copy* current_copy(const std::string& fd_path, const struct stat& st, bool stale);
  // Whether `event`'s write bytes equal the copy from `offset` on.
  bool matches(const Copy& copy, uint64_t offset, const format::Event& event);

  format::TraceWriter* writer_;
  std::map<std::pair<dev_t, ino_t>, Copy> copies_;
  std::string compare_buffer_;
  uint64_t referenced_reads_ = 0;
  uint64_t referenced_bytes_ = 0;
};

}  // namespace repro::tracer
