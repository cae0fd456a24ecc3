#include "core/format/event_codec.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <climits>
#include <limits>
#include <vector>

#include "core/format/trace_format.h"
#include "core/format/varint.h"
#include "format_test_util.h"

namespace repro::format {
namespace {

using testing::make_event;
using testing::Rng;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();

// Encodes EVENTS as one frame, decodes it back, and returns the decoded
// events (failing the test on any decode error).
std::vector<Event> round_trip(const std::vector<Event>& events, uint64_t first_index = 0) {
  FrameEncoder encoder;
  encoder.begin(first_index);
  for (const Event& event : events) {
    REQUIRE(encoder.add(event).is_ok());
  }
  std::string content(encoder.finish());
  FrameDecoder decoder;
  Status status = decoder.reset(reinterpret_cast<const uint8_t*>(content.data()), content.size());
  REQUIRE(status.is_ok());
  CHECK(decoder.event_count() == events.size());
  CHECK(decoder.first_event_index() == first_index);
  std::vector<Event> decoded;
  Event event;
  while (true) {
    Result<bool> more = decoder.next(&event);
    INFO(more.status().to_string());
    REQUIRE(more.is_ok());
    if (!more.value()) {
      break;
    }
    decoded.push_back(event);
  }
  return decoded;
}

// One event of each kind with every field that kind uses set to a
// non-default value.
std::vector<Event> one_of_each_kind() {
  std::vector<Event> events;
  Event e;
  e.kind = EventKind::kSyscall;
  e.thread = 3;
  e.syscall_number = 0;
  e.args = {1, 2, 3, 4, 5, 6};
  e.result = -14;
  e.syscall_flags = kSyscallExecuted | kSyscallEffectsUnknown | kSyscallDenied;
  e.writes = {{0x7ffd0000, "abc"}, {0x1000, std::string(300, 'z')}, {0x7ffd0010, ""}};
  e.inputs = {{1, "/etc/passwd"}, {4, std::string("\x02\x00\x1f\x90\x7f\x00\x00\x01", 8)}};
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kSyscallEntered;
  e.thread = 1;
  e.syscall_number = 202;
  e.args = {kU64Max, 0, 7, 0, 9, 1};
  e.writes = {{0x555555558100, std::string("\x12\x34\x00\x80", 4)}};  // a PI futex word
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kSignal;
  e.thread = 2;
  e.signal_number = 11;
  e.signal_flags = kSignalSynchronous;
  e.signal_info = std::string(128, '\x01');
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kPreempt;
  e.thread = 0;
  e.registers = std::string(216, '\xff');
  e.extended_registers_hash = 0x0123456789abcdefull;
  e.memory_hash = kU64Max;
  e.page_hashes = {{0x555555554000, 1}, {0x555555555000, kU64Max}, {0x7ffffffde000, 0}};
  e.writes = {{0x555555555000, std::string(4096, '\x07')}};
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kRdtsc;
  e.thread = 7;
  e.tsc = 0x123456789abcull;
  e.tsc_aux = 3;
  e.address = 0x7ffff7fe1b7b;
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kThreadStart;
  e.thread = 8;
  e.parent_thread = 7;
  e.recorded_tid = 123456;
  e.clone_flags = 0x3d0f00;
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kExec;
  e.thread = 8;
  e.path = "/usr/bin/env";
  e.content_id = "00112233445566778899aabbccddeeff";
  e.data = std::string("/bin/sh\0./script\0-x\0", 21);
  e.random_bytes =
      std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 16);
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kThreadExit;
  e.thread = 8;
  e.exit_status = 0x0b00;
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kMappedFile;
  e.thread = 1;
  e.path = "/lib/libc.so.6";
  e.content_id = "ffeeddccbbaa99887766554433221100";
  e.result = 0x7f1234560000;
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kSyscallBatch;
  e.thread = 1;
  e.data = std::string(1000, '\x42');
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kRdtscPatch;
  e.thread = 2;
  e.path = "/lib64/ld-linux-x86-64.so.2";
  e.writes = {{0x7ffff7fe1b7b, "\x0f\x31"}, {0x7ffff7fe2000, "\x0f\x01\xf9"}};
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kDeadlock;
  e.thread = 1;
  e.data = "deadlock: every thread waits for another\n  t0 futex wait\n";
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kFailureStacks;
  e.thread = 2;
  e.data = std::string("\x0b\x02\x00\x00", 4);
  events.push_back(e);

