#pragma once
// The `events` file as a stream of lz4 frames: compression of one frame's
// content (writer side) and the frame-by-frame reader (TraceReader's engine,
// also driven directly by the fuzzer over bytes in memory).
//
// Every frame is an LZ4F frame (lz4frame.h) with: 64 KiB independent
// blocks, block checksums, content checksum, content size. Its content is
// what FrameEncoder builds (event_codec.h). A frame is compressed in full
// before it is written with a single write(), and decompressed in full (all
// checksums verified) before any of its events is returned, so a reader only
// ever returns events of intact frames.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/base/scoped_fd.h"
#include "core/base/status.h"
#include "core/format/event.h"
#include "core/format/event_codec.h"

// From lz4frame.h; kept out of this header.
struct LZ4F_dctx_s;

namespace repro::format {

/// Compresses one frame's content into a complete LZ4F frame, replacing the
/// content of *out (its capacity is reused). Returns ok, or an internal error
/// if lz4 fails (it cannot for valid arguments). Thread-safe (no state).
Status compress_frame(std::string_view content, ByteBuffer* out);

/// Random-access bytes the stream reader reads from. Implementations need
/// not be thread-safe.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Total size in bytes; fixed for the source's lifetime.
  virtual uint64_t size() const = 0;
  /// Reads exactly `length` bytes at `offset` into dst.
  /// Requires: offset + length <= size(). Errors: io_error.
  virtual Status read_at(uint64_t offset, uint8_t* dst, size_t length) = 0;
};

/// Bytes in memory (borrowed: must outlive the source).
class MemoryByteSource : public ByteSource {
 public:
  explicit MemoryByteSource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  Status read_at(uint64_t offset, uint8_t* dst, size_t length) override;

 private:
  std::string_view bytes_;
};

/// A file opened read-only; its size is taken when opened, so a file still
/// being appended to is read as the prefix that existed then.
class FileByteSource : public ByteSource {
 public:
  /// Errors: not_found if PATH does not exist, io_error otherwise.
  static Result<std::unique_ptr<FileByteSource>> open(const std::string& path);
  uint64_t size() const override { return size_; }
  Status read_at(uint64_t offset, uint8_t* dst, size_t length) override;

 private:
  FileByteSource(ScopedFd fd, uint64_t size, std::string path)
      : fd_(std::move(fd)), size_(size), path_(std::move(path)) {}
  ScopedFd fd_;
  uint64_t size_;
  std::string path_;
};

/// Reads events from a sequence of frames, frame by frame. The source is
/// borrowed and must outlive the reader. Not thread-safe.
///
/// Outcomes of next(), in order of the bytes:
///  - true: an event of an intact frame.
///  - false, truncated() == false: the source ends exactly after a frame.
///  - false, truncated() == true: the source ends inside a frame (a cut-off
///    write); dropped_bytes() is the size of that partial frame.
///  - corruption: a frame fails its checksums, is not an lz4 frame, was not
///    written by repro, is out of sequence, or does not decode into whole
///    events. The message names the source, the frame's byte offset and the
///    event index. Errors are sticky.
class EventStreamReader {
 public:
  /// `name` is used in messages, e.g. "'out/events'".
  EventStreamReader(ByteSource* source, std::string name);
  ~EventStreamReader();
  EventStreamReader(const EventStreamReader&) = delete;
  EventStreamReader& operator=(const EventStreamReader&) = delete;

  /// See the class comment.
  Result<bool> next(Event* event);

  uint64_t events_read() const { return events_read_; }
  uint64_t frames_read() const { return frames_read_; }
  /// Byte offset just past the last whole frame read so far.
  uint64_t valid_bytes() const { return valid_bytes_; }
  /// After next() returned false: whether the source ended inside a frame.
  bool truncated() const { return truncated_; }
  /// After next() returned false: bytes after the last whole frame.
  uint64_t dropped_bytes() const { return dropped_bytes_; }

 private:
  enum class FrameLoad { kFrame, kEnd, kTruncated };
  Result<FrameLoad> load_frame();
  // Makes at least min(want, size - offset) bytes at `offset` available in
  // the input window; returns the number available (0 at the end).
  Result<size_t> window_at(uint64_t offset, size_t want);
  Status frame_error(uint64_t frame_offset, const std::string& what) const;

  ByteSource* source_;
  std::string name_;
  LZ4F_dctx_s* dctx_ = nullptr;

  ByteBuffer input_;  // bytes [input_offset_, input_offset_ + input_.size())
  uint64_t input_offset_ = 0;
  ByteBuffer content_;  // decompressed content of the current frame
  FrameDecoder decoder_;
  bool have_frame_ = false;
  bool ended_ = false;
  Status error_;

  uint64_t frame_offset_ = 0;  // byte offset of the current frame
  uint64_t frame_first_event_ = 0;
  uint64_t valid_bytes_ = 0;
  uint64_t events_read_ = 0;
  uint64_t frames_read_ = 0;
  bool truncated_ = false;
  uint64_t dropped_bytes_ = 0;
};

}  // namespace repro::format
