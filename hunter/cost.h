#pragma once
// Cost: what recording costs a user's own program (`repro bench`). Runs the
// command natively, recorded and replayed, RUNS times each, alternating so
// that a busy moment of the host falls on all three alike, and gives the
// medians, the ratios to native and the trace's size. Each run is a child
// process (hunter/runs.h); the program's output goes to /dev/null. Not
// thread-safe.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace repro::hunter {

struct CostOptions {
  std::string repro_path;
  std::vector<std::string> argv;  // the command and its arguments
  uint32_t runs = 5;
  std::string work_dir;           // where the traces go (removed after each run)
  /// Called after each round with a progress line.
  std::function<void(const std::string& line)> on_progress;
};

struct CostOutcome {
  std::vector<double> native_seconds, record_seconds, replay_seconds;
  std::vector<uint64_t> trace_bytes;  // on disk, per recording
  int native_status = 0;              // shell-style, of the first native run
  // Medians.
  double native = 0, record = 0, replay = 0;
  uint64_t trace = 0;
  double record_ratio() const { return native > 0 ? record / native : 0; }
  double replay_ratio() const { return native > 0 ? replay / native : 0; }
  /// Trace megabytes per second of native run time.
  double trace_mb_per_second() const { return native > 0 ? trace / 1e6 / native : 0; }
};

/// Errors: invalid_argument (no command, runs 0), io_error (spawning), and
/// a recording or replay that failed as repro (its `repro: error:` line) or
/// ended otherwise than the native run did.
Result<CostOutcome> measure_cost(const CostOptions& options);

}  // namespace repro::hunter