  e = Event{};
  e.kind = EventKind::kSyscallPatch;
  e.thread = 1;
  e.path = "/lib/x86_64-linux-gnu/libc.so.6";
  e.address = 0x7ffff7e8f094;
  e.data = std::string("\x0f\x05\x48\x3d\x00\xf0\xff\xff", 8);
  e.writes = {{0x7ffff7fb9000, std::string(32, '\xcc')},
              {0x7ffff7e8f094, std::string("\xe9\x67\xa0\x12\x00\xcc\xcc\xcc", 8)}};
  events.push_back(e);
  return events;
}

TEST_CASE("every event kind round-trips with every field populated", "[format][roundtrip]") {
  std::vector<Event> events = one_of_each_kind();
  REQUIRE(events.size() == kMaxEventKind);
  CHECK(round_trip(events) == events);
}

TEST_CASE("64-bit extremes, negative values and empty strings round-trip", "[format][roundtrip]") {
  std::vector<Event> events;
  Event e;
  e.kind = EventKind::kSyscall;
  e.thread = kU32Max;
  e.syscall_number = kI32Min;
  e.args = {kU64Max, kU64Max, kU64Max, kU64Max, kU64Max, kU64Max};
  e.result = kI64Min;
  // Every flag but those that move the bytes elsewhere (below) and the
  // encoder's own inputs bit (an event without inputs never has it).
  e.syscall_flags = kU32Max & ~(kSyscallReadsFileCopy | kSyscallReadsPipe | kSyscallInputsFollow);
  e.writes = {{kU64Max, "x"}, {0, "y"}, {kU64Max, ""}, {0x8000000000000000ull, "z"}};
  events.push_back(e);
  e.result = kI64Max;
  e.syscall_number = -1;
  e.thread = 0;
  events.push_back(e);
  e.result = -1;
  e.writes.clear();
  e.args = {0, 0, 0, 0, 0, kU64Max};
  events.push_back(e);

  Event tsc;
  tsc.kind = EventKind::kRdtsc;
  tsc.tsc = kU64Max;
  tsc.tsc_aux = kU32Max;
  events.push_back(tsc);
  tsc.tsc = 0;  // delta wraps around
  events.push_back(tsc);
  tsc.tsc = 0x8000000000000000ull;
  events.push_back(tsc);

  Event start;
  start.kind = EventKind::kThreadStart;
  start.thread = kU32Max;
  start.parent_thread = kU32Max;
  start.recorded_tid = -1;
  start.clone_flags = kU64Max;
  events.push_back(start);

  Event exit_event;
  exit_event.kind = EventKind::kThreadExit;
  exit_event.exit_status = kI32Min;
  events.push_back(exit_event);

  Event signal;
  signal.kind = EventKind::kSignal;
  signal.signal_number = kI32Min;
  signal.signal_flags = kU32Max;
  events.push_back(signal);  // empty signal_info

  Event mapped;
  mapped.kind = EventKind::kMappedFile;
  mapped.result = kI64Min;
  events.push_back(mapped);  // empty path and content id

  Event exec;
  exec.kind = EventKind::kExec;
  events.push_back(exec);  // all strings empty

  Event preempt;
  preempt.kind = EventKind::kPreempt;
  preempt.extended_registers_hash = kU64Max;
  events.push_back(preempt);
  preempt.page_hashes = {{kU64Max - 4095, kU64Max}, {0, 0}};  // address deltas wrap
  events.push_back(preempt);

  Event patch;
  patch.kind = EventKind::kRdtscPatch;
  events.push_back(patch);  // no path, no sites
  tsc.address = kU64Max;
  events.push_back(tsc);

  Event batch;
  batch.kind = EventKind::kSyscallBatch;
  events.push_back(batch);

  CHECK(round_trip(events, kU64Max - 100) == events);
}

TEST_CASE("a read from a file copy keeps its lengths, not its bytes", "[format][roundtrip]") {
  Event e;
  e.kind = EventKind::kSyscall;
  e.syscall_number = 0;
  e.args = {3, 0x1000, 8192, 0, 0, 0};
  e.result = 5000;
  e.syscall_flags = kSyscallReadsFileCopy;
  e.content_id = "0123456789abcdef0123456789abcdef";
  e.file_offset = kU64Max - 5000;
  e.writes = {{0x1000, std::string(4000, 'a')}, {0x9000, std::string(1000, 'b')}};
  std::vector<Event> decoded = round_trip({e});
  REQUIRE(decoded.size() == 1);
  CHECK(decoded[0].content_id == e.content_id);
  CHECK(decoded[0].file_offset == e.file_offset);
  REQUIRE(decoded[0].writes.size() == 2);
  CHECK(decoded[0].writes[0].address == 0x1000);
  CHECK(decoded[0].writes[0].bytes == std::string(4000, '\0'));  // for TraceReader to fill
  CHECK(decoded[0].writes[1].address == 0x9000);
  CHECK(decoded[0].writes[1].bytes.size() == 1000);

  FrameEncoder encoder;
  encoder.begin(0);
  REQUIRE(encoder.add(e).is_ok());
  CHECK(encoder.finish().size() < 100);  // the bytes are not in the frame

  e.syscall_flags = kSyscallReadsPipe;  // the same, from a pipe's stream
  e.content_id.clear();
  e.pipe_id = 123456;
  decoded = round_trip({e});
  REQUIRE(decoded.size() == 1);
  CHECK(decoded[0].pipe_id == 123456);
  CHECK(decoded[0].file_offset == e.file_offset);
  CHECK(decoded[0].writes[1].bytes == std::string(1000, '\0'));
}

TEST_CASE("syscall inputs round-trip with the other syscall fields", "[format][roundtrip]") {
  Event e;
  e.kind = EventKind::kSyscall;
  e.syscall_number = 257;  // openat
  e.args = {static_cast<uint64_t>(-100), 0x7ffff7fb5510, 0x80000, 0, 0, 0};
  e.result = 3;
  e.inputs = {{1, "/lib/x86_64-linux-gnu/libc.so.6"}};
  Event read_from_copy;
  read_from_copy.kind = EventKind::kSyscall;
  read_from_copy.syscall_number = 0;
  read_from_copy.result = 2;
  read_from_copy.syscall_flags = kSyscallReadsFileCopy | kSyscallFeedsPipe | kSyscallReadsPipe;
  read_from_copy.content_id = std::string(kContentIdLength, 'c');
  read_from_copy.pipe_id = 77;
  read_from_copy.file_offset = 5;
  read_from_copy.writes = {{0x1000, std::string(2, '\0')}};
  read_from_copy.inputs = {{0, ""}, {5, std::string(kMaxSyscallInputBytes, 'p')}};
  Event empty_input = e;
  empty_input.inputs = {{0, ""}};
  std::vector<Event> events = {e, read_from_copy, empty_input, e};
  CHECK(round_trip(events) == events);

  SECTION("the inputs bit never reaches Event::syscall_flags") {
    Event stray = e;
    stray.inputs.clear();
    stray.syscall_flags = kSyscallInputsFollow;
    std::vector<Event> decoded = round_trip({stray});
    REQUIRE(decoded.size() == 1);
    CHECK(decoded[0].syscall_flags == 0);
    CHECK(decoded[0].inputs.empty());
  }
  SECTION("inputs of other kinds are not stored") {
    Event entered = e;
    entered.kind = EventKind::kSyscallEntered;
    std::vector<Event> decoded = round_trip({entered});
    REQUIRE(decoded.size() == 1);
    CHECK(decoded[0].inputs.empty());
  }
}

TEST_CASE("a large string and many writes round-trip", "[format][roundtrip]") {
  Rng rng(7);
  Event e;
  e.kind = EventKind::kSyscall;
  e.syscall_number = 0;
  e.result = 4 << 20;
  e.writes.push_back({0x10000, rng.bytes(4 << 20)});
  for (int i = 0; i < 1000; ++i) {
    e.writes.push_back({0x20000 + static_cast<uint64_t>(i) * 8, rng.bytes(i % 17)});
  }
  Event exec;
  exec.kind = EventKind::kExec;
  exec.path = std::string(PATH_MAX, 'p');
  exec.content_id = std::string(kContentIdLength, 'a');
  exec.random_bytes = rng.bytes(16);
  std::vector<Event> events = {e, exec, e};
  CHECK(round_trip(events) == events);
}

TEST_CASE("fields a kind does not use are not stored", "[format][roundtrip]") {
  Event e;
  e.kind = EventKind::kThreadExit;
  e.exit_status = 9;
  Event noisy = e;
  noisy.args = {1, 2, 3, 4, 5, 6};
  noisy.path = "ignored";
  noisy.writes = {{1, "ignored"}};
  std::vector<Event> decoded = round_trip({noisy});
  REQUIRE(decoded.size() == 1);
  CHECK(decoded[0] == e);
}

TEST_CASE("a generated stream of every kind round-trips", "[format][roundtrip]") {
  std::vector<Event> events(5000);
  for (size_t i = 0; i < events.size(); ++i) {
    make_event(i, &events[i]);
  }
  CHECK(round_trip(events, 5) == events);
}

TEST_CASE("a getppid event encodes in three bytes", "[format][roundtrip]") {
  Event e;
  e.kind = EventKind::kSyscall;
  e.syscall_number = 110;
  e.result = 42;
  FrameEncoder encoder;
  encoder.begin(0);
  REQUIRE(encoder.add(e).is_ok());
  size_t one = encoder.content_bytes();
  REQUIRE(encoder.add(e).is_ok());
  CHECK(encoder.content_bytes() - one == 3);
  CHECK(one == kFramePrologueBytes + 3);
}

TEST_CASE("the encoder refuses an unknown kind and an oversized event", "[format]") {
  FrameEncoder encoder;
  encoder.begin(0);
  Event bad;
  bad.kind = static_cast<EventKind>(0);
  CHECK(encoder.add(bad).code() == StatusCode::kInvalidArgument);
  bad.kind = static_cast<EventKind>(kMaxEventKind + 1);
  CHECK(encoder.add(bad).code() == StatusCode::kInvalidArgument);
  Event huge;
  huge.kind = EventKind::kSyscallBatch;
  huge.data.assign(kMaxEventBytes, 'h');
  Status status = encoder.add(huge);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(), Catch::Contains("too large"));
  CHECK(encoder.event_count() == 0);
  CHECK(encoder.content_bytes() == kFramePrologueBytes);
}

