#include "core/format/event_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/format/trace_format.h"
#include "core/format/varint.h"

namespace repro::format {
namespace {

// Kind byte layout (docs/trace-format.md, "Events").
constexpr uint8_t kKindMask = 0x0F;
constexpr uint8_t kThreadFollows = 0x10;
constexpr uint8_t kArgsFollow = 0x20;    // syscall kinds only
constexpr uint8_t kWritesFollow = 0x40;  // kSyscall, kSyscallEntered, kPreempt, k*Patch
constexpr uint8_t kFlagsFollow = 0x80;   // kSyscall only
constexpr uint8_t kArgsMaskBits = 0x3F;  // one bit per argument

// Flag bits each kind may carry; anything else in the kind byte is
// corruption.
uint8_t allowed_flags(EventKind kind) {
  switch (kind) {
    case EventKind::kSyscall:
      return kThreadFollows | kArgsFollow | kWritesFollow | kFlagsFollow;
    case EventKind::kSyscallEntered:
      return kThreadFollows | kArgsFollow | kWritesFollow;
    case EventKind::kPreempt:
    case EventKind::kRdtscPatch:
    case EventKind::kSyscallPatch:
      return kThreadFollows | kWritesFollow;
    default:
      return kThreadFollows;
  }
}

bool valid_kind(uint8_t kind) { return kind >= 1 && kind <= kMaxEventKind; }

// Upper bound of one length-prefixed string's encoding.
inline size_t string_bound(const std::string& s) { return kMaxVarint64Bytes + s.size(); }

// Upper bound of the event's encoding, counting only the fields its kind
// uses. The fixed part covers the kind byte, thread, syscall number, args
// mask and six args, result, flags and the write count.
size_t encoded_bound(const Event& event) {
  size_t bound = 1 + 5 + 5 + 1 + 6 * kMaxVarint64Bytes + kMaxVarint64Bytes + 5 + kMaxVarint64Bytes;
  if (event.kind == EventKind::kSyscall || event.kind == EventKind::kSyscallEntered ||
      event.kind == EventKind::kPreempt || event.kind == EventKind::kRdtscPatch ||
      event.kind == EventKind::kSyscallPatch) {
    for (const MemoryWrite& write : event.writes) {
      bound += 2 * kMaxVarint64Bytes + write.bytes.size();
    }
  }
  switch (event.kind) {
    case EventKind::kSignal:
      bound += string_bound(event.signal_info);
      break;
    case EventKind::kPreempt:
      bound += string_bound(event.registers) + 16 +
               event.page_hashes.size() * (kMaxVarint64Bytes + 8);
      break;
    case EventKind::kRdtscPatch:
      bound += string_bound(event.path);
      break;
    case EventKind::kSyscallPatch:
      bound += string_bound(event.path) + kMaxVarint64Bytes + string_bound(event.data);
      break;
    case EventKind::kExec:
      bound += string_bound(event.path) + string_bound(event.content_id) +
               string_bound(event.random_bytes) + string_bound(event.data);
      break;
    case EventKind::kMappedFile:
      bound += string_bound(event.path) + string_bound(event.content_id);
      break;
    case EventKind::kSyscall:
      bound += string_bound(event.content_id) + 4 * kMaxVarint64Bytes;
      for (const SyscallInput& input : event.inputs) {
        bound += 1 + string_bound(input.bytes);
      }
      break;
    case EventKind::kSyscallBatch:
    case EventKind::kDeadlock:
    case EventKind::kFailureStacks:
      bound += string_bound(event.data);
      break;
    default:
      break;
  }
  return bound;
}

inline uint8_t* put_bytes(uint8_t* p, const std::string& s) {
  p = put_varint64(p, s.size());
  if (!s.empty()) {
    std::memcpy(p, s.data(), s.size());
  }
  return p + s.size();
}

inline uint8_t* put_args(uint8_t* p, const std::array<uint64_t, 6>& args, uint8_t mask) {
  *p++ = mask;
  for (int i = 0; i < 6; ++i) {
    if (mask & (1u << i)) {
      p = put_varint64(p, args[i]);
    }
  }
  return p;
}

// The count, then each write's address (delta to the previous write's in
// the frame) and bytes, or only its length when the bytes are in a file copy
// (kSyscallReadsFileCopy). Requires: writes is not empty.
inline uint8_t* put_writes(uint8_t* p, const std::vector<MemoryWrite>& writes,
                           EventCodecState& state, bool lengths_only = false) {
  p = put_varint64(p, writes.size());
  for (const MemoryWrite& write : writes) {
    p = put_varint64(p, zigzag_encode(static_cast<int64_t>(write.address - state.previous_write_address)));
    state.previous_write_address = write.address;
    p = lengths_only ? put_varint64(p, write.bytes.size()) : put_bytes(p, write.bytes);
  }
  return p;
}

inline uint8_t args_mask(const std::array<uint64_t, 6>& args) {
  uint8_t mask = 0;
  for (int i = 0; i < 6; ++i) {
    mask |= static_cast<uint8_t>(args[i] != 0) << i;
  }
  return mask;
}

// Requires: encoded_bound(event) writable bytes at p. Returns the end.
uint8_t* encode_event(const Event& event, EventCodecState& state, uint8_t* p) {
  uint8_t* kind_byte = p++;
  uint8_t kind = static_cast<uint8_t>(event.kind);
  if (event.thread != state.previous_thread) {
    kind |= kThreadFollows;
    p = put_varint64(p, event.thread);
    state.previous_thread = event.thread;
  }
  switch (event.kind) {
    case EventKind::kSyscall: {
      p = put_varint64(p, static_cast<uint32_t>(event.syscall_number));
      uint8_t mask = args_mask(event.args);
      if (mask != 0) {
        kind |= kArgsFollow;
        p = put_args(p, event.args, mask);
      }
      p = put_varint64(p, zigzag_encode(event.result));
      uint32_t flags = event.syscall_flags & ~kSyscallInputsFollow;
      if (!event.inputs.empty()) {
        flags |= kSyscallInputsFollow;
      }
      if (flags != 0) {
        kind |= kFlagsFollow;
        p = put_varint64(p, flags);
      }
      bool from_copy = event.syscall_flags & kSyscallReadsFileCopy;
      if (from_copy) {
        p = put_bytes(p, event.content_id);
        p = put_varint64(p, event.file_offset);
      }
      bool from_pipe = event.syscall_flags & kSyscallReadsPipe;
      if (event.syscall_flags & (kSyscallFeedsPipe | kSyscallReadsPipe)) {
        p = put_varint64(p, event.pipe_id);
      }
      if (from_pipe) {
        p = put_varint64(p, event.file_offset);
      }
      if (!event.inputs.empty()) {
        p = put_varint64(p, event.inputs.size());
        for (const SyscallInput& input : event.inputs) {
          *p++ = input.arg_index;
          p = put_bytes(p, input.bytes);
        }
      }
      if (!event.writes.empty()) {
        kind |= kWritesFollow;
        p = put_writes(p, event.writes, state, from_copy || from_pipe);
      }
      break;
    }
    case EventKind::kSyscallEntered: {
      p = put_varint64(p, static_cast<uint32_t>(event.syscall_number));
      uint8_t mask = args_mask(event.args);
      if (mask != 0) {
        kind |= kArgsFollow;
        p = put_args(p, event.args, mask);
      }
      if (!event.writes.empty()) {
        kind |= kWritesFollow;
        p = put_writes(p, event.writes, state);
      }
      break;
    }
    case EventKind::kSignal:
      p = put_varint64(p, static_cast<uint32_t>(event.signal_number));
      p = put_varint64(p, event.signal_flags);
      p = put_bytes(p, event.signal_info);
      break;
    case EventKind::kPreempt: {
      p = put_bytes(p, event.registers);
      p = put_fixed64(p, event.extended_registers_hash);
      p = put_fixed64(p, event.memory_hash);
      p = put_varint64(p, event.page_hashes.size());
      uint64_t previous_page = 0;
      for (const PageHash& page : event.page_hashes) {
        p = put_varint64(p, zigzag_encode(static_cast<int64_t>(page.address - previous_page)));
        previous_page = page.address;
        p = put_fixed64(p, page.hash);
      }
      if (!event.writes.empty()) {
        kind |= kWritesFollow;
        p = put_writes(p, event.writes, state);
      }
      break;
    }
    case EventKind::kRdtsc:
      p = put_varint64(p, zigzag_encode(static_cast<int64_t>(event.tsc - state.previous_tsc)));
      state.previous_tsc = event.tsc;
      p = put_varint64(p, event.tsc_aux);
      p = put_varint64(
          p, zigzag_encode(static_cast<int64_t>(event.address - state.previous_rdtsc_address)));
      state.previous_rdtsc_address = event.address;
      break;
    case EventKind::kRdtscPatch:
    case EventKind::kSyscallPatch:
      p = put_bytes(p, event.path);
      if (event.kind == EventKind::kSyscallPatch) {
        p = put_varint64(p, event.address);
        p = put_bytes(p, event.data);
      }
      if (!event.writes.empty()) {
        kind |= kWritesFollow;
        p = put_writes(p, event.writes, state);
      }
      break;
    case EventKind::kThreadStart:
      p = put_varint64(p, event.parent_thread);
      p = put_varint64(p, static_cast<uint32_t>(event.recorded_tid));
      p = put_varint64(p, event.clone_flags);
      break;
    case EventKind::kExec:
      p = put_bytes(p, event.path);
      p = put_bytes(p, event.content_id);
      p = put_bytes(p, event.random_bytes);
      p = put_bytes(p, event.data);
      break;
    case EventKind::kThreadExit:
      p = put_varint64(p, static_cast<uint32_t>(event.exit_status));
      break;
    case EventKind::kMappedFile:
      p = put_bytes(p, event.path);
      p = put_bytes(p, event.content_id);
      p = put_varint64(p, zigzag_encode(event.result));
      break;
    case EventKind::kSyscallBatch:
    case EventKind::kDeadlock:
    case EventKind::kFailureStacks:
      p = put_bytes(p, event.data);
      break;
  }
  *kind_byte = kind;
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------
// ByteBuffer

void ByteBuffer::reserve(size_t capacity) {
  if (capacity <= capacity_) {
    return;
  }
  std::unique_ptr<uint8_t[]> bigger(new uint8_t[capacity]);
  if (size_ != 0) {
    std::memcpy(bigger.get(), data_.get(), size_);
  }
  data_ = std::move(bigger);
  capacity_ = capacity;
}

void ByteBuffer::grow(size_t extra) { reserve(std::max(size_ + extra, capacity_ + capacity_ / 2)); }

void ByteBuffer::append(const void* bytes, size_t length) {
  uint8_t* p = reserve_extra(length);
  if (length != 0) {
    std::memcpy(p, bytes, length);
  }
  size_ += length;
}

// ---------------------------------------------------------------------------
// FrameEncoder

void FrameEncoder::begin(uint64_t first_event_index) {
  // The buffer keeps its capacity across frames: after the first frame
  // (geometric growth up to about kFrameRawBytes) nothing is allocated.
  buffer_.clear();
  uint8_t* p = buffer_.reserve_extra(kFramePrologueBytes);
  std::memset(p, 0, kFramePrologueBytes);
  buffer_.set_size(kFramePrologueBytes);
  state_ = EventCodecState{};
  first_event_index_ = first_event_index;
  event_count_ = 0;
}

Status FrameEncoder::add(const Event& event) {
  uint8_t kind = static_cast<uint8_t>(event.kind);
  if (!valid_kind(kind)) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("cannot encode event of unknown kind {}", kind));
  }
  size_t bound = encoded_bound(event);
  if (bound > kMaxEventBytes) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("event too large: a {} event of up to {} bytes exceeds the "
                                     "{}-byte limit of one event",
                                     event_kind_name(event.kind), bound, kMaxEventBytes));
  }
  uint8_t* start = buffer_.reserve_extra(bound);
  uint8_t* end = encode_event(event, state_, start);
  buffer_.set_size(buffer_.size() + static_cast<size_t>(end - start));
  ++event_count_;
  return Status::ok();
}

