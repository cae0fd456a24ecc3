// Preempting a thread that runs without syscalls while others wait.
//
// Replay finds a preemption point by watching the recorded instruction
// until registers and memory match (replayer/preemption_finder.cc). At an
// instruction it can move into a trampoline, a non-matching visit costs a
// few instructions inside the program; elsewhere it costs a ptrace stop,
// which adds up inside a hot loop. So:
// - A thread is preempted at the end of its time slice, after stepping it
//   to the next instruction replay can watch with a trampoline (at most
//   kMaxStepsToRelocatable instructions away, and never over a syscall).
// - Soon after a thread gets the CPU a "spin probe" checks whether it is
//   spinning: a breakpoint at the instruction it stands on; if the loop
//   comes back there with the same registers, the thread waits for
//   another one and is preempted at once instead of wasting its slice.
// - Where no such instruction is near, the old rule holds: preempt only a
//   spinning thread, or one that has run kMustPreemptAfter without a
//   syscall while others wait, so no thread starves.

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <vector>

#include "core/os/memory_hash.h"
#include "core/os/tracee.h"
#include "core/patch/instruction.h"
#include "core/syscalls/syscall_table.h"
#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {
namespace {

// How long a working thread may keep the CPU while others wait. Long enough
// that CPU-bound threads rarely need a costly preemption point; short
// enough that a thread spinning in a way the probe cannot see (its
// registers change every iteration) still lets the others progress.
constexpr auto kMustPreemptAfter = std::chrono::milliseconds(1000);

// The first probe of a run comes this soon after the thread got the CPU (or
// made its last syscall), so a spinning thread is caught after few turns of
// its loop: replay pays one stop per turn before the preemption point. Later
// probes come once per time slice. A probe costs two stops and a hash of
// writable memory.
constexpr auto kFirstProbeAfter = std::chrono::milliseconds(2);

// How far a thread is stepped looking for a relocatable instruction. A step
// costs two ptrace calls; loops built only of short instructions have none.
constexpr int kMaxStepsToRelocatable = 256;

// A syscall that was interrupted and has not been restarted yet: the
// kernel moves rip back onto the syscall instruction on the way to user
// mode, so a single step would run the syscall with the trap flag set (and
// r11 would save it), which replay does not do.
bool restart_pending(const os::Registers& regs) {
  return static_cast<int64_t>(regs.orig_rax) >= 0 &&
         syscalls::is_restart_result(static_cast<int64_t>(regs.rax));
}

}  // namespace

std::chrono::steady_clock::time_point RecordSession::interrupt_deadline() const {
  // With the chaos policy a slice is a stretch without a syscall: a thread
  // that makes syscalls gives way where the policy says, at one of them,
  // the same one in every run of a seed, never where a clock ran out.
  auto slice_end = (options_.chaos ? running_since_ : slice_start_) + policy_->time_slice();
  if (!probed_this_run_) {
    return std::min(running_since_ + kFirstProbeAfter, slice_end) + slice_waited_;
  }
  return slice_end + slice_waited_;
}

void RecordSession::start_slice(pid_t tid) {
  slice_start_ = std::chrono::steady_clock::now();
  slice_waited_ = {};
  slice_cpu_start_ns_ = cpu_time_slices_ ? os::thread_cpu_ns(tid) : std::nullopt;
}

bool RecordSession::deadline_reached_on_cpu(const Thread& t,
                                            std::chrono::steady_clock::time_point now) {
  if (now < interrupt_deadline()) {
    return false;
  }
  std::optional<uint64_t> cpu_ns = slice_cpu_start_ns_ ? os::thread_cpu_ns(t.tid) : std::nullopt;
  if (!cpu_ns || *cpu_ns < *slice_cpu_start_ns_) {
    return true;
  }
  auto on_cpu = std::chrono::nanoseconds(*cpu_ns - *slice_cpu_start_ns_);
  auto waited = std::chrono::duration_cast<std::chrono::steady_clock::duration>(now - slice_start_ - on_cpu);
  slice_waited_ = std::max(waited, std::chrono::steady_clock::duration::zero());
  return now >= interrupt_deadline();
}

