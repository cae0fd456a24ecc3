// libFuzzer target for everything the trace reader parses. Each input goes
// through three parsers:
//   1. the `events` stream reader (lz4 frames -> frame content -> events),
//      exactly as TraceReader drives it, over the bytes in memory;
//   2. the frame content decoder alone, so mutations reach the event
//      encoding without having to get past lz4's checksums; whatever decodes
//      is re-encoded and must decode to the same events;
//   3. the header and trailer JSON parsers; a header that parses must
//      survive a serialise/parse round trip unchanged;
//   4. TraceReader on a whole trace directory, so the checks between the
//      files (version, complete marker, trailer counts against the events)
//      are reached too. The input is cut as HEADER \0 TRAILER \0 EVENTS
//      (the JSON files hold no NUL); a trace with a trailer gets the
//      `complete` marker, one without is incomplete. Inputs without two
//      NULs skip this parser.
//   5. the failure-stacks data of a kFailureStacks event (whole input): what
//      decodes is re-encoded and must decode to the same.
// Any crash, sanitizer report or failed property (__builtin_trap) is a bug.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/format/event_codec.h"
#include "core/format/event_stream.h"
#include "core/format/failure_stacks.h"
#include "core/format/trace_reader.h"
#include "core/format/trace_header.h"
#include "core/format/trace_trailer.h"

namespace {

using repro::format::Event;

void fuzz_event_stream(std::string_view bytes) {
  repro::format::MemoryByteSource source(bytes);
  repro::format::EventStreamReader stream(&source, "'fuzz input'");
  Event event;
  while (true) {
    repro::Result<bool> more = stream.next(&event);
    if (!more.is_ok() || !more.value()) {
      break;
    }
  }
}

void fuzz_frame_content(const uint8_t* data, size_t size) {
  repro::format::FrameDecoder decoder;
  if (!decoder.reset(data, size).is_ok()) {
    return;
  }
  std::vector<Event> events;
  Event event;
  while (true) {
    repro::Result<bool> more = decoder.next(&event);
    if (!more.is_ok()) {
      return;
    }
    if (!more.value()) {
      break;
    }
    events.push_back(event);
  }
  // Whatever decoded must survive re-encoding.
  repro::format::FrameEncoder encoder;
  encoder.begin(decoder.first_event_index());
  for (const Event& decoded : events) {
    if (!encoder.add(decoded).is_ok()) {
      __builtin_trap();
    }
  }
  std::string_view content = encoder.finish();
  repro::format::FrameDecoder again;
  if (!again.reset(reinterpret_cast<const uint8_t*>(content.data()), content.size()).is_ok()) {
    __builtin_trap();
  }
  for (const Event& expected : events) {
    repro::Result<bool> more = again.next(&event);
    if (!more.is_ok() || !more.value() || !(event == expected)) {
      __builtin_trap();
    }
  }
  repro::Result<bool> end = again.next(&event);
  if (!end.is_ok() || end.value()) {
    __builtin_trap();
  }
}

void fuzz_json(std::string_view bytes) {
  std::string text(bytes);
  (void)repro::format::header_format_version(text);
  (void)repro::format::header_from_json_checked(text);
  (void)repro::format::trailer_from_json(text);
  repro::Result<repro::format::TraceHeader> header = repro::format::header_from_json(text);
  if (header.is_ok()) {
    repro::Result<repro::format::TraceHeader> again =
        repro::format::header_from_json(repro::format::header_to_json(header.value()));
    if (!again.is_ok() || !(again.value() == header.value())) {
      __builtin_trap();
    }
  }
}

// One directory for the whole run, rewritten for each input: in /dev/shm
// when there is one, so that the files cost no disk writes. Removed at exit.
const std::string& trace_dir() {
  static const std::string dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string pattern = base + "/repro-fuzz-trace-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      __builtin_trap();
    }
    return pattern;
  }();
  static const bool cleanup_registered = [] {
    return std::atexit([] {
      for (const char* name : {"header", "trailer", "events", "complete"}) {
        ::unlink((trace_dir() + "/" + name).c_str());
      }
      ::rmdir(trace_dir().c_str());
    }) == 0;
  }();
  (void)cleanup_registered;
  return dir;
}

void write_file(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    __builtin_trap();
  }
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) {
      __builtin_trap();
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  ::close(fd);
}

void fuzz_trace_dir(std::string_view bytes) {
  size_t first = bytes.find('\0');
  if (first == std::string_view::npos) {
    return;
  }
  size_t second = bytes.find('\0', first + 1);
  if (second == std::string_view::npos) {
    return;
  }
  const std::string& dir = trace_dir();
  std::string_view trailer = bytes.substr(first + 1, second - first - 1);
  write_file(dir + "/header", bytes.substr(0, first));
  write_file(dir + "/events", bytes.substr(second + 1));
  const std::string trailer_path = dir + "/trailer";
  const std::string marker = dir + "/complete";
  if (!trailer.empty()) {
    write_file(trailer_path, trailer);
    write_file(marker, "");
  } else {
    ::unlink(trailer_path.c_str());
    ::unlink(marker.c_str());
  }
  repro::Result<std::unique_ptr<repro::format::TraceReader>> reader =
      repro::format::TraceReader::open(dir);
  if (!reader.is_ok()) {
    return;
  }
  Event event;
  while (true) {
    repro::Result<bool> more = reader.value()->next(&event);
    if (!more.is_ok() || !more.value()) {
      break;
    }
  }
}

void fuzz_failure_stacks(std::string_view bytes) {
  repro::Result<repro::format::FailureStacks> stacks = repro::format::decode_failure_stacks(bytes);
  if (!stacks.is_ok()) {
    return;
  }
  repro::Result<repro::format::FailureStacks> again =
      repro::format::decode_failure_stacks(repro::format::encode_failure_stacks(stacks.value()));
  if (!again.is_ok() || !(again.value() == stacks.value())) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz_event_stream(bytes);
  fuzz_frame_content(data, size);
  fuzz_json(bytes);
  fuzz_trace_dir(bytes);
  fuzz_failure_stacks(bytes);
  return 0;
}