std::string_view FrameEncoder::finish() {
  uint8_t* p = buffer_.data();
  p = put_fixed32(p, kFrameContentMagic);
  p = put_fixed32(p, event_count_);
  put_fixed64(p, first_event_index_);
  return buffer_.view();
}

// ---------------------------------------------------------------------------
// FrameDecoder

Status FrameDecoder::reset(const uint8_t* content, size_t size) {
  begin_ = content;
  pos_ = content;
  end_ = content + size;
  event_start_ = content;
  state_ = EventCodecState{};
  events_decoded_ = 0;
  event_count_ = 0;
  first_event_index_ = 0;
  if (size < kFramePrologueBytes) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("frame content is {} bytes, shorter than its {}-byte prologue",
                                     size, kFramePrologueBytes));
  }
  uint32_t magic = load_fixed32(content);
  if (magic != kFrameContentMagic) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("frame content starts with 0x{:08x}, not the magic 0x{:08x}",
                                     magic, kFrameContentMagic));
  }
  event_count_ = load_fixed32(content + 4);
  first_event_index_ = load_fixed64(content + 8);
  if (event_count_ == 0) {
    return Status::error(StatusCode::kCorruption, "frame prologue says the frame holds no events");
  }
  // Every event takes at least 2 bytes (kind byte plus one field), which
  // bounds a count that a corrupt prologue could inflate.
  if (event_count_ > (size - kFramePrologueBytes) / 2) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("frame prologue claims {} events, more than {} bytes of "
                                     "content can hold",
                                     event_count_, size - kFramePrologueBytes));
  }
  pos_ = content + kFramePrologueBytes;
  return Status::ok();
}

