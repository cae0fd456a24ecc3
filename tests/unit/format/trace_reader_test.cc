#include "core/format/trace_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <vector>

#include "core/format/event_stream.h"
#include "core/format/file_util.h"
#include "core/format/trace_format.h"
#include "core/format/trace_writer.h"
#include "format_test_util.h"

namespace repro::format {
namespace {

using testing::ExpectedEvents;
using testing::file_size;
using testing::make_event;
using testing::make_header;
using testing::read_file;
using testing::Rng;
using testing::TempDir;
using testing::write_file;

// Where each frame of a written trace ends, and how many events precede
// that end.
struct FrameEnd {
  uint64_t offset;
  uint64_t events;
};

// Writes make_event(0..count) into DIR, flushing every `per_frame` events;
// finishes the trace if `finish`. Returns the frame ends.
std::vector<FrameEnd> write_trace(const std::string& dir, uint64_t count, uint64_t per_frame,
                                  bool finish) {
  auto writer = TraceWriter::create(dir, make_header());
  REQUIRE(writer.is_ok());
  std::vector<FrameEnd> ends;
  Event event;
  for (uint64_t i = 0; i < count; ++i) {
    make_event(i, &event);
    REQUIRE(writer.value()->append(event).is_ok());
    if ((i + 1) % per_frame == 0 || i + 1 == count) {
      REQUIRE(writer.value()->flush().is_ok());
      ends.push_back({file_size(dir + "/events"), i + 1});
    }
  }
  if (finish) {
    REQUIRE(writer.value()->finish().is_ok());
  }
  return ends;
}

std::unique_ptr<TraceReader> open_reader(const std::string& dir) {
  Result<std::unique_ptr<TraceReader>> reader = TraceReader::open(dir);
  INFO(reader.status().to_string());
  REQUIRE(reader.is_ok());
  return std::move(reader).value();
}

// Reads all events, checking each against make_event(). Returns the final
// result: ok when next() returned false, else the error.
Status read_and_check(TraceReader* reader, uint64_t* count) {
  static ExpectedEvents cache(20000);
  Event event;
  Event scratch;
  *count = 0;
  while (true) {
    Result<bool> more = reader->next(&event);
    if (!more.is_ok()) {
      return more.status();
    }
    if (!more.value()) {
      return Status::ok();
    }
    if (!(event == cache.at(*count, &scratch))) {
      FAIL("event " << *count << " differs from the one written");
    }
    ++*count;
  }
}

void make_incomplete(const std::string& dir) {
  REQUIRE(::rename((dir + "/complete").c_str(), (dir + "/incomplete").c_str()) == 0);
  REQUIRE(::unlink((dir + "/trailer").c_str()) == 0);
}

TEST_CASE("a million events round-trip through a trace directory", "[format][roundtrip]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  const uint64_t kCount = 1'000'000;
  {
    auto writer = TraceWriter::create(dir, make_header());
    REQUIRE(writer.is_ok());
    Event event;
    for (uint64_t i = 0; i < kCount; ++i) {
      make_event(i, &event);
      REQUIRE(writer.value()->append(event).is_ok());
    }
    REQUIRE(writer.value()->finish().is_ok());
  }
  auto reader = open_reader(dir);
  CHECK(reader->state() == TraceState::kComplete);
  CHECK(reader->trailer_event_count() == kCount);
  TraceHeader expected_header = make_header();
  expected_header.format_version = kTraceFormatVersion;
  CHECK(reader->header() == expected_header);
  uint64_t count = 0;
  Status status = read_and_check(reader.get(), &count);
  INFO(status.to_string());
  CHECK(status.is_ok());
  CHECK(count == kCount);
  CHECK(reader->events_read() == kCount);
  CHECK(reader->dropped_bytes() == 0);
  CHECK_FALSE(reader->truncated());
  // Reading past the end keeps returning false.
  Event event;
  CHECK_FALSE(reader->next(&event).value());
}

TEST_CASE("an empty trace round-trips", "[format][roundtrip]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  {
    auto writer = TraceWriter::create(dir, make_header());
    REQUIRE(writer.is_ok());
    REQUIRE(writer.value()->finish().is_ok());
  }
  CHECK(file_size(dir + "/events") == 0);
  auto reader = open_reader(dir);
  CHECK(reader->state() == TraceState::kComplete);
  CHECK(reader->trailer_event_count() == 0);
  Event event;
  Result<bool> more = reader->next(&event);
  REQUIRE(more.is_ok());
  CHECK_FALSE(more.value());
  CHECK(reader->events_read() == 0);
}

TEST_CASE("an unfinished trace reads as incomplete", "[format][roundtrip]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  auto writer = TraceWriter::create(dir, make_header());
  REQUIRE(writer.is_ok());
  {
    auto reader = open_reader(dir);  // before any event
    CHECK(reader->state() == TraceState::kIncomplete);
    Event event;
    CHECK_FALSE(reader->next(&event).value());
  }
  Event event;
  for (uint64_t i = 0; i < 500; ++i) {
    make_event(i, &event);
    REQUIRE(writer.value()->append(event).is_ok());
  }
  REQUIRE(writer.value()->flush().is_ok());
  make_event(500, &event);
  REQUIRE(writer.value()->append(event).is_ok());  // buffered, not yet visible
  auto reader = open_reader(dir);
  CHECK(reader->state() == TraceState::kIncomplete);
  CHECK(reader->trailer_event_count() == 0);
  uint64_t count = 0;
  CHECK(read_and_check(reader.get(), &count).is_ok());
  CHECK(count == 500);
  CHECK(reader->dropped_bytes() == 0);
}

TEST_CASE("the largest records round-trip in frames bigger than the frame size",
          "[format][roundtrip]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  Rng rng(11);
  std::vector<Event> events(3);
  events[0].kind = EventKind::kSyscall;
  events[0].writes.push_back({0x10000, rng.bytes(16 << 20)});
  events[1].kind = EventKind::kSyscallBatch;
  events[1].data = rng.bytes(kFrameRawBytes * 3);
  events[2].kind = EventKind::kExec;
  events[2].path = std::string(4096, '/');
  {
    auto writer = TraceWriter::create(dir, make_header());
    REQUIRE(writer.is_ok());
    for (const Event& event : events) {
      REQUIRE(writer.value()->append(event).is_ok());
    }
    REQUIRE(writer.value()->finish().is_ok());
  }
  auto reader = open_reader(dir);
  Event event;
  for (const Event& expected : events) {
    Result<bool> more = reader->next(&event);
    REQUIRE(more.is_ok());
    REQUIRE(more.value());
    CHECK(event == expected);
  }
  CHECK_FALSE(reader->next(&event).value());
}

TEST_CASE("reader stops at the last whole frame of a trace truncated at every offset",
          "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  std::vector<FrameEnd> ends = write_trace(dir, 24, 6, /*finish=*/true);
  REQUIRE(ends.size() == 4);
  const std::string events_path = dir + "/events";
  const std::string original = read_file(events_path);
  REQUIRE(original.size() == ends.back().offset);

  for (bool complete : {true, false}) {
    write_file(events_path, original);
    if (!complete) {
      make_incomplete(dir);
    }
    for (uint64_t size = original.size(); size-- > 0;) {
      REQUIRE(::truncate(events_path.c_str(), static_cast<off_t>(size)) == 0);
      uint64_t whole_events = 0;
      uint64_t whole_bytes = 0;
      for (const FrameEnd& end : ends) {
        if (end.offset <= size) {
          whole_events = end.events;
          whole_bytes = end.offset;
        }
      }
      INFO("complete=" << complete << " size=" << size);
      auto reader = open_reader(dir);
      uint64_t count = 0;
      Status status = read_and_check(reader.get(), &count);
      CHECK(count == whole_events);
      CHECK(reader->dropped_bytes() == size - whole_bytes);
      CHECK(reader->truncated() == (size != whole_bytes));
      if (complete) {
        REQUIRE_FALSE(status.is_ok());
        CHECK(status.code() == StatusCode::kCorruption);
        CHECK_THAT(status.message(), Catch::Contains(events_path));
        CHECK_THAT(status.message(), Catch::Contains("offset " + std::to_string(whole_bytes)));
      } else {
        INFO(status.to_string());
        CHECK(status.is_ok());
      }
    }
  }
}

TEST_CASE("reader keeps a valid prefix of a larger trace truncated at 200 offsets",
          "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  std::vector<FrameEnd> ends = write_trace(dir, 4000, 500, /*finish=*/false);
  REQUIRE(ends.size() == 8);
  const std::string events_path = dir + "/events";
  const uint64_t total = file_size(events_path);
  Rng rng(77);
  std::vector<uint64_t> sizes;
  for (int i = 0; i < 190; ++i) {
    sizes.push_back(rng.below(total));
  }
  for (const FrameEnd& end : ends) {  // exactly at and next to boundaries
    sizes.push_back(end.offset);
    sizes.push_back(end.offset - 1);
  }
  std::sort(sizes.rbegin(), sizes.rend());
  for (uint64_t size : sizes) {
    REQUIRE(::truncate(events_path.c_str(), static_cast<off_t>(size)) == 0);
    uint64_t whole_events = 0;
    uint64_t whole_bytes = 0;
    for (const FrameEnd& end : ends) {
      if (end.offset <= size) {
        whole_events = end.events;
        whole_bytes = end.offset;
      }
    }
    INFO("size=" << size);
    auto reader = open_reader(dir);
    uint64_t count = 0;
    Status status = read_and_check(reader.get(), &count);
    INFO(status.to_string());
    CHECK(status.is_ok());
    CHECK(count == whole_events);
    CHECK(reader->dropped_bytes() == size - whole_bytes);
  }
}

TEST_CASE("random byte flips in events give an error or a valid prefix", "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  std::vector<FrameEnd> ends = write_trace(dir, 200, 50, /*finish=*/true);
  const std::string events_path = dir + "/events";
  const std::string original = read_file(events_path);
  Rng rng(1234);
  int errors = 0;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string damaged = original;
    int flips = 1 + static_cast<int>(rng.below(3));
    for (int i = 0; i < flips; ++i) {
      damaged[rng.below(damaged.size())] ^= static_cast<char>(1 + rng.below(255));
    }
    write_file(events_path, damaged);
    INFO("iteration " << iteration);
    auto reader = open_reader(dir);
    uint64_t count = 0;
    Status status = read_and_check(reader.get(), &count);
    if (!status.is_ok()) {
      ++errors;
      CHECK(status.code() == StatusCode::kCorruption);
      CHECK_THAT(status.message(), Catch::Contains(events_path));
      CHECK_THAT(status.message(), Catch::Contains("offset"));
    }
  }
  // Every flip lands in a checksummed frame of a complete trace.
  CHECK(errors == 2000);
}