TEST_CASE("varints round-trip at every length and reject malformed input", "[format]") {
  uint8_t buffer[kMaxVarint64Bytes + 1];
  std::vector<uint64_t> values = {0, 1, 127, 128, 16383, 16384, 1ull << 32, kU64Max - 1, kU64Max};
  for (int shift = 0; shift < 64; ++shift) {
    values.push_back(1ull << shift);
    values.push_back((1ull << shift) - 1);
  }
  for (uint64_t value : values) {
    uint8_t* end = put_varint64(buffer, value);
    CHECK(static_cast<size_t>(end - buffer) == varint64_length(value));
    uint64_t decoded = 0;
    CHECK(get_varint64(buffer, end, &decoded) == end);
    CHECK(decoded == value);
    // Any shorter input ends inside the varint.
    for (uint8_t* cut = buffer; cut < end; ++cut) {
      CHECK(get_varint64(buffer, cut, &decoded) == nullptr);
    }
  }
  // Eleven continuation bytes, and a 10th byte with bits above 2^64.
  uint8_t too_long[11];
  std::fill(std::begin(too_long), std::end(too_long), 0x80);
  too_long[10] = 0;
  uint64_t value = 0;
  CHECK(get_varint64(too_long, too_long + 11, &value) == nullptr);
  uint8_t overflow[10];
  std::fill(std::begin(overflow), std::end(overflow), 0xFF);
  overflow[9] = 0x02;
  CHECK(get_varint64(overflow, overflow + 10, &value) == nullptr);
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, kI64Min, kI64Max}) {
    CHECK(zigzag_decode(zigzag_encode(v)) == v);
  }
  CHECK(zigzag_encode(-1) == 1);
  CHECK(zigzag_encode(1) == 2);
}

