// Event encoding and decoding throughput on a synthetic syscall-heavy
// stream, lz4 frame compression included (the recorder pays for both).
//
// Streams (thread 0 throughout):
//   Getppid: only getppid-like events (syscall 110, no args, result 4242).
//   Mixed:   90% getppid; 5% read(3, buf, 64) = 64 with 64 random bytes
//            written; 5% clock_gettime(CLOCK_MONOTONIC, ts) = 0 with a
//            16-byte timespec written. Random bytes are the worst case for
//            lz4; the pattern is 64Ki events long so lz4's 64 KiB window
//            never sees it repeat.
// Counters: items_per_second is events/s; compressed_bytes_per_event is
// what one event costs in `events`. Targets: >= 10M events/s encoding on one
// core, <= 8 compressed bytes per getppid-like event.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/format/event_codec.h"
#include "core/format/event_stream.h"
#include "core/format/trace_format.h"

namespace repro::format {
namespace {

constexpr size_t kPatternEvents = 64 * 1024;

uint64_t next_random(uint64_t* state) {
  uint64_t x = (*state += 0x9E3779B97F4A7C15ull);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Event getppid_event() {
  Event event;
  event.kind = EventKind::kSyscall;
  event.syscall_number = 110;
  event.result = 4242;
  return event;
}

std::vector<Event> make_stream(bool mixed) {
  std::vector<Event> events;
  events.reserve(kPatternEvents);
  uint64_t rng = 42;
  uint64_t clock_ns = 1'000'000'000;
  for (size_t i = 0; i < kPatternEvents; ++i) {
    Event event = getppid_event();
    uint64_t pick = mixed ? next_random(&rng) % 100 : 0;
    if (pick >= 90 && pick < 95) {
      event.syscall_number = 0;  // read
      event.args = {3, 0x7ffd4a3c1000, 64, 0, 0, 0};
      event.result = 64;
      std::string bytes(64, '\0');
      for (size_t j = 0; j < bytes.size(); j += 8) {
        uint64_t word = next_random(&rng);
        bytes.replace(j, 8, reinterpret_cast<const char*>(&word), 8);
      }
      event.writes.push_back({event.args[1], std::move(bytes)});
    } else if (pick >= 95) {
      event.syscall_number = 228;  // clock_gettime
      event.args = {1, 0x7ffd4a3c2000, 0, 0, 0, 0};
      event.result = 0;
      clock_ns += 1000 + next_random(&rng) % 5000;
      uint64_t timespec[2] = {clock_ns / 1'000'000'000, clock_ns % 1'000'000'000};
      event.writes.push_back(
          {event.args[1], std::string(reinterpret_cast<const char*>(timespec), sizeof(timespec))});
    }
    events.push_back(std::move(event));
  }
  return events;
}

// Encodes `events` repeatedly into frames of kFrameRawBytes and (if
// `compress`) lz4-compresses each frame, as TraceWriter does minus write().
void encode_stream(benchmark::State& state, const std::vector<Event>& events, bool compress) {
  FrameEncoder encoder;
  ByteBuffer compressed;
  uint64_t event_index = 0;
  uint64_t raw_bytes = 0;
  uint64_t compressed_bytes = 0;
  uint64_t events_in_frames = 0;
  encoder.begin(0);
  for (auto _ : state) {
    for (const Event& event : events) {
      Status status = encoder.add(event);
      benchmark::DoNotOptimize(status);
      ++event_index;
      if (encoder.content_bytes() >= kFrameRawBytes) {
        std::string_view content = encoder.finish();
        raw_bytes += content.size();
        events_in_frames += encoder.event_count();
        if (compress) {
          if (!compress_frame(content, &compressed).is_ok()) {
            state.SkipWithError("compression failed");
            return;
          }
          compressed_bytes += compressed.size();
        }
        encoder.begin(event_index);
      }
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(event_index));
  if (events_in_frames > 0) {
    state.counters["raw_bytes_per_event"] =
        static_cast<double>(raw_bytes) / static_cast<double>(events_in_frames);
    if (compress) {
      state.counters["compressed_bytes_per_event"] =
          static_cast<double>(compressed_bytes) / static_cast<double>(events_in_frames);
    }
  }
}

// The compressed `events` bytes of `repeats` copies of the stream.
std::string encode_to_frames(const std::vector<Event>& events, int repeats) {
  FrameEncoder encoder;
  ByteBuffer compressed;
  std::string out;
  uint64_t index = 0;
  encoder.begin(0);
  auto flush = [&]() {
    if (encoder.event_count() == 0 || !compress_frame(encoder.finish(), &compressed).is_ok()) {
      return;
    }
    out.append(compressed.view());
    encoder.begin(index);
  };
  for (int r = 0; r < repeats; ++r) {
    for (const Event& event : events) {
      (void)encoder.add(event);
      ++index;
      if (encoder.content_bytes() >= kFrameRawBytes) {
        flush();
      }
    }
  }
  flush();
  return out;
}

void decode_stream(benchmark::State& state, const std::vector<Event>& events) {
  const int kRepeats = 4;
  const std::string bytes = encode_to_frames(events, kRepeats);
  uint64_t decoded = 0;
  Event event;
  for (auto _ : state) {
    MemoryByteSource source(bytes);
    EventStreamReader reader(&source, "'bench'");
    while (true) {
      Result<bool> more = reader.next(&event);
      if (!more.is_ok()) {
        state.SkipWithError(more.status().message().c_str());
        return;
      }
      if (!more.value()) {
        break;
      }
      ++decoded;
    }
    benchmark::DoNotOptimize(event);
  }
  state.SetItemsProcessed(static_cast<int64_t>(decoded));
  state.SetBytesProcessed(static_cast<int64_t>(bytes.size()) * state.iterations());
  state.counters["compressed_bytes_per_event"] =
      static_cast<double>(bytes.size()) / static_cast<double>(events.size() * kRepeats);
}

void BM_EventEncode_Getppid(benchmark::State& state) {
  static const std::vector<Event> events = make_stream(false);
  encode_stream(state, events, true);
}
BENCHMARK(BM_EventEncode_Getppid);

void BM_EventEncode_Mixed(benchmark::State& state) {
  static const std::vector<Event> events = make_stream(true);
  encode_stream(state, events, true);
}
BENCHMARK(BM_EventEncode_Mixed);

void BM_EventEncode_MixedNoCompression(benchmark::State& state) {
  static const std::vector<Event> events = make_stream(true);
  encode_stream(state, events, false);
}
BENCHMARK(BM_EventEncode_MixedNoCompression);

void BM_EventDecode_Getppid(benchmark::State& state) {
  static const std::vector<Event> events = make_stream(false);
  decode_stream(state, events);
}
BENCHMARK(BM_EventDecode_Getppid);

void BM_EventDecode_Mixed(benchmark::State& state) {
  static const std::vector<Event> events = make_stream(true);
  decode_stream(state, events);
}
BENCHMARK(BM_EventDecode_Mixed);

}  // namespace
}  // namespace repro::format