bool FrameDecoder::fail(const char* what) {
  error_ = fmt::format("event {} (byte {} of the frame content): {}",
                       first_event_index_ + events_decoded_, event_start_ - begin_, what);
  return false;
}

bool FrameDecoder::fail_length(const char* what, uint64_t length) {
  error_ = fmt::format("event {} (byte {} of the frame content): {} {} exceeds the {} bytes left",
                       first_event_index_ + events_decoded_, event_start_ - begin_, what, length,
                       end_ - pos_);
  return false;
}

Result<bool> FrameDecoder::next(Event* event) {
  if (events_decoded_ == event_count_) {
    if (pos_ != end_) {
      return Status::error(
          StatusCode::kCorruption,
          fmt::format("{} bytes left in the frame content after its last event (event {})",
                      end_ - pos_, first_event_index_ + event_count_ - 1));
    }
    return false;
  }
  event_start_ = pos_;
  if (!decode_event(event)) {
    return Status::error(StatusCode::kCorruption, error_);
  }
  ++events_decoded_;
  return true;
}

// The decoding helpers below return false after calling fail(); the caller
// returns at once. Every length is checked against what is left before use.
#define REPRO_DECODE(expr) \
  do {                     \
    if (!(expr)) {         \
      return false;        \
    }                      \
  } while (0)

