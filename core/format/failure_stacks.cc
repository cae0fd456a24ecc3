#include "core/format/failure_stacks.h"

#include <fmt/format.h>

#include "core/format/varint.h"

namespace repro::format {
namespace {

void put_varint(std::string* out, uint64_t value) {
  uint8_t buffer[kMaxVarint64Bytes];
  uint8_t* end = put_varint64(buffer, value);
  out->append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(end - buffer));
}

void put_bytes(std::string* out, const std::string& bytes) {
  put_varint(out, bytes.size());
  out->append(bytes);
}

// Reads the fields in order, remembering the first failure; every length
// and count is checked against the bytes that remain.
class Cursor {
 public:
  explicit Cursor(std::string_view data)
      : begin_(reinterpret_cast<const uint8_t*>(data.data())), pos_(begin_), end_(begin_ + data.size()) {}

  bool varint(uint64_t* value, const char* what) {
    const uint8_t* next = get_varint64(pos_, end_, value);
    if (next == nullptr) {
      return fail(what);
    }
    pos_ = next;
    return true;
  }
  bool u32(uint32_t* value, const char* what) {
    uint64_t wide = 0;
    if (!varint(&wide, what) || wide > UINT32_MAX) {
      return fail(what);
    }
    *value = static_cast<uint32_t>(wide);
    return true;
  }
  bool i32(int32_t* value, const char* what) {
    uint32_t bits = 0;
    if (!u32(&bits, what)) {
      return false;
    }
    *value = static_cast<int32_t>(bits);
    return true;
  }
  bool bytes(std::string* out, const char* what) {
    uint64_t length = 0;
    if (!varint(&length, what) || length > remaining()) {
      return fail(what);
    }
    out->assign(reinterpret_cast<const char*>(pos_), static_cast<size_t>(length));
    pos_ += length;
    return true;
  }
  // A count of items that take at least `min_item_bytes` each.
  bool count(uint64_t* value, size_t min_item_bytes, const char* what) {
    if (!varint(value, what) || *value > remaining() / min_item_bytes) {
      return fail(what);
    }
    return true;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }
  bool fail(const char* what) {
    if (error_.empty()) {
      error_ = fmt::format("failure stacks: {} at byte {}", what, pos_ - begin_);
    }
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  const uint8_t* begin_;
  const uint8_t* pos_;
  const uint8_t* end_;
  std::string error_;
};

// Smallest encodings: a frame is pc, three empty strings and a line (5
// bytes); a thread is index, tid, empty note and frame count (4 bytes).
constexpr size_t kMinFrameBytes = 5;
constexpr size_t kMinThreadBytes = 4;

bool decode_into(Cursor& in, FailureStacks* out) {
  uint64_t u64 = 0;
  if (!in.i32(&out->signal_number, "bad signal number") ||
      !in.varint(&u64, "bad signal code")) {
    return false;
  }
  out->signal_code = static_cast<int32_t>(zigzag_decode(u64));
  if (!in.varint(&out->fault_address, "bad fault address") ||
      !in.varint(&out->instruction_address, "bad instruction address") ||
      !in.bytes(&out->instruction_bytes, "bad instruction bytes length") ||
      !in.bytes(&out->instruction, "bad instruction text length") ||
      !in.count(&u64, kMinThreadBytes, "bad thread count")) {
    return false;
  }
  out->threads.resize(static_cast<size_t>(u64));
  for (ThreadStack& thread : out->threads) {
    if (!in.u32(&thread.thread, "bad thread index") ||
        !in.i32(&thread.recorded_tid, "bad recorded tid") ||
        !in.bytes(&thread.note, "bad note length") ||
        !in.count(&u64, kMinFrameBytes, "bad frame count")) {
      return false;
    }
    thread.frames.resize(static_cast<size_t>(u64));
    for (StackFrame& frame : thread.frames) {
      if (!in.varint(&frame.pc, "bad frame pc") ||
          !in.bytes(&frame.function, "bad function name length") ||
          !in.bytes(&frame.file, "bad file name length") ||
          !in.u32(&frame.line, "bad line number") ||
          !in.bytes(&frame.module, "bad module name length")) {
        return false;
      }
    }
  }
  if (in.remaining() != 0) {
    return in.fail("trailing bytes");
  }
  return true;
}

}  // namespace

std::string encode_failure_stacks(const FailureStacks& stacks) {
  std::string out;
  put_varint(&out, static_cast<uint32_t>(stacks.signal_number));
  put_varint(&out, zigzag_encode(stacks.signal_code));
  put_varint(&out, stacks.fault_address);
  put_varint(&out, stacks.instruction_address);
  put_bytes(&out, stacks.instruction_bytes);
  put_bytes(&out, stacks.instruction);
  put_varint(&out, stacks.threads.size());
  for (const ThreadStack& thread : stacks.threads) {
    put_varint(&out, thread.thread);
    put_varint(&out, static_cast<uint32_t>(thread.recorded_tid));
    put_bytes(&out, thread.note);
    put_varint(&out, thread.frames.size());
    for (const StackFrame& frame : thread.frames) {
      put_varint(&out, frame.pc);
      put_bytes(&out, frame.function);
      put_bytes(&out, frame.file);
      put_varint(&out, frame.line);
      put_bytes(&out, frame.module);
    }
  }
  return out;
}

Result<FailureStacks> decode_failure_stacks(std::string_view data) {
  Cursor in(data);
  FailureStacks stacks;
  if (!decode_into(in, &stacks)) {
    return Status::error(StatusCode::kCorruption, in.error());
  }
  return stacks;
}

}  // namespace repro::format