Status RecordSession::on_interrupted(Thread& t) {
  REPRO_ASSIGN_OR_RETURN(bool in_fast_path, inside_fast_path_syscall(t));
  if (in_fast_path) {
    // Between the fast-path library's syscall and its record: let it
    // publish the record; the next interrupt comes at once.
    return resume_user(t);
  }
  if (!probed_this_run_) {
    return start_spin_probe(t);  // spinning already?
  }
  // The end of a time slice.
  REPRO_ASSIGN_OR_RETURN(StepOutcome outcome, step_to_relocatable(t));
  if (outcome == StepOutcome::kStoppedOtherwise) {
    return Status::ok();  // the main loop handles that stop next
  }
  auto ran = std::chrono::steady_clock::now() - running_since_;
  if (outcome == StepOutcome::kAtRelocatable ||
      ran >= std::max<std::chrono::steady_clock::duration>(kMustPreemptAfter,
                                                          20 * policy_->time_slice())) {
    REPRO_RETURN_IF_ERROR(log_preempt(t));
    policy_->on_preempted(t.index);
    release_cpu(t);
    make_ready(t);
    return Status::ok();
  }
  return start_spin_probe(t);
}

// Our PTRACE_INTERRUPT can reach a thread in the instant one of our traps
// fires (the step of a spin probe or of step_to_relocatable, the probe's
// int3): the kernel reports the interrupt's stop first, and the trap's
// SIGTRAP stays queued. Resumed as if nothing were pending, the thread
// would get that SIGTRAP as a signal of its own and die of it, and an int3
// left rip inside the probed instruction. So the trap is taken here: the
// thread, resumed, stops at once for it, before running any instruction.
Result<bool> RecordSession::take_trap_behind_interrupt(Thread& t) {
  bool stepped = std::exchange(t.step_trap_may_be_queued, false);
  if (!t.probing && !stepped) {
    return false;
  }
  REPRO_ASSIGN_OR_RETURN(uint64_t pending, os::pending_signals(t.tid));
  REPRO_ASSIGN_OR_RETURN(uint64_t blocked, os::signal_mask(t.tid));
  if ((pending & ~blocked & (uint64_t{1} << (SIGTRAP - 1))) == 0) {
    return false;  // our traps are never blocked: forcing one unblocks it
  }
  if (ptrace(PTRACE_CONT, t.tid, nullptr, 0) != 0) {
    return os::ptrace_error(errno, "resuming a thread to take its trap", t.tid);
  }
  REPRO_ASSIGN_OR_RETURN(int status, os::wait_for(t.tid));
  bool our_trap = os::is_sigtrap_stop(status);
  if (our_trap) {
    REPRO_ASSIGN_OR_RETURN(siginfo_t info, os::get_siginfo(t.tid));
    our_trap = info.si_code == TRAP_TRACE || info.si_code == SI_KERNEL;
  }
  if (our_trap && !t.probing) {
    // A step of step_to_relocatable's: the interrupt is still to be
    // served, with the thread at this stop, and resuming it drops the trap.
    return false;
  }
  // The probe's trap (it serves as the interrupt), or something else that
  // came instead (the program's own SIGTRAP, its end): handled next.
  t.interrupt_requested = false;
  deferred_stops_.emplace_front(t.tid, status);
  return true;
}

