// libFuzzer target for everything the trace reader parses. Each input goes
// through three parsers:
//   1. the `events` stream reader (lz4 frames -> frame content -> events),
//      exactly as TraceReader drives it, over the bytes in memory;
//   2. the frame content decoder alone, so mutations reach the event
//      encoding without having to get past lz4's checksums; whatever decodes
//      is re-encoded and must decode to the same events;
//   3. the header and trailer JSON parsers; a header that parses must
//      survive a serialise/parse round trip unchanged.
// Any crash, sanitizer report or failed property (__builtin_trap) is a bug.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/format/event_codec.h"
#include "core/format/event_stream.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz_event_stream(bytes);
  fuzz_frame_content(data, size);
  fuzz_json(bytes);
  return 0;
}