TEST_CASE("random byte flips in the header give an error or a readable trace",
          "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  write_trace(dir, 50, 50, /*finish=*/true);
  const std::string header_path = dir + "/header";
  const std::string original = read_file(header_path);
  Rng rng(4321);
  for (int iteration = 0; iteration < 1000; ++iteration) {
    std::string damaged = original;
    int flips = 1 + static_cast<int>(rng.below(3));
    for (int i = 0; i < flips; ++i) {
      damaged[rng.below(damaged.size())] = static_cast<char>(rng.next());
    }
    write_file(header_path, damaged);
    Result<std::unique_ptr<TraceReader>> reader = TraceReader::open(dir);
    if (!reader.is_ok()) {
      StatusCode code = reader.status().code();
      CHECK((code == StatusCode::kCorruption || code == StatusCode::kVersionMismatch));
      continue;
    }
    uint64_t count = 0;
    CHECK(read_and_check(reader.value().get(), &count).is_ok());
    CHECK(count == 50);
  }
}

TEST_CASE("a trace of another format version is refused naming both versions",
          "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  write_trace(dir, 10, 10, /*finish=*/true);
  const std::string header_path = dir + "/header";
  const std::string original = read_file(header_path);
  const std::string current = "\"format_version\": " + std::to_string(kTraceFormatVersion);
  REQUIRE(original.find(current) != std::string::npos);

  struct Case {
    uint32_t version;
    const char* word;
  };
  for (Case c :
       {Case{kTraceFormatVersion + 1, "too new"}, Case{kTraceFormatVersion + 41, "too new"},
        Case{kTraceFormatVersion - 1, "too old"}}) {
    std::string changed = original;
    changed.replace(changed.find(current), current.size(),
                    "\"format_version\": " + std::to_string(c.version));
    // A future version may have other fields: the version is still found.
    if (c.version > kTraceFormatVersion + 1) {
      changed.replace(changed.find("\"seed\""), 6, "\"new_field\"");
    }
    write_file(header_path, changed);
    Result<std::unique_ptr<TraceReader>> reader = TraceReader::open(dir);
    REQUIRE_FALSE(reader.is_ok());
    CHECK(reader.status().code() == StatusCode::kVersionMismatch);
    CHECK_THAT(reader.status().message(), Catch::Contains(c.word));
    CHECK_THAT(reader.status().message(), Catch::Contains("version " + std::to_string(c.version)));
    CHECK_THAT(reader.status().message(),
               Catch::Contains("version " + std::to_string(kTraceFormatVersion)));
    CHECK_THAT(reader.status().message(), Catch::Contains(dir));
  }
}

