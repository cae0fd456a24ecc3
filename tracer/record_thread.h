#pragma once
// RecordSession::Thread: the recorder's state for one tracee thread. Only
// the record session's own files include this.

#include <signal.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/os/tracee.h"
#include "tracer/record_session.h"

namespace repro::tracer {

struct RecordSession::Thread {
  pid_t tid = 0;
  pid_t pid = 0;  // thread group id
  uint32_t index = 0;
  // kHeld: stopped at a syscall's entry until OutputOrder lets it in.
  // kEmulatedStop: stopped by another recorded thread's (emulated) ptrace.
  // kJobStopped: in a group-stop (SIGSTOP and friends) until SIGCONT.
  enum class State {
    kStarting,
    kReady,
    kRunning,
    kInSyscall,
    kExiting,
    kHeld,
    kEmulatedStop,
    kJobStopped
  } state = State::kStarting;
  bool entered_logged = false;
  bool interrupt_requested = false;
  // When it last went into the kernel for a syscall (kInSyscall).
  std::chrono::steady_clock::time_point in_kernel_since;
  bool exit_logged = false;
  // A sibling's exit by SIGKILL is logged: SIGKILL ends the whole process,
  // and replay ends it whole at that event, wherever this thread stands.
  bool process_killed = false;
  bool stepping_into_handler = false;  // single-stepping into a signal handler
  bool handler_signal_synchronous = false;  // ... of a fault
  std::string xstate_before_handler;  // its FPU/SSE/AVX state, for the frame
  siginfo_t handler_siginfo{};        // the siginfo delivered, for the frame
  // Its syscall was broken off by our PTRACE_INTERRUPT and is being
  // restarted by the kernel: the next entry continues it.
  bool restarting = false;
  // A stop it has reached already, while parked at the exit of a syscall a
  // signal broke off (follow_restart_result): resuming it hands this stop
  // to the main loop instead of running the thread.
  std::optional<int> stop_ahead;
  // A single step of ours ended with another stop than its trap, which
  // may be queued behind it (RecordSession::take_trap_behind_interrupt).
  bool step_trap_may_be_queued = false;
  // A breakpoint at the loop the thread was interrupted in, to tell a spin
  // (registers repeat) from work (they change): see record_preemption.cc.
  bool probing = false;
  bool probe_armed = false;  // the breakpoint is in place (after one step)
  uint64_t probe_address = 0;
  uint64_t probe_original_word = 0;
  os::Registers probe_registers{};
  uint64_t probe_xstate_hash = 0;
  bool probe_sigtrap_blocked = false;  // to block again after the probe's traps (os::block_sigtrap)
  // Its fast-path buffer (record_fast_path.cc), once the preloaded library
  // registered one; shared with a CLONE_VM child that runs on it (vfork).
  std::shared_ptr<FastPathBuffer> fast_path;
  // An asynchronous signal held back while stepping to a preemption point
  // and sent again (tgkill) because another stop came first; its siginfo
  // is put back when it arrives.
  std::optional<siginfo_t> reraised_signal;
  pid_t vfork_child = 0;        // set while this thread waits in vfork for this child
  bool vfork_exit_held = false;  // its vfork returned; logged once the child execs or exits
  int syscall_number = -1;
  // While kJobStopped: the state it goes back to when SIGCONT ends the
  // stop (kInSyscall: a syscall the stop broke into; else it waits for the
  // CPU), and its rsp at the stop (its registers cannot be read meanwhile).
  State state_before_job_stop = State::kRunning;
  uint64_t job_stop_sp = 0;
  // The recorded thread that traces this one (record_ptrace.cc), 0 if none;
  // the wait status of its emulated stop (0: not stopped), and whether a
  // wait of its tracer has reported that stop.
  pid_t emulated_tracer = 0;
  os::Registers entry_regs{};  // at its last syscall entry (emulated GETREGS in the kernel)
  int emulated_stop_status = 0;
  bool emulated_stop_reported = false;
  // Attached by TRACEME or ATTACH (not SEIZE): a successful exec stops it
  // with SIGTRAP, as the kernel does.
  bool emulated_exec_sigtrap = false;
  bool emulated_exitkill = false;  // PTRACE_O_EXITKILL: its tracer's end kills it
  // The signal of its emulated stop (GETSIGINFO). Pending: t stands at its
  // real delivery-stop, and its tracer passes it on (signal_to_deliver,
  // delivered when t next runs) or drops it. Otherwise (the SIGSTOP of an
  // attach, the SIGTRAP after exec) a signal passed on is sent anew, and
  // signal_let_through lets it past the tracer when it arrives.
  std::optional<siginfo_t> emulated_signal;
  bool emulated_signal_is_pending = false;
  int signal_to_deliver = 0;
  int signal_let_through = 0;
  // A tracer at the entry of a wait4/waitid that waits for a traced thread
  // to stop: it runs again, to answer, when one does or one is gone.
  bool held_for_tracee = false;
  bool tracee_wait_gives_up = false;  // nothing else can run: it fails (ECHILD)
  bool tracee_wait_interrupted = false;  // its kernel wait broken off for a tracee's stop
  // Held at its syscall's entry by OutputOrder (it enters when scheduled),
  // and until when, for an exit_group or execve waiting on a writer.
  bool held_for_output = false;
  std::optional<std::chrono::steady_clock::time_point> hold_deadline;
  bool hold_expired = false;  // its exit hold gave up: it goes in regardless
  // rsp at the entry of its last syscall (unchanged while inside it); for a
  // new thread that has not run yet, the stack its clone gave it.
  uint64_t syscall_entry_sp = 0;
  std::array<uint64_t, 6> args{};
  // The word the kernel clears and wakes when the thread exits
  // (CLONE_CHILD_CLEARTID, set_tid_address): a joiner waits on it.
  uint64_t clear_child_tid = 0;
  std::string exec_filename;  // the path execve was given, read at its entry
  // Sites patched at an exec stop, logged after the execve's syscall
  // event: replay has the thread stopped there, not at the exec stop.
  std::vector<patch::PatchedFile> exec_patches;
};

}  // namespace repro::tracer
