#pragma once
// TraceReader: reads a trace directory written by TraceWriter.
//
// Never trusts the bytes: every length and count is checked against what
// remains, and a bad trace yields a corruption Status naming the file and the
// byte offset of the bad frame, never a crash. An incomplete trace whose
// `events` ends in a partial frame is read up to the last whole frame, then
// next() returns false; a trace marked complete with a cut-off or extra tail
// returns a corruption error there instead. Either way the valid prefix has
// been returned and dropped_bytes() says how much was dropped.
//
// Not thread-safe. The reader owns its file descriptors.

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/format/event.h"
#include "core/format/trace_header.h"

namespace repro::format {

enum class TraceState {
  kComplete,    // `complete` marker and trailer present
  kIncomplete,  // recording crashed, was killed, or is still running
};

class TraceReader {
 public:
  /// Opens DIR and parses its header. Errors: not_found (no such trace),
  /// version_mismatch (naming both versions), corruption.
  static Result<std::unique_ptr<TraceReader>> open(const std::string& dir);
  ~TraceReader();

  const TraceHeader& header() const;
  TraceState state() const;
  /// Event count from the trailer (complete traces only, else 0).
  uint64_t trailer_event_count() const;
  /// For a complete trace, without reading the events: corruption if the
  /// `events` file is not as long as the trailer says (cut off or
  /// extended), so a replay can refuse it before it runs anything. OK for an
  /// incomplete trace. Damage inside the file shows only when next() reads it.
  Status check_events_size() const;

  /// For readers that must work on a trace whose files/ is damaged (dump):
  /// a read stored against a file copy that is missing or damaged comes
  /// back with empty write bytes instead of an error; its content_id and
  /// file_offset still say where the bytes were.
  void tolerate_missing_file_copies();

  /// Reads the next event into *event. Returns true with an event, false at
  /// the end of the valid events, or an error (corruption: file + offset).
  /// After the end, truncated() says whether a partial frame was dropped.
  Result<bool> next(Event* event);

  /// Number of events returned so far.
  uint64_t events_read() const;
  /// Bytes of `events` after the last whole frame (a cut-off final frame).
  uint64_t dropped_bytes() const;
  /// After next() returned false (or, for a complete trace, an error): true
  /// if `events` ended inside a frame, which was dropped.
  bool truncated() const;

  /// Path of a stored file copy by content id; corruption if the id is not
  /// one or the copy is absent (both are damage to the trace).
  Result<std::string> file_path(const std::string& content_id) const;
  const std::string& dir() const;

 private:
  class Impl;
  explicit TraceReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace repro::format
