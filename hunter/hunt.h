#pragma once
// Hunt: records a program again and again under the chaos scheduler, a new
// seed each run, until a trigger fires; keeps that run's trace and
// replays it once to confirm that it reproduces the failure.
//
// Each run is a `repro record --chaos` child process (the binary itself),
// so runs are isolated from each other and `jobs` of them run at once.
// Passing runs' traces are deleted as soon as they end. Not thread-safe.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "hunter/shrink.h"
#include "hunter/trigger.h"

namespace repro::hunter {

struct HuntOptions {
  std::string repro_path;         // the repro binary that records and replays
  std::vector<std::string> argv;  // the program and its arguments
  uint64_t runs = 1000;           // at most this many recordings
  unsigned jobs = 1;              // recordings at once
  std::vector<Trigger> triggers;  // empty: `exit`
  uint32_t depth = 3;
  /// Change points are spread over this many syscall exits; 0: as many as
  /// a first plain recording of the program made.
  uint32_t points = 0;
  std::string out_dir;            // where traces go; created if missing
  uint64_t first_seed = 1;
  uint32_t shard = 0;             // with `shards`: seeds first_seed + shard + k * shards
  uint32_t shards = 1;
  /// Go on after a failure: all `runs` are made and every failing trace is
  /// kept and replayed once.
  bool keep_going = false;
  /// Shrink each confirmed failure's schedule and name its racing pair
  /// (hunter/shrink.h).
  bool shrink = true;
  /// Called with a progress line now and then (`live`: may be redrawn).
  std::function<void(const std::string& line, bool live)> on_progress;
};

/// One failing run, kept.
struct CaughtFailure {
  uint64_t seed = 0;
  std::string trace;          // its trace directory
  std::string trigger;        // which trigger fired
  int status = 0;             // its shell-style status
  bool reproduced = false;    // the replay failed the same way
  std::string replay_summary; // what the confirming replay did
  std::optional<ShrinkOutcome> shrunk;  // with HuntOptions::shrink, once confirmed
  std::string shrink_error;   // why shrinking failed, if it did
};

struct HuntOutcome {
  uint64_t runs = 0;  // recordings made (the measuring one not counted)
  /// The failing runs, in the order they ended: at most one without
  /// `keep_going`.
  std::vector<CaughtFailure> catches;
  uint32_t points = 0;        // the spread used
  bool caught() const { return !catches.empty(); }
};

/// Runs the hunt. Errors: invalid_argument (no program), io_error (the
/// output directory, spawning), or what the measuring recording reported.
Result<HuntOutcome> hunt(const HuntOptions& options);

}  // namespace repro::hunter
