#pragma once
// DivergenceReport: what replay says when the program stops following the
// trace. It names the event, the thread, what the trace expected and what
// the program did, with a symbolised backtrace and the code at the stop.

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/diag/mapped_module.h"

namespace repro::replayer {

struct DivergenceReport {
  uint64_t event_index = 0;
  uint32_t thread = 0;
  pid_t live_tid = 0;
  pid_t live_pid = 0;
  std::string expected;
  std::string observed;
  /// The files replay mapped as anonymous memory (MappedFiles), so the
  /// backtrace can unwind through them and name their functions.
  std::vector<diag::MappedModule> mapped_modules;
};

/// Builds the kDivergence Status whose message is the full report,
/// including a backtrace and disassembly of the (stopped) thread.
Status divergence(const DivergenceReport& report);

/// "read(3, 0x7ffd..., 4096)": a syscall with its arguments.
std::string describe_syscall(int number, const std::array<uint64_t, 6>& args);

}  // namespace repro::replayer
