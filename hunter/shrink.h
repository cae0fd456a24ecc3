#pragma once
// Shrink: after a hunt caught a failure, finds a smaller schedule that still
// fails, and names the racing pair.
//
// The caught run is recorded again with the same seed, leaving out one of
// its priority change points or starvation windows at a time (record
// --skip-changes / --skip-starvations), and each left out stays out where
// the failure still shows. One seed makes one schedule
// (tracer/record_wakeups.cc), so what remains is what the failure needs.
// The racing pair is the last switch between two threads before the
// failure: which thread ran last before the failing one took over, after
// which syscall or preemption, and where both stood then (a replay stopped
// at that event, `replay --stop-at`). No performance counters involved.
// Not thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "hunter/trigger.h"

namespace repro::hunter {

struct ShrinkOptions {
  std::string repro_path;
  std::vector<std::string> argv;  // the program and its arguments
  std::vector<Trigger> triggers;  // the hunt's
  std::string trigger;            // the one that fired (its text)
  int status = 0;                 // the caught run's shell-style status
  uint64_t seed = 0;              // the caught run's chaos settings
  uint32_t depth = 3;
  uint32_t points = 0;
  std::string trace;              // the caught trace (with TRACE.err)
};

struct ShrinkOutcome {
  uint32_t changes = 0;       // change points in the caught run
  uint32_t starvations = 0;   // starvation windows in it
  std::vector<uint32_t> needed_changes;      // of those, the ones the failure needs
  std::vector<uint32_t> needed_starvations;
  uint32_t recordings = 0;    // made while shrinking
  /// TRACE.min, the failing run with the smaller schedule; "" if nothing
  /// could be left out (the caught schedule is as small as it gets).
  std::string smaller_trace;
  /// The racing pair, a few lines of text ("" if no switch came before the
  /// failure); also written to TRACE.race.
  std::string racing_pair;
};

/// Errors: io_error (spawning, renaming), invalid_argument (TRACE.err does
/// not say what the chaos policy did).
Result<ShrinkOutcome> shrink(const ShrinkOptions& options);

}  // namespace repro::hunter
