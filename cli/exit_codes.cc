#include "cli/exit_codes.h"

#include <fmt/core.h>

#include <cstdio>

namespace repro::cli {

int exit_code_for(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kCorruption:
    case StatusCode::kVersionMismatch: return kExitBadTrace;
    case StatusCode::kDivergence: return kExitDivergence;
    default: return kExitFailure;
  }
}

int report_error(const Status& status) {
  fmt::print(stderr, "repro: error: {}\n", status.message());
  return exit_code_for(status.code());
}

const char* exit_codes_help() {
  return "Exit status:\n"
         "  record, replay, ci  the program's own status; 128+N if it died of signal N\n"
         "  0   success (other commands)\n"
         "  1   error of the environment (permissions, i/o, program not found)\n"
         "  64  bad command line\n"
         "  65  corrupt, truncated or incompatible trace\n"
         "  70  internal error in repro\n"
         "  75  replay diverged from the trace (a report is printed)\n"
         "  76  record, replay: every thread waited for another; repro ended the program\n";
}

}  // namespace repro::cli
