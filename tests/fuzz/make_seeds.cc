// Writes the seed inputs of trace_reader_fuzz into the directory given as
// argv[1]. Run by hand after a format change (target make_fuzz_seeds) and
// commit the result; the seeds are small on purpose (a few KiB each).

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/format/event_codec.h"
#include "core/format/event_stream.h"
#include "core/format/trace_format.h"
#include "core/format/trace_header.h"
#include "core/format/trace_trailer.h"
#include "tests/unit/format/format_test_util.h"

namespace {

using repro::format::ByteBuffer;
using repro::format::Event;
using repro::format::FrameEncoder;

bool write(const std::string& dir, const std::string& name, std::string_view bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

// Frame content of events [first, first + count) of the test stream.
std::string frame_content(uint64_t first, uint64_t count) {
  FrameEncoder encoder;
  encoder.begin(first);
  Event event;
  for (uint64_t i = first; i < first + count; ++i) {
    repro::format::testing::make_event(i, &event);
    // Keep seeds small: cap the bulky byte strings.
    if (event.writes.size() == 1 && event.writes[0].bytes.size() > 24) {
      event.writes[0].bytes.resize(24);
    }
    if (event.registers.size() > 24) {
      event.registers.resize(24);
    }
    if (event.signal_info.size() > 24) {
      event.signal_info.resize(24);
    }
    if (event.data.size() > 24) {
      event.data.resize(24);
    }
    if (!encoder.add(event).is_ok()) {
      std::abort();
    }
  }
  return std::string(encoder.finish());
}

std::string compressed(const std::string& content) {
  ByteBuffer out;
  if (!repro::format::compress_frame(content, &out).is_ok()) {
    std::abort();
  }
  return std::string(out.view());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 64;
  }
  std::string dir = argv[1];
  std::string frame0 = compressed(frame_content(0, 40));
  std::string frame1 = compressed(frame_content(40, 40));
  bool ok = true;
  ok &= write(dir, "events_two_frames", frame0 + frame1);
  ok &= write(dir, "events_truncated", frame0 + frame1.substr(0, frame1.size() / 2));
  ok &= write(dir, "frame_content", frame_content(0, 60));
  repro::format::TraceHeader header = repro::format::testing::make_header();
  header.format_version = 1;
  header.cpu = {"GenuineIntel", 6, 85, 7, "fffa3203:178bfbff:d19f4fbb:0040069c:bc000400"};
  header.argv.push_back("\xff\xfe");
  ok &= write(dir, "header.json", repro::format::header_to_json(header));
  ok &= write(dir, "trailer.json",
              repro::format::trailer_to_json({80, frame0.size() + frame1.size()}));
  // Whole trace directories (HEADER \0 TRAILER \0 EVENTS, see the target):
  // a complete trace, and an incomplete one cut inside its second frame.
  header.format_version = repro::format::kTraceFormatVersion;
  std::string header_json = repro::format::header_to_json(header);
  std::string trailer_json =
      repro::format::trailer_to_json({80, frame0.size() + frame1.size()});
  ok &= write(dir, "trace_dir_complete",
              header_json + '\0' + trailer_json + '\0' + frame0 + frame1);
  ok &= write(dir, "trace_dir_incomplete",
              header_json + '\0' + '\0' + frame0 + frame1.substr(0, frame1.size() / 2));
  return ok ? 0 : 1;
}
