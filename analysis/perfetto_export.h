#pragma once
// The run as a timeline: a trace exported as Chrome trace-event JSON, the
// {"traceEvents": [...]} object format that the Perfetto UI
// (ui.perfetto.dev) and chrome://tracing open.
//
// Why it looks the way it does:
//
//  - Time. A trace records no clock per event (core/format/event.h: the
//    header has the start time, rdtsc events the values the program read,
//    and nothing else has a time). What it has is a total order: exactly one
//    thread runs at a time, and an event of thread T says "T ran from the
//    previous event up to here". So the timeline uses a logical clock: event
//    N spans [N, N + 1) microseconds (kMicrosecondsPerEvent). Widths are
//    event counts, not durations; the JSON's otherData says so.
//  - Tracks. One per recorded thread, grouped by process: pid is the
//    recorded pid of the thread's process, tid the thread's recorded tid
//    (made unique: a tid the kernel reused for a later thread gets an id
//    above any Linux pid). process_name and thread_name metadata events
//    name them ("lost_update", "t1"), so tracks read as `repro dump`'s t1.
//  - Slices. On each track, "running" slices cover the consecutive events
//    of that thread (it held the CPU token between two scheduling points:
//    another thread's event, a preemption, a blocking syscall). A syscall
//    that completed at once is a one-event slice inside its "running" slice;
//    a syscall the thread blocked in (syscall-entered ... syscall) is a
//    slice of its own from entry to completion, between two "running"
//    slices, while other tracks run. A syscall's args hold its arguments
//    and result as `repro dump` prints them, and what it read from memory
//    (paths). Signals, preemptions, rdtsc, execs, mapped files and thread
//    starts and exits are instant events; a deadlock is a global instant.
//    Every slice and instant carries its event's index in args.event, to
//    find it in `repro dump`.
//  - Order. Events are written as the trace is read, in event order, so
//    timestamps never go back on any track; slices whose end is not known
//    when they start ("running", blocking syscalls) are written as B/E pairs,
//    all others as X with dur, and every B gets its E (at the end of the
//    trace for what is still open there).

#include <cstdint>
#include <iosfwd>
#include <memory>

#include "core/base/status.h"
#include "core/format/event.h"
#include "core/format/trace_header.h"
#include "core/format/trace_reader.h"

namespace repro::analysis {

/// The logical clock: how far apart two consecutive events are on the
/// timeline, in the trace-event format's unit (microseconds).
constexpr uint64_t kMicrosecondsPerEvent = 1;

/// What an export wrote, for the command's summary line.
struct TimelineSummary {
  uint64_t events = 0;                // trace events read
  uint64_t processes = 0;             // process tracks
  uint64_t threads = 0;               // thread tracks
  uint64_t trace_events_written = 0;  // JSON trace events (metadata included)
};

/// Turns a trace's events, fed in order, into trace-event JSON written to
/// an output stream. The stream is borrowed and must outlive the exporter;
/// JSON is written as events are added. Not thread-safe.
class TimelineExporter {
 public:
  /// Writes the opening of the JSON object. `header` is copied.
  TimelineExporter(const format::TraceHeader& header, std::ostream* out);
  ~TimelineExporter();
  TimelineExporter(const TimelineExporter&) = delete;
  TimelineExporter& operator=(const TimelineExporter&) = delete;

  /// Adds the next event; `index` is its number in the trace, one more than
  /// the previous call's. Requires: finish() not called yet.
  void add(uint64_t index, const format::Event& event);

  /// Closes every slice still open at the end of the events, writes the
  /// metadata events and otherData (`complete`: whether the trace is), and
  /// ends the JSON. Returns the summary, or io_error if the stream failed.
  /// Requires: called once.
  Result<TimelineSummary> finish(bool complete);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads every event of `reader` (from its current position) and writes
/// the timeline to *out. Errors: the reader's (corruption: the JSON written
/// so far is cut off), or io_error from the stream.
Result<TimelineSummary> export_timeline(format::TraceReader* reader, std::ostream* out);

}  // namespace repro::analysis