// Decodes CONTENT and returns the first error (or ok if it decoded).
Status decode_all(const std::string& content) {
  FrameDecoder decoder;
  REPRO_RETURN_IF_ERROR(
      decoder.reset(reinterpret_cast<const uint8_t*>(content.data()), content.size()));
  Event event;
  while (true) {
    Result<bool> more = decoder.next(&event);
    if (!more.is_ok()) {
      return more.status();
    }
    if (!more.value()) {
      return Status::ok();
    }
  }
}

std::string encode_frame(const std::vector<Event>& events, uint64_t first_index = 0) {
  FrameEncoder encoder;
  encoder.begin(first_index);
  for (const Event& event : events) {
    REQUIRE(encoder.add(event).is_ok());
  }
  return std::string(encoder.finish());
}

TEST_CASE("the decoder reports bad frame content with the event index and offset",
          "[format][corruption]") {
  std::vector<Event> events = one_of_each_kind();
  std::string good = encode_frame(events, 100);
  REQUIRE(decode_all(good).is_ok());

  SECTION("content shorter than the prologue") {
    Status status = decode_all(good.substr(0, 10));
    CHECK(status.code() == StatusCode::kCorruption);
    CHECK_THAT(status.message(), Catch::Contains("prologue"));
  }
  SECTION("wrong content magic") {
    std::string bad = good;
    bad[0] ^= 1;
    CHECK_THAT(decode_all(bad).message(), Catch::Contains("magic"));
  }
  SECTION("event count larger than the content can hold") {
    std::string bad = good;
    bad[7] = '\x7f';
    CHECK(decode_all(bad).code() == StatusCode::kCorruption);
  }
  SECTION("event count one too high: bytes end inside an event") {
    std::string bad = good;
    bad[4] = static_cast<char>(events.size() + 1);
    Status status = decode_all(bad);
    CHECK(status.code() == StatusCode::kCorruption);
    CHECK_THAT(status.message(), Catch::Contains(fmt::format("event {}", 100 + events.size())));
  }
  SECTION("event count one too low: trailing bytes") {
    std::string bad = good;
    bad[4] = static_cast<char>(events.size() - 1);
    Status status = decode_all(bad);
    CHECK(status.code() == StatusCode::kCorruption);
    CHECK_THAT(status.message(), Catch::Contains("left in the frame content"));
  }
  SECTION("unknown kind") {
    std::string bad = good;
    bad[kFramePrologueBytes] = 0x0F | 0x10;
    Status status = decode_all(bad);
    CHECK_THAT(status.message(), Catch::Contains("event 100 (byte 16 of the frame content)"));
    CHECK_THAT(status.message(), Catch::Contains("unknown event kind 15"));
  }
  SECTION("flags not allowed on the kind") {
    Event exit_event;
    exit_event.kind = EventKind::kThreadExit;
    std::string bad = encode_frame({exit_event});
    bad[kFramePrologueBytes] |= 0x40;
    CHECK_THAT(decode_all(bad).message(), Catch::Contains("not allowed"));
  }
  SECTION("a length that runs past the end") {
    Event batch;
    batch.kind = EventKind::kSyscallBatch;
    batch.data = "abcdef";
    std::string bad = encode_frame({batch});
    bad[kFramePrologueBytes + 1] = 100;
    Status status = decode_all(bad);
    CHECK_THAT(status.message(), Catch::Contains("batch data length 100 exceeds the 6 bytes left"));
  }
  SECTION("truncated content") {
    for (size_t cut = kFramePrologueBytes; cut < good.size(); ++cut) {
      CHECK(decode_all(good.substr(0, cut)).code() == StatusCode::kCorruption);
    }
  }
}

