#pragma once
// ReplayWatcher: lets a debugger (gdb_server.h) see the replay one
// instruction at a time without changing what the replay does.
//
// While the watcher asks for it, the session runs a thread that it would
// let run freely (PTRACE_CONT) one instruction at a time instead
// (PTRACE_SINGLESTEP), and shows the watcher the thread before each
// instruction: breakpoints are addresses compared with rip, watchpoints
// values compared with what they were. Nothing is written into the
// program (no int3, no debug register, no page protection), so the
// replay's own checks (the memory hash of a preemption point, the code
// rdtsc patching reads) see exactly what they see without a debugger,
// and a host whose debug registers never fire (some virtual machines)
// loses nothing.
//
// Called on the replay thread only, with the thread in a ptrace-stop.

#include "core/base/status.h"
#include "core/os/tracee.h"
#include "replayer/replay_thread.h"

namespace repro::replayer {

class ReplayWatcher {
 public:
  virtual ~ReplayWatcher() = default;
  /// Whether `t` is to run one instruction at a time from now on.
  virtual bool wants_instruction_steps(const ReplayThread& t) = 0;
  /// How a thread came to stand where the watcher is shown it.
  enum class Arrival {
    kParked,   // stopped there by the replay (an event, a step of its own)
    kStepped,  // by one instruction (a syscall the replay answered included)
  };
  /// `t` is stopped before the instruction at `regs.rip`. The watcher may
  /// stop the replay here (talk to gdb) before returning. Returns whether
  /// it did (the thread's registers may have been changed); an error
  /// stops the replay.
  virtual Result<bool> at_instruction(const ReplayThread& t, const os::Registers& regs,
                                      Arrival arrival) = 0;
};

}  // namespace repro::replayer