Result<RecordSession::StepOutcome> RecordSession::step_to_relocatable(Thread& t,
                                                                      bool hold_pending_signals) {
  // A run of several short instructions is a good point only where the
  // thread has been before in this walk (it goes round a loop) and no jump
  // seen so far lands inside the run; replay checks the same way.
  // A point where the flags are dead is better still: replay's check there
  // is cheaper (see conditional_trap.h). A good point with live flags is
  // passed once; taken when the thread comes back to it, after a turn of
  // its loop that offered nothing better.
  std::vector<uint64_t> seen;
  std::vector<uint64_t> landings;
  std::vector<uint64_t> passed_for_live_flags;
  auto good_enough = [&](uint64_t rip, const uint8_t* code) {
    if (patch::arithmetic_flags_dead(code, patch::kRunCodeBytes, rip) ||
        std::find(passed_for_live_flags.begin(), passed_for_live_flags.end(), rip) !=
            passed_for_live_flags.end()) {
      return true;
    }
    passed_for_live_flags.push_back(rip);
    return false;
  };
  uint64_t previous_end = 0;
  // The mask as the program has it, put back however this ends: a step's
  // trap unblocks SIGTRAP (os::sigtrap_blocked).
  REPRO_ASSIGN_OR_RETURN(const uint64_t program_mask, os::signal_mask(t.tid));
  struct MaskRestorer {
    pid_t tid;
    uint64_t mask;
    bool needed = false;
    ~MaskRestorer() {
      if (needed) {
        (void)os::set_signal_mask(tid, mask);  // a thread gone meanwhile needs none
      }
    }
  } restorer{t.tid, program_mask};
  for (int steps = 0;; ++steps) {
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    if (steps > 0 && regs.rip != previous_end) {
      landings.push_back(regs.rip);
    }
    uint8_t code[patch::kRunCodeBytes] = {};
    if (!os::read_memory(t.tid, regs.rip, code, sizeof code).is_ok()) {
      return StepOutcome::kNotFound;
    }
    if (restart_pending(regs)) {
      return StepOutcome::kNotFound;
    }
    std::vector<patch::Instruction> run = patch::displaceable_run(code, sizeof code, regs.rip);
    if (run.size() == 1 && good_enough(regs.rip, code)) {
      return StepOutcome::kAtRelocatable;
    }
    if (run.size() > 1 && std::find(seen.begin(), seen.end(), regs.rip) != seen.end()) {
      uint64_t end = regs.rip;
      for (const patch::Instruction& instruction : run) {
        end += instruction.length;
      }
      bool jumped_into = std::any_of(landings.begin(), landings.end(), [&](uint64_t landing) {
        return landing > regs.rip && landing < end;
      });
      auto read = [&](uint64_t address, uint8_t* out, size_t size) {
        return os::read_memory(t.tid, address, out, size).is_ok();
      };
      if (!jumped_into && !patch::may_be_entered_inside(read, regs.rip, end) &&
          good_enough(regs.rip, code)) {
        return StepOutcome::kAtRelocatable;
      }
    }
    patch::Instruction instruction = patch::decode_instruction(code, sizeof code, regs.rip);
    if (instruction.kind == patch::InstructionKind::kStop || steps == kMaxStepsToRelocatable) {
      return StepOutcome::kNotFound;
    }
    if (steps == 0 && hold_pending_signals) {
      // Checked only now: reading /proc costs more than the usual case,
      // a thread already at a good point. A pending signal would come at
      // the first step, before the one held back, where natively it comes
      // after: it stays blocked while the thread is stepped (a profiling
      // timer that fired again, a mask that let several through). A
      // SIGTRAP pending is one of our own traps: the thread is not stepped.
      REPRO_ASSIGN_OR_RETURN(uint64_t pending, os::pending_signals(t.tid));
      pending &= ~program_mask;
      if (pending & (uint64_t{1} << (SIGTRAP - 1))) {
        return StepOutcome::kNotFound;
      }
      if (pending != 0) {
        REPRO_RETURN_IF_ERROR(os::set_signal_mask(t.tid, program_mask | pending));
      }
    }
    restorer.needed = true;
    seen.push_back(regs.rip);
    previous_end = regs.rip + instruction.length;
    if (patch::repeated_string_at(code, sizeof code)) {
      // A rep movs/stos/lods would take a step per iteration (a memcpy of
      // a megabyte: a million). Replay can find a point inside it, but
      // each visit of the instruction before the point costs it two stops,
      // and memcpy's is visited often: the end of a slice runs it to its
      // end instead. A held signal is delivered inside it as it stands:
      // one point per signal. (Delivered after running the instruction
      // on, the signals of tests/programs/string_ops_signals_shared.c
      // made its replays diverge in two bytes of an exited thread's
      // stack; not understood yet.)
      if (hold_pending_signals) {
        return StepOutcome::kAtRelocatable;
      }
      REPRO_ASSIGN_OR_RETURN(bool at_end, run_to_breakpoint(t, previous_end));
      if (!at_end) {
        return StepOutcome::kStoppedOtherwise;
      }
      continue;
    }
    REPRO_ASSIGN_OR_RETURN(os::SingleStep step, os::single_step(t.tid));
    int status = step.wait_status;
    bool step_trap = step.trapped;
    if (!step_trap) {
      t.step_trap_may_be_queued = true;
      deferred_stops_.emplace_back(t.tid, status);
      return StepOutcome::kStoppedOtherwise;
    }
  }
}

Result<bool> RecordSession::run_to_breakpoint(Thread& t, uint64_t end) {
  uint64_t saved = 0;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, end, &saved, sizeof saved));
  const uint64_t trap = os::with_breakpoint(saved);
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, end, &trap, sizeof trap));
  Result<int> status = ptrace(PTRACE_CONT, t.tid, nullptr, 0) == 0
                           ? os::wait_for(t.tid)
                           : Result<int>(os::ptrace_error(errno, "running to a breakpoint", t.tid));
  Status restored = os::write_memory(t.tid, end, &saved, sizeof saved);
  REPRO_RETURN_IF_ERROR(status.status());
  bool trapped = os::is_sigtrap_stop(*status);
  os::Registers regs;
  if (trapped) {
    REPRO_ASSIGN_OR_RETURN(regs, os::get_registers(t.tid));
    trapped = regs.rip == end + 1;
  }
  if (!trapped) {
    deferred_stops_.emplace_back(t.tid, *status);  // a signal, a fault, its end
    return false;
  }
  REPRO_RETURN_IF_ERROR(restored);
  regs.rip = end;
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  return true;
}