TEST_CASE("the decoder survives random and mutated frame content", "[format][corruption]") {
  Rng rng(20240601);
  std::vector<Event> events(200);
  for (size_t i = 0; i < events.size(); ++i) {
    make_event(i, &events[i]);
  }
  const std::string good = encode_frame(events);
  int ok_count = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string bad = good;
    int flips = 1 + static_cast<int>(rng.below(4));
    for (int i = 0; i < flips; ++i) {
      // Keep the prologue intact half the time so decoding goes deep.
      size_t lowest = iteration % 2 == 0 ? kFramePrologueBytes : 0;
      size_t at = lowest + rng.below(bad.size() - lowest);
      bad[at] = static_cast<char>(rng.next());
    }
    if (rng.below(4) == 0) {
      bad.resize(rng.below(bad.size()));
    }
    Status status = decode_all(bad);
    if (status.is_ok()) {
      ++ok_count;
    } else {
      CHECK(status.code() == StatusCode::kCorruption);
    }
  }
  // Random content behind a valid prologue.
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string random = good.substr(0, kFramePrologueBytes);
    random[4] = static_cast<char>(1 + rng.below(8));
    random[5] = random[6] = random[7] = 0;
    random += rng.bytes(rng.below(64));
    Status status = decode_all(random);
    CHECK((status.is_ok() || status.code() == StatusCode::kCorruption));
  }
  SUCCEED("mutated frames that still decoded: " << ok_count);
}

}  // namespace
TEST_CASE("an openat with its path encodes as docs/trace-format.md shows", "[format]") {
  Event e;
  e.kind = EventKind::kSyscall;
  e.syscall_number = 257;
  e.args = {static_cast<uint64_t>(-100), 1, 0, 0, 0, 0};
  e.result = 3;
  e.inputs = {{1, "/etc/hosts"}};
  std::string frame = encode_frame({e});
  const unsigned char expected[] = {0xA1, 0x81, 0x02, 0x03, 0x9C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                    0xFF, 0xFF, 0xFF, 0x01, 0x01, 0x06, 0x80, 0x04, 0x01, 0x01,
                                    0x0A, '/',  'e',  't',  'c',  '/',  'h',  'o',  's',  't',  's'};
  CHECK(frame.substr(kFramePrologueBytes) ==
        std::string(reinterpret_cast<const char*>(expected), sizeof expected));
}