bool FrameDecoder::decode_event(Event* event) {
  auto varint = [&](uint64_t* value, const char* what) {
    const uint8_t* next = get_varint64(pos_, end_, value);
    if (next == nullptr) {
      return fail(what);
    }
    pos_ = next;
    return true;
  };
  auto varint32 = [&](uint32_t* value, const char* what) {
    uint64_t wide = 0;
    REPRO_DECODE(varint(&wide, what));
    if (wide > UINT32_MAX) {
      return fail(what);
    }
    *value = static_cast<uint32_t>(wide);
    return true;
  };
  auto bytes = [&](std::string* out, const char* what) {
    uint64_t length = 0;
    REPRO_DECODE(varint(&length, what));
    if (length > static_cast<uint64_t>(end_ - pos_)) {
      return fail_length(what, length);
    }
    out->assign(reinterpret_cast<const char*>(pos_), length);
    pos_ += length;
    return true;
  };
  auto fixed64 = [&](uint64_t* value, const char* what) {
    if (end_ - pos_ < 8) {
      return fail(what);
    }
    *value = load_fixed64(pos_);
    pos_ += 8;
    return true;
  };
  auto args = [&](std::array<uint64_t, 6>* out) {
    if (pos_ == end_) {
      return fail("bytes end inside the argument mask");
    }
    uint8_t mask = *pos_++;
    if (mask == 0 || (mask & ~kArgsMaskBits) != 0) {
      return fail("bad argument mask");
    }
    for (int i = 0; i < 6; ++i) {
      if (mask & (1u << i)) {
        REPRO_DECODE(varint(&(*out)[i], "bad syscall argument varint"));
      }
    }
    return true;
  };

  if (pos_ == end_) {
    return fail("bytes end before the event's kind byte");
  }
  uint8_t kind_byte = *pos_++;
  uint8_t kind_value = kind_byte & kKindMask;
  if (!valid_kind(kind_value)) {
    error_ = fmt::format("event {} (byte {} of the frame content): unknown event kind {}",
                         first_event_index_ + events_decoded_, event_start_ - begin_, kind_value);
    return false;
  }
  EventKind kind = static_cast<EventKind>(kind_value);
  uint8_t flags = kind_byte & ~kKindMask;
  if ((flags & ~allowed_flags(kind)) != 0) {
    error_ = fmt::format(
        "event {} (byte {} of the frame content): flags 0x{:02x} not allowed on a "
        "{} event",
        first_event_index_ + events_decoded_, event_start_ - begin_, flags, event_kind_name(kind));
    return false;
  }

  // Reset every field but keep the writes' elements (and their strings'
  // capacity) for reuse below.
  std::vector<MemoryWrite> kept_writes = std::move(event->writes);
  event->clear();
  event->writes = std::move(kept_writes);
  size_t write_count = 0;
  uint64_t copied_bytes = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  // The memory writes of a kind that may carry them, if its flag says so.
  // With lengths_only, each write's bytes are zeros of the encoded length
  // (at most kMaxFileCopyReadBytes in all), to be filled from a file copy
  // or a pipe's stream.
  auto writes = [&](bool lengths_only = false) {
    if (!(flags & kWritesFollow)) {
      return true;
    }
    REPRO_DECODE(varint(&u64, "bad memory write count"));
    // Each write takes at least 2 bytes (address delta, length).
    if (u64 == 0 || u64 > static_cast<uint64_t>(end_ - pos_) / 2) {
      return fail_length("memory write count", u64);
    }
    write_count = static_cast<size_t>(u64);
    if (event->writes.size() < write_count) {
      event->writes.resize(write_count);
    }
    for (size_t i = 0; i < write_count; ++i) {
      MemoryWrite& write = event->writes[i];
      REPRO_DECODE(varint(&u64, "bad memory write address"));
      state_.previous_write_address += static_cast<uint64_t>(zigzag_decode(u64));
      write.address = state_.previous_write_address;
      if (!lengths_only) {
        REPRO_DECODE(bytes(&write.bytes, "memory write length"));
        continue;
      }
      REPRO_DECODE(varint(&u64, "bad memory write length"));
      copied_bytes += u64;
      if (u64 > kMaxFileCopyReadBytes || copied_bytes > kMaxFileCopyReadBytes) {
        return fail_length("bytes read from a file copy or pipe", copied_bytes);
      }
      write.bytes.assign(static_cast<size_t>(u64), '\0');
    }
    return true;
  };

  // The syscall inputs: count (at least 1), then per input its argument
  // index byte (0..5) and its bytes (at most kMaxSyscallInputBytes).
  auto inputs = [&]() {
    REPRO_DECODE(varint(&u64, "bad syscall input count"));
    // Each input takes at least 2 bytes (argument index, length).
    if (u64 == 0 || u64 > static_cast<uint64_t>(end_ - pos_) / 2) {
      return fail_length("syscall input count", u64);
    }
    event->inputs.resize(static_cast<size_t>(u64));
    for (SyscallInput& input : event->inputs) {
      if (pos_ == end_) {
        return fail("bytes end inside the syscall inputs");
      }
      input.arg_index = *pos_++;
      if (input.arg_index > 5) {
        return fail("syscall input argument index above 5");
      }
      REPRO_DECODE(bytes(&input.bytes, "syscall input length"));
      if (input.bytes.size() > kMaxSyscallInputBytes) {
        return fail("syscall input longer than kMaxSyscallInputBytes");
      }
    }
    return true;
  };

  event->kind = kind;
  if (flags & kThreadFollows) {
    REPRO_DECODE(varint32(&state_.previous_thread, "bad thread index"));
  }
  event->thread = state_.previous_thread;

  switch (kind) {
    case EventKind::kSyscall:
    case EventKind::kSyscallEntered:
      REPRO_DECODE(varint32(&u32, "bad syscall number"));
      event->syscall_number = static_cast<int32_t>(u32);
      if (flags & kArgsFollow) {
        REPRO_DECODE(args(&event->args));
      }
      if (kind == EventKind::kSyscallEntered) {
        REPRO_DECODE(writes());
        break;
      }
      REPRO_DECODE(varint(&u64, "bad syscall result"));
      event->result = zigzag_decode(u64);
      if (flags & kFlagsFollow) {
        REPRO_DECODE(varint32(&event->syscall_flags, "bad syscall flags"));
      }
      if (event->syscall_flags & kSyscallReadsFileCopy) {
        REPRO_DECODE(bytes(&event->content_id, "content id length"));
        REPRO_DECODE(varint(&event->file_offset, "bad file offset"));
      }
      if (event->syscall_flags & (kSyscallFeedsPipe | kSyscallReadsPipe)) {
        REPRO_DECODE(varint(&event->pipe_id, "bad pipe id"));
      }
      if (event->syscall_flags & kSyscallReadsPipe) {
        REPRO_DECODE(varint(&event->file_offset, "bad pipe stream position"));
      }
      if (event->syscall_flags & kSyscallInputsFollow) {
        event->syscall_flags &= ~kSyscallInputsFollow;
        REPRO_DECODE(inputs());
      }
      REPRO_DECODE(
          writes(/*lengths_only=*/event->syscall_flags & (kSyscallReadsFileCopy | kSyscallReadsPipe)));
      break;
    case EventKind::kSignal:
      REPRO_DECODE(varint32(&u32, "bad signal number"));
      event->signal_number = static_cast<int32_t>(u32);
      REPRO_DECODE(varint32(&event->signal_flags, "bad signal flags"));
      REPRO_DECODE(bytes(&event->signal_info, "signal info length"));
      break;
    case EventKind::kPreempt: {
      REPRO_DECODE(bytes(&event->registers, "registers length"));
      REPRO_DECODE(
          fixed64(&event->extended_registers_hash, "bytes end inside the extended registers hash"));
      REPRO_DECODE(fixed64(&event->memory_hash, "bytes end inside the memory hash"));
      REPRO_DECODE(varint(&u64, "bad page hash count"));
      // Each page hash takes at least 9 bytes (address delta, hash).
      if (u64 > static_cast<uint64_t>(end_ - pos_) / 9) {
        return fail_length("page hash count", u64);
      }
      event->page_hashes.resize(static_cast<size_t>(u64));
      uint64_t previous_page = 0;
      for (PageHash& page : event->page_hashes) {
        REPRO_DECODE(varint(&u64, "bad page address"));
        previous_page += static_cast<uint64_t>(zigzag_decode(u64));
        page.address = previous_page;
        REPRO_DECODE(fixed64(&page.hash, "bytes end inside a page hash"));
      }
      REPRO_DECODE(writes());
      break;
    }
    case EventKind::kRdtsc:
      REPRO_DECODE(varint(&u64, "bad tsc delta"));
      state_.previous_tsc += static_cast<uint64_t>(zigzag_decode(u64));
      event->tsc = state_.previous_tsc;
      REPRO_DECODE(varint32(&event->tsc_aux, "bad tsc_aux"));
      REPRO_DECODE(varint(&u64, "bad rdtsc address"));
      state_.previous_rdtsc_address += static_cast<uint64_t>(zigzag_decode(u64));
      event->address = state_.previous_rdtsc_address;
      break;
    case EventKind::kRdtscPatch:
      REPRO_DECODE(bytes(&event->path, "path length"));
      REPRO_DECODE(writes());
      break;
    case EventKind::kSyscallPatch:
      REPRO_DECODE(bytes(&event->path, "path length"));
      REPRO_DECODE(varint(&event->address, "bad site address"));
      REPRO_DECODE(bytes(&event->data, "site bytes length"));
      REPRO_DECODE(writes());
      break;
    case EventKind::kThreadStart:
      REPRO_DECODE(varint32(&event->parent_thread, "bad parent thread index"));
      REPRO_DECODE(varint32(&u32, "bad recorded tid"));
      event->recorded_tid = static_cast<int32_t>(u32);
      REPRO_DECODE(varint(&event->clone_flags, "bad clone flags"));
      break;
    case EventKind::kExec:
      REPRO_DECODE(bytes(&event->path, "path length"));
      REPRO_DECODE(bytes(&event->content_id, "content id length"));
      REPRO_DECODE(bytes(&event->random_bytes, "random bytes length"));
      REPRO_DECODE(bytes(&event->data, "argv length"));
      break;
    case EventKind::kThreadExit:
      REPRO_DECODE(varint32(&u32, "bad exit status"));
      event->exit_status = static_cast<int32_t>(u32);
      break;
    case EventKind::kMappedFile:
      REPRO_DECODE(bytes(&event->path, "path length"));
      REPRO_DECODE(bytes(&event->content_id, "content id length"));
      REPRO_DECODE(varint(&u64, "bad mapping address"));
      event->result = zigzag_decode(u64);
      break;
    case EventKind::kSyscallBatch:
      REPRO_DECODE(bytes(&event->data, "batch data length"));
      break;
    case EventKind::kDeadlock:
      REPRO_DECODE(bytes(&event->data, "deadlock report length"));
      break;
    case EventKind::kFailureStacks:
      REPRO_DECODE(bytes(&event->data, "failure stacks length"));
      break;
  }
  event->writes.resize(write_count);
  return true;
}

#undef REPRO_DECODE

}  // namespace repro::format