TEST_CASE("garbage after the last frame is detected", "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  std::vector<FrameEnd> ends = write_trace(dir, 100, 40, /*finish=*/true);
  const std::string events_path = dir + "/events";
  const std::string original = read_file(events_path);
  const std::string offset = "offset " + std::to_string(original.size());

  SECTION("complete trace, arbitrary garbage") {
    write_file(events_path, original + "garbage!");
    auto reader = open_reader(dir);
    uint64_t count = 0;
    Status status = read_and_check(reader.get(), &count);
    CHECK(count == 100);
    CHECK(status.code() == StatusCode::kCorruption);
    CHECK_THAT(status.message(), Catch::Contains(events_path));
    CHECK_THAT(status.message(), Catch::Contains(offset));
  }
  SECTION("complete trace, garbage that looks like a frame start") {
    write_file(events_path, original + original.substr(0, 10));
    auto reader = open_reader(dir);
    uint64_t count = 0;
    Status status = read_and_check(reader.get(), &count);
    CHECK(count == 100);
    CHECK(status.code() == StatusCode::kCorruption);
    CHECK_THAT(status.message(), Catch::Contains("unexpected bytes after the last frame"));
    CHECK_THAT(status.message(), Catch::Contains(offset));
  }
  SECTION("complete trace, a repeated frame") {
    write_file(events_path, original + original.substr(0, ends[0].offset));
    auto reader = open_reader(dir);
    uint64_t count = 0;
    Status status = read_and_check(reader.get(), &count);
    CHECK(count == 100);
    CHECK_THAT(status.message(), Catch::Contains("expected event 100"));
    CHECK_THAT(status.message(), Catch::Contains(offset));
  }
  SECTION("incomplete trace, arbitrary garbage") {
    make_incomplete(dir);
    write_file(events_path, original + std::string(50, '\0'));
    auto reader = open_reader(dir);
    uint64_t count = 0;
    Status status = read_and_check(reader.get(), &count);
    CHECK(count == 100);
    CHECK(status.code() == StatusCode::kCorruption);
    CHECK_THAT(status.message(), Catch::Contains(offset));
    // Errors are sticky.
    Event event;
    CHECK(reader->next(&event).status().message() == status.message());
  }
}