TEST_CASE("the decoder refuses bad syscall inputs", "[format][corruption]") {
  Event e;
  e.kind = EventKind::kSyscall;
  e.syscall_number = 2;  // open: no args, so the inputs follow result and flags
  e.inputs = {{0, "/x"}};
  std::string good = encode_frame({e});
  // kind, syscall number, result, flags (2 bytes: bit 9), count, index, length, "/x".
  const size_t count_at = kFramePrologueBytes + 5;
  REQUIRE(good.size() == count_at + 5);
  REQUIRE(good[count_at] == 1);
  REQUIRE(decode_all(good).is_ok());

  SECTION("an argument index above 5") {
    std::string bad = good;
    bad[count_at + 1] = 6;
    CHECK_THAT(decode_all(bad).message(), Catch::Contains("argument index above 5"));
  }
  SECTION("a count of zero") {
    std::string bad = good;
    bad[count_at] = 0;
    CHECK_THAT(decode_all(bad).message(), Catch::Contains("syscall input count 0"));
  }
  SECTION("a length past the end") {
    std::string bad = good;
    bad[count_at + 2] = 9;
    CHECK_THAT(decode_all(bad).message(), Catch::Contains("syscall input length 9 exceeds"));
  }
  SECTION("an input longer than kMaxSyscallInputBytes") {
    Event big = e;
    big.inputs = {{0, std::string(kMaxSyscallInputBytes + 1, 'a')}};
    CHECK_THAT(decode_all(encode_frame({big})).message(),
               Catch::Contains("longer than kMaxSyscallInputBytes"));
  }
  SECTION("truncated at every byte") {
    for (size_t cut = kFramePrologueBytes; cut < good.size(); ++cut) {
      CHECK(decode_all(good.substr(0, cut)).code() == StatusCode::kCorruption);
    }
  }
}

}  // namespace repro::format
