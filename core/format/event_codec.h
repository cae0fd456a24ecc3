#pragma once
// The event encoding: how Events become the raw (uncompressed) content of one
// frame of the `events` file, and back. The lz4 layer around it is in
// event_stream.h; docs/trace-format.md has the byte-level spec.
//
// Frame content = prologue (kFramePrologueBytes: magic, event count, index
// of the first event) followed by exactly `event count` encoded events:
//
//   kind byte   bits 0-3: EventKind (1..kMaxEventKind)
//               bit 4: a thread varint follows (else: same thread as the
//                      previous event of the frame; 0 for the first)
//               bits 5-7 (syscall kinds only): args mask byte follows /
//                      memory writes follow / syscall_flags varint follows
//   fields      only those of the kind (see event.h), as LEB128 varints,
//               zigzag varints for signed values, length-prefixed bytes
//
// Some fields are delta-coded against the previous event of the same frame
// (memory write addresses, tsc); that state restarts at every frame, so a
// frame decodes alone.
//
// Fields an event's kind does not use are not stored: decoding yields them
// cleared (Event::clear() values).
//
// FrameEncoder and FrameDecoder are not thread-safe; use one per thread.
// Neither allocates per event in the steady state: the encoder reuses its
// buffer, and the decoder reuses the capacity of the Event it fills.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::format {

/// A growable byte buffer that does not zero-fill on growth. Movable, not
/// copyable, not thread-safe.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(ByteBuffer&&) noexcept = default;
  ByteBuffer& operator=(ByteBuffer&&) noexcept = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_.get()), size_}; }

  /// Drops the content, keeps the capacity.
  void clear() { size_ = 0; }
  /// Grows the capacity to at least `capacity`, keeping the content.
  void reserve(size_t capacity);
  /// Makes room for `extra` bytes past size() and returns where they start;
  /// the caller writes them, then calls set_size().
  uint8_t* reserve_extra(size_t extra) {
    if (capacity_ - size_ < extra) {
      grow(extra);
    }
    return data_.get() + size_;
  }
  /// Requires: size <= capacity().
  void set_size(size_t size) { size_ = size; }
  void append(const void* bytes, size_t length);

 private:
  void grow(size_t extra);
  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

/// Per-frame state of the delta-coded fields. Both sides start each frame
/// from the zero state.
struct EventCodecState {
  uint32_t previous_thread = 0;
  uint64_t previous_write_address = 0;
  uint64_t previous_tsc = 0;
  uint64_t previous_rdtsc_address = 0;
};

/// Builds the content of one frame. Owns its buffer; finish()'s view is
/// valid until the next begin() or add().
class FrameEncoder {
 public:
  /// Starts a frame whose first event will have index `first_event_index`
  /// in the whole trace. Keeps the buffer's capacity.
  void begin(uint64_t first_event_index);
  /// Appends one event. Errors (nothing appended): invalid_argument for an
  /// unknown kind or an event whose encoding may exceed kMaxEventBytes.
  /// Requires: begin() was called.
  Status add(const Event& event);

  uint32_t event_count() const { return event_count_; }
  uint64_t first_event_index() const { return first_event_index_; }
  /// Bytes of frame content so far, prologue included.
  size_t content_bytes() const { return buffer_.size(); }

  /// Fills in the prologue and returns the frame content.
  std::string_view finish();

 private:
  ByteBuffer buffer_;
  EventCodecState state_;
  uint64_t first_event_index_ = 0;
  uint32_t event_count_ = 0;
};

/// Decodes the content of one frame. Never reads outside the content it was
/// given, never allocates more than the content's size, never aborts.
class FrameDecoder {
 public:
  /// Starts decoding `content` (borrowed: must stay valid and unchanged
  /// while next() is called) and checks the prologue. Errors: corruption
  /// (message without file context, e.g. "frame content is 3 bytes, shorter
  /// than its 16-byte prologue").
  Status reset(const uint8_t* content, size_t size);

  /// From the prologue; valid after reset() succeeded.
  uint32_t event_count() const { return event_count_; }
  uint64_t first_event_index() const { return first_event_index_; }
  /// Events decoded so far from this frame.
  uint32_t events_decoded() const { return events_decoded_; }

  /// Decodes the next event into *event (every field is overwritten).
  /// Returns true with an event; false once all `event_count` events were
  /// decoded and no byte is left; corruption naming the event index and the
  /// byte offset within the content otherwise (and for trailing bytes).
  Result<bool> next(Event* event);

 private:
  bool decode_event(Event* event);
  bool fail(const char* what);
  bool fail_length(const char* what, uint64_t length);

  const uint8_t* begin_ = nullptr;
  const uint8_t* pos_ = nullptr;
  const uint8_t* end_ = nullptr;
  const uint8_t* event_start_ = nullptr;
  EventCodecState state_;
  uint64_t first_event_index_ = 0;
  uint32_t event_count_ = 0;
  uint32_t events_decoded_ = 0;
  std::string error_;
};

}  // namespace repro::format