TEST_CASE("a complete trace whose trailer disagrees is corrupt", "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  write_trace(dir, 100, 40, /*finish=*/true);
  std::string trailer = read_file(dir + "/trailer");
  size_t at = trailer.find("\"event_count\": 100");
  REQUIRE(at != std::string::npos);
  trailer.replace(at, 18, "\"event_count\": 101");
  write_file(dir + "/trailer", trailer);
  auto reader = open_reader(dir);
  uint64_t count = 0;
  Status status = read_and_check(reader.get(), &count);
  CHECK(count == 100);
  CHECK(status.code() == StatusCode::kCorruption);
  CHECK_THAT(status.message(), Catch::Contains("trailer says 101"));

  REQUIRE(::unlink((dir + "/trailer").c_str()) == 0);
  CHECK(TraceReader::open(dir).status().code() == StatusCode::kCorruption);
}

TEST_CASE("check_events_size sees a cut-off or extended events file before reading it",
          "[format][corruption]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  write_trace(dir, 100, 40, /*finish=*/true);
  const std::string events_path = dir + "/events";
  const std::string original = read_file(events_path);
  CHECK(open_reader(dir)->check_events_size().is_ok());

  write_file(events_path, original.substr(0, original.size() - 1));
  Status cut = open_reader(dir)->check_events_size();
  CHECK(cut.code() == StatusCode::kCorruption);
  CHECK_THAT(cut.message(), Catch::Contains("it was cut off"));

  write_file(events_path, original + "x");
  Status extended = open_reader(dir)->check_events_size();
  CHECK(extended.code() == StatusCode::kCorruption);
  CHECK_THAT(extended.message(), Catch::Contains("bytes were added"));

  // An incomplete trace has no trailer to hold its size against.
  make_incomplete(dir);
  CHECK(open_reader(dir)->check_events_size().is_ok());
}

