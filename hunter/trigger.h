#pragma once
// Trigger: what makes a hunted run a failure worth keeping. Parsed from
// `--until` words; evaluated on a finished run's status and output. Pure
// functions; thread-safe.

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace repro::hunter {

struct Trigger {
  enum class Kind { kExit, kExitCode, kSignal, kOutput, kDeadlock, kTimeout };
  Kind kind = Kind::kExit;
  int number = 0;             // kExitCode: the status; kSignal: the signal (0: any)
  double seconds = 0;         // kTimeout
  std::string text;           // as given, for messages
  std::optional<std::regex> pattern;  // kOutput
};

/// What a run did, as the hunter saw it.
struct RunResult {
  int shell_status = 0;  // the exit code, or 128+N for death by signal N
  bool timed_out = false;
  std::string output;    // the program's stdout and stderr (repro's own lines left out)
  bool deadlocked = false;  // repro found every thread waiting for another and ended it
};

/// Parses one `--until` word: exit (any non-zero status), exit:N,
/// signal, signal:NAME (SEGV, SIGSEGV or a number), output:REGEX (ECMAScript,
/// searched in stdout and stderr), deadlock, timeout:SECS. invalid_argument
/// otherwise.
Result<Trigger> parse_trigger(const std::string& word);

/// The first of `triggers` that `run` fires, or nullptr.
const Trigger* fired(const std::vector<Trigger>& triggers, const RunResult& run);

}  // namespace repro::hunter
