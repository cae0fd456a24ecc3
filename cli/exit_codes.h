#pragma once
// The exit statuses of repro's own failures. `record` and `replay` otherwise
// exit with the program's own status (128+N when it died of signal N), so
// these overlap with statuses a program may choose; the error line on stderr
// (prefixed "repro: ") tells them apart. Listed in `repro --help` and
// docs/cli.md.

#include "core/base/status.h"

namespace repro::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;       // an error of the environment (permissions, i/o)
constexpr int kExitUsage = 64;        // bad command line (EX_USAGE)
constexpr int kExitBadTrace = 65;     // corrupt, truncated or incompatible trace (EX_DATAERR)
constexpr int kExitInternal = 70;     // a broken invariant in repro itself (EX_SOFTWARE)
constexpr int kExitDivergence = 75;   // replay did not follow the trace
constexpr int kExitDeadlock = 76;     // the program deadlocked; repro ended it (record, replay)

/// Prints "repro: error: <message>" and returns the exit status for `status`.
int report_error(const Status& status);
/// The exit status for a status code.
int exit_code_for(StatusCode code);
/// The text of the "exit status" section of the help.
const char* exit_codes_help();

}  // namespace repro::cli