TEST_CASE("opening something that is not a trace says so", "[format]") {
  TempDir temp;
  CHECK(TraceReader::open(temp.sub("nothing")).status().code() == StatusCode::kNotFound);
  CHECK(TraceReader::open(temp.path()).status().code() == StatusCode::kNotFound);
  write_file(temp.sub("file"), "x");
  CHECK(TraceReader::open(temp.sub("file")).status().code() == StatusCode::kNotFound);
  std::string dir = temp.sub("trace");
  write_trace(dir, 1, 1, /*finish=*/false);
  REQUIRE(::unlink((dir + "/header").c_str()) == 0);
  CHECK(TraceReader::open(dir).status().code() == StatusCode::kCorruption);
}

TEST_CASE("the stream reader reads frames from memory like from a file", "[format][roundtrip]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  write_trace(dir, 1000, 300, /*finish=*/true);
  const std::string bytes = read_file(dir + "/events");
  MemoryByteSource source(bytes);
  EventStreamReader stream(&source, "'memory'");
  Event event;
  Event expected;
  uint64_t count = 0;
  while (true) {
    Result<bool> more = stream.next(&event);
    REQUIRE(more.is_ok());
    if (!more.value()) {
      break;
    }
    make_event(count++, &expected);
    CHECK(event == expected);
  }
  CHECK(count == 1000);
  CHECK(stream.frames_read() == 4);
  CHECK(stream.valid_bytes() == bytes.size());
}

}  // namespace
}  // namespace repro::format

namespace repro::format {
namespace {

// A finished trace with one read of `length` bytes from `offset` of a copy
// of `source` (stored by the writer); returns the copy's content id.
std::string write_file_copy_read(const std::string& dir, const std::string& source,
                                 uint64_t offset, size_t length) {
  auto writer = TraceWriter::create(dir, testing::make_header());
  REQUIRE(writer.is_ok());
  auto id = writer.value()->store_file(source);
  REQUIRE(id.is_ok());
  Event read;
  read.kind = EventKind::kSyscall;
  read.result = static_cast<int64_t>(length);
  read.syscall_flags = kSyscallReadsFileCopy;
  read.content_id = *id;
  read.file_offset = offset;
  read.writes = {{0x1000, std::string(length / 2, '?')},
                 {0x8000, std::string(length - length / 2, '?')}};
  REQUIRE(writer.value()->append(read).is_ok());
  REQUIRE(writer.value()->finish().is_ok());
  return *id;
}

Result<bool> read_one(const std::string& dir, Event* event) {
  auto reader = TraceReader::open(dir);
  REQUIRE(reader.is_ok());
  return reader.value()->next(event);
}

TEST_CASE("the reader fills a read's bytes in from its file copy", "[format][roundtrip]") {
  testing::TempDir temp;
  std::string content;
  for (int i = 0; i < 3000; ++i) {
    content += static_cast<char>('a' + i % 26);
  }
  testing::write_file(temp.sub("source"), content);

  SECTION("intact") {
    write_file_copy_read(temp.sub("trace"), temp.sub("source"), 100, 2000);
    Event event;
    auto more = read_one(temp.sub("trace"), &event);
    INFO(more.status().to_string());
    REQUIRE(more.is_ok());
    REQUIRE(event.writes.size() == 2);
    CHECK(event.writes[0].bytes + event.writes[1].bytes == content.substr(100, 2000));
  }
  SECTION("a range past the copy's end is damage") {
    write_file_copy_read(temp.sub("trace"), temp.sub("source"), 2000, 2000);
    Event event;
    auto more = read_one(temp.sub("trace"), &event);
    REQUIRE_FALSE(more.is_ok());
    CHECK(more.status().code() == StatusCode::kCorruption);
    CHECK_THAT(more.status().to_string(), Catch::Contains("ends before"));
  }
  SECTION("a damaged or missing copy is damage, not wrong bytes") {
    std::string id = write_file_copy_read(temp.sub("trace"), temp.sub("source"), 0, 2000);
    std::string copy = temp.sub("trace") + "/" + kFilesDirName + "/" + id;
    ::chmod(copy.c_str(), 0600);
    bool remove = GENERATE(false, true);
    if (remove) {
      ::unlink(copy.c_str());
    } else {
      testing::write_file(copy, std::string(content.size(), 'x'));
    }
    Event event;
    auto more = read_one(temp.sub("trace"), &event);
    REQUIRE_FALSE(more.is_ok());
    CHECK(more.status().code() == StatusCode::kCorruption);
  }
}

}  // namespace
}  // namespace repro::format
