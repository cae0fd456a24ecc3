#pragma once
// Runs of `repro` as a child process, as hunting makes them (a chaos
// recording, a confirming replay), and what each did: its status, the
// program's output, whether repro found a deadlock. Each run writes DIR
// (the trace) and DIR.out, DIR.err (its stdout and stderr). Thread-safe (no
// state).

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "hunter/trigger.h"

namespace repro::hunter {

/// The shell-style status of a raw wait status (128+N for signal N).
int shell_status(int wait_status);

/// Starts `args` with stdin from /dev/null and stdout, stderr to the files.
Result<pid_t> spawn(const std::vector<std::string>& args, const std::string& out,
                    const std::string& err);

/// Waits for child `pid`; its raw wait status.
Result<int> wait_for(pid_t pid);

/// `repro record --chaos` of `argv` into `dir` with these settings.
struct ChaosRun {
  std::string repro_path;
  std::vector<std::string> argv;
  uint64_t seed = 0;
  uint32_t depth = 3;
  uint32_t points = 0;
  std::set<uint32_t> skipped_changes;
  std::set<uint32_t> skipped_starvations;
  std::string dir;
};
std::vector<std::string> record_args(const ChaosRun& run);

/// What the run that wrote DIR.out and DIR.err did, given its wait status.
RunResult read_result(const std::string& dir, int wait_status, bool timed_out);

/// The message of a line `repro: error: MESSAGE` in a run's stderr file
/// (repro itself failed), without that prefix, or "".
std::string repro_error(const std::string& err_file);

/// "N change points, M starvation windows" as `record --chaos` said them
/// in its stderr file; false if it said nothing of the kind.
bool chaos_decisions(const std::string& err_file, uint32_t* changes, uint32_t* starvations);

/// The whole of a file written by a run ("" if it cannot be read).
std::string read_file(const std::string& path);

/// Removes DIR, DIR.out and DIR.err.
void remove_run(const std::string& dir);

/// Renames DIR, DIR.out and DIR.err to TO, TO.out and TO.err (TO's removed first).
Status move_run(const std::string& dir, const std::string& to);

/// Replays `trace` once (`--allow-incomplete` for a run stopped by a
/// timeout), writing TRACE.replay.out and TRACE.replay.err; what it did.
Result<RunResult> replay_once(const std::string& repro_path, const std::string& trace,
                              bool timed_out);

}  // namespace repro::hunter
