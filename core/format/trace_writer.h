#pragma once
// TraceWriter: writes one trace directory (layout in docs/trace-format.md).
//
// Lifecycle, state by state:
//   create()  makes DIR (must not exist or be empty), writes `header`
//             (temp file + rename) and an `incomplete` marker. From here on
//             a reader sees an incomplete trace with zero events.
//   append()  encodes events into an in-memory frame buffer. Whenever the
//             buffer reaches kFrameRawBytes, or flush() is called, the buffer
//             is compressed as one whole lz4 frame (block checksums on) and
//             appended to `events` with a single write, so a recorder killed
//             at any moment leaves a readable prefix of whole frames.
//   finish()  flushes, writes `trailer` (event count, byte count), fsyncs,
//             and renames `incomplete` to `complete`.
// The first write error (ENOSPC, EIO) is sticky: every later call returns it,
// and the caller must stop recording.
//
// Not thread-safe; owned by the record session.

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/format/event.h"
#include "core/format/trace_header.h"

namespace repro::format {

class TraceWriter {
 public:
  /// Creates the trace directory and writes the header. Errors: invalid
  /// argument if DIR exists and is not empty, io_error otherwise.
  static Result<std::unique_ptr<TraceWriter>> create(const std::string& dir,
                                                     const TraceHeader& header);
  ~TraceWriter();

  /// Buffers one event; may write a frame. Returns the sticky error if any.
  Status append(const Event& event);
  /// Writes the buffered events as one frame (no-op when empty).
  Status flush();
  /// Stores a copy of the file at `path` in files/ and returns its content
  /// id (hex xxh128 of the content). Hard-links when on the same filesystem
  /// and the file is read-only for everyone; copies otherwise. Storing the
  /// same content twice is cheap.
  Result<std::string> store_file(const std::string& path);
  /// Stores what a mapping of bytes [offset, offset + length) of the regular
  /// file at `path` can show, and returns its content id: the whole file
  /// (as store_file) when it is at most kWholeFileLimitBytes, else a copy of
  /// the file's size holding only that range's non-zero pages
  /// (sparse_copy.h), which costs what the range holds, not its size.
  /// Errors: not_found, unsupported (not a regular file), io_error.
  Result<std::string> store_mapped_range(const std::string& path, uint64_t offset,
                                         uint64_t length);
  /// Stores `bytes` as a file in files/ and returns its content id.
  Result<std::string> store_bytes(const std::string& bytes);
  /// Completes the trace (see above). Further appends fail.
  Status finish();

  uint64_t event_count() const;
  const std::string& dir() const;

 private:
  class Impl;
  explicit TraceWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace repro::format
