#pragma once
// Escalation: what `repro ci` does around a command. The command runs
// natively first, with no tracing, so a passing run costs nothing and
// leaves nothing behind; only when it fails does repro hunt for the same
// failure under chaos recording (hunt.h), a failure that showed once
// natively being likely to show again in some recordings.
//
// This file holds the native run, the choice of trigger from how the
// command ended, and the text of the outcome (plain lines, a GitHub Actions
// workflow command, a step-summary line). All pure except run_native, which
// installs signal handlers for the time of the run and so is not
// thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "hunter/hunt.h"

namespace repro::hunter {

/// How a process ended.
struct ProcessEnd {
  int exit_code = 0;  // meaningful when signal == 0
  int signal = 0;     // non-zero: it was killed by this signal

  /// From a raw waitpid() status of a process that has ended.
  static ProcessEnd from_wait_status(int wait_status);
  /// The exit code, or 128 + the signal, as a shell reports it.
  int shell_status() const { return signal != 0 ? 128 + signal : exit_code; }
  bool failed() const { return shell_status() != 0; }
  /// "exit status 3", "killed by SIGABRT".
  std::string text() const;
};

struct NativeRun {
  ProcessEnd end;
  /// SIGINT or SIGTERM when repro itself got one during the run (passed on
  /// to the command), else 0.
  int interrupted_by = 0;
};

/// Runs `argv` (argv[0] looked up in PATH) as a child with repro's stdin,
/// stdout and stderr, and waits for it. A SIGINT or SIGTERM sent to repro
/// is passed on to it, unless it came from the terminal, which sent it to
/// the command too. Returns how it ended; not_found or io_error when it
/// cannot be started. Not thread-safe.
Result<NativeRun> run_native(const std::vector<std::string>& argv);

/// The `--until` word that catches the failure `end` again: `exit:N`, or
/// `signal:N` for a process killed by signal N. Requires: end.failed().
std::string failure_trigger(const ProcessEnd& end);

/// `argv` as one line a shell would read back (arguments quoted as needed).
std::string command_line(const std::vector<std::string>& argv);

/// Everything the outcome of an escalation is told from.
struct Escalation {
  std::string command;                 // command_line() of the command
  ProcessEnd native;                   // how its native run ended (failed)
  std::vector<std::string> triggers;   // what the hunt looked for
  uint64_t runs_allowed = 0;           // -n
  std::optional<HuntOutcome> outcome;  // absent: the hunt itself failed
  std::string hunt_error;              // then: why
};

/// What to say about an escalation.
struct EscalationReport {
  bool captured = false;           // a failing trace was kept
  std::vector<std::string> lines;  // for stderr, each to follow "repro: ci: "
  std::string workflow_command;    // a GitHub Actions `::notice` or `::warning` line
  std::string summary_line;        // one markdown line for $GITHUB_STEP_SUMMARY
};

EscalationReport describe(const Escalation& escalation);

}  // namespace repro::hunter