Status RecordSession::start_spin_probe(Thread& t) {
  REPRO_ASSIGN_OR_RETURN(t.probe_registers, os::get_registers(t.tid));
  probed_this_run_ = true;
  start_slice(t.tid);
  uint8_t code[16] = {};
  if (restart_pending(t.probe_registers) ||
      !os::read_memory(t.tid, t.probe_registers.rip, code, sizeof code).is_ok() ||
      patch::decode_instruction(code, sizeof code, t.probe_registers.rip).kind ==
          patch::InstructionKind::kStop) {
    // Never step over a syscall: the flags it saves in r11 would carry the
    // trap flag, which replay does not reproduce. The thread is about to
    // make a syscall anyway, so it is not spinning.
    return resume_user(t);
  }
  REPRO_ASSIGN_OR_RETURN(t.probe_xstate_hash, os::hash_extended_registers(t.tid));
  REPRO_ASSIGN_OR_RETURN(t.probe_sigtrap_blocked, os::sigtrap_blocked(t.tid));
  t.probe_address = t.probe_registers.rip;
  t.probing = true;
  t.probe_armed = false;
  // Step off the instruction first: a trap armed under the thread's feet
  // would fire at once, with nothing changed, and look like a spin.
  t.state = Thread::State::kRunning;
  if (ptrace(PTRACE_SINGLESTEP, t.tid, nullptr, 0) != 0) {
    return os::ptrace_error(errno, "stepping", t.tid);
  }
  return Status::ok();
}

Status RecordSession::arm_spin_probe(Thread& t) {
  REPRO_RETURN_IF_ERROR(
      os::read_memory(t.tid, t.probe_address, &t.probe_original_word, sizeof t.probe_original_word));
  uint64_t trap = os::with_breakpoint(t.probe_original_word);
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, t.probe_address, &trap, sizeof trap));
  t.probe_armed = true;
  return resume_user(t);
}

Status RecordSession::remove_spin_probe(Thread& t) {
  t.probing = false;
  if (!t.probe_armed) {
    return Status::ok();
  }
  t.probe_armed = false;
  return os::write_memory(t.tid, t.probe_address, &t.probe_original_word,
                          sizeof t.probe_original_word);
}

bool RecordSession::is_spin_probe_hit(Thread& t, int wait_status) {
  if (!os::is_sigtrap_stop(wait_status)) {
    return false;
  }
  if (!t.probe_armed) {
    return true;  // the step off the probed instruction is done
  }
  auto regs = os::get_registers(t.tid);
  return regs.is_ok() && regs->rip == t.probe_address + 1;
}

Status RecordSession::on_spin_probe_hit(Thread& t) {
  if (t.probe_sigtrap_blocked) {
    REPRO_RETURN_IF_ERROR(os::block_sigtrap(t.tid));  // the step's or int3's trap unblocked it
  }
  if (!t.probe_armed) {
    return arm_spin_probe(t);
  }
  REPRO_RETURN_IF_ERROR(remove_spin_probe(t));
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  regs.rip = t.probe_address;
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  bool same = os::same_user_state(regs, t.probe_registers);
  if (same) {
    REPRO_ASSIGN_OR_RETURN(uint64_t xstate_hash, os::hash_extended_registers(t.tid));
    same = xstate_hash == t.probe_xstate_hash;
  }
  // Back at the same instruction with the same registers: whatever a turn
  // of this loop does, it computes nothing new, so it waits for another
  // thread (a loop that only reads or counts changes registers and keeps
  // its slice). No memory hash: a probe is cheap even for large programs.
  if (same && !ready_.empty()) {
    REPRO_ASSIGN_OR_RETURN(StepOutcome outcome, step_to_relocatable(t));
    if (outcome == StepOutcome::kStoppedOtherwise) {
      return Status::ok();
    }
    REPRO_RETURN_IF_ERROR(log_preempt(t));
    policy_->on_preempted(t.index);
    release_cpu(t);
    make_ready(t);
    return Status::ok();
  }
  start_slice(t.tid);
  return resume_user(t);
}

}  // namespace repro::tracer
