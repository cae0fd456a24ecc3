// Finding a recorded preemption point again without hardware counters.
//
// Between two events only one thread runs, so its state evolves
// deterministically from the last event. The recorder named the point by
// the registers, a hash of the FPU/SSE state and a hash of writable memory.
// Replay puts a breakpoint at the recorded instruction and stops at the
// first visit whose state matches all three: an identical state has an
// identical future, so the first match is as good as the recorded one.

#include <fmt/core.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <xxhash.h>

#include <cstring>

#include "core/os/memory_hash.h"
#include "replayer/divergence.h"
#include "replayer/replay_session.h"

namespace repro::replayer {
Status ReplaySession::find_preemption_point(ReplayThread& t, const format::Event& event) {
  os::Registers recorded;
  if (event.registers.size() != sizeof recorded) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("event #{} has registers of {} bytes", event_index_,
                                     event.registers.size()));
  }
  std::memcpy(&recorded, event.registers.data(), sizeof recorded);

  auto matches = [&]() -> Result<bool> {
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    if (!os::same_user_state(regs, recorded)) {
      return false;
    }
    REPRO_ASSIGN_OR_RETURN(std::string xstate, os::get_extended_registers(t.tid));
    if (XXH3_64bits(xstate.data(), std::min<size_t>(xstate.size(), 416)) !=
        event.extended_registers_hash) {
      return false;
    }
    REPRO_ASSIGN_OR_RETURN(uint64_t memory_hash, os::hash_writable_memory(t.pid));
    return memory_hash == event.memory_hash;
  };

  // A thread parked at a seccomp stop has not returned from its syscall yet;
  // the skip it will take leaves the registers as they are now, bar orig_rax.
  REPRO_ASSIGN_OR_RETURN(bool already, matches());
  if (already) {
    return Status::ok();
  }
  const uint64_t target = recorded.rip;
  uint64_t original_word = 0;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, target, &original_word, sizeof original_word));
  uint64_t trap_word = (original_word & ~uint64_t{0xff}) | 0xcc;
  auto insert = [&] { return os::write_memory(t.tid, target, &trap_word, sizeof trap_word); };
  auto remove = [&] { return os::write_memory(t.tid, target, &original_word, sizeof original_word); };

  REPRO_RETURN_IF_ERROR(insert());
  REPRO_RETURN_IF_ERROR(resume(t));
  for (uint64_t visits = 0;; ++visits) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    int event_code = static_cast<int>(static_cast<unsigned>(status) >> 16);
    if (!WIFSTOPPED(status) || event_code != 0) {
      stashed_stops_[t.tid].push_front(status);
      (void)remove();
      if (WIFSTOPPED(status) && event_code == PTRACE_EVENT_SECCOMP) {
        stashed_stops_[t.tid].pop_front();
        t.where = ReplayThread::Where::kParked;
        REPRO_ASSIGN_OR_RETURN(os::Registers r, os::get_registers(t.tid));
        return diverged(t, fmt::format("a preemption at rip {:#x}", target),
                        fmt::format("{} (after {} visits to that instruction)",
                                    describe_syscall(static_cast<int>(r.orig_rax),
                                                     {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9}),
                                    visits));
      }
      return diverged(t, fmt::format("a preemption at rip {:#x}", target), "the thread stopped otherwise");
    }
    if (WSTOPSIG(status) != SIGTRAP) {
      REPRO_RETURN_IF_ERROR(resume(t));  // a signal not in the trace here
      continue;
    }
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    if (regs.rip != target + 1) {
      REPRO_RETURN_IF_ERROR(resume(t));
      continue;
    }
    regs.rip = target;
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
    REPRO_RETURN_IF_ERROR(remove());
    t.where = ReplayThread::Where::kParked;
    REPRO_ASSIGN_OR_RETURN(bool found, matches());
    if (found) {
      return Status::ok();
    }
    // Not yet: execute the real instruction, then set the trap again.
    REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SINGLESTEP));
    REPRO_ASSIGN_OR_RETURN(int step_status, wait_stop(t));
    if (!WIFSTOPPED(step_status) || (static_cast<unsigned>(step_status) >> 16) != 0) {
      stashed_stops_[t.tid].push_front(step_status);
      return diverged(t, fmt::format("a preemption at rip {:#x}", target),
                      "a syscall or exit while stepping towards it");
    }
    REPRO_RETURN_IF_ERROR(insert());
    REPRO_RETURN_IF_ERROR(resume(t));
  }
}

}  // namespace repro::replayer
