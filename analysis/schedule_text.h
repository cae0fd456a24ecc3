#pragma once
// The schedule as a trace shows it: which thread ran after which, and why
// the one before stopped (preempted after its time slice, blocked in a
// syscall, exited), for strace-style lines between events:
//
//   --- t0 -> t1 (t0 preempted) ---
//   --- t1 -> t0 (t1 blocked in futex) ---
//
// ScheduleTracker sees the events in trace order. Not thread-safe.

#include <cstdint>
#include <optional>
#include <string>

#include "core/format/event.h"

namespace repro::analysis {

/// A change of the running thread, seen before an event.
struct ThreadSwitch {
  uint32_t from = 0;
  uint32_t to = 0;
  std::string why;  // "preempted", "blocked in futex", "exited", ... or empty

  /// "--- t0 -> t1 (t0 preempted) ---".
  std::string text() const;
};

class ScheduleTracker {
 public:
  /// Call for each event of the trace, in order (also for events a filter
  /// hides). Returns the switch that happened before `event`: when it is
  /// an event of another thread than the one that ran last. Thread-start
  /// and thread-exit events say what happened to a thread rather than
  /// that it ran, so they never make a switch.
  std::optional<ThreadSwitch> observe(const format::Event& event);

 private:
  std::optional<uint32_t> running_;
  std::string why_;  // why `running_` would stop, from its last event
};

}  // namespace repro::analysis
