#pragma once
// Operations on one stopped tracee thread: registers, memory, siginfo,
// ptrace event messages. Thin wrappers that turn errno into Status; ESRCH
// (the thread died under us) becomes kTraceeDied so callers can reap it.
//
// Requires: the thread is in a ptrace-stop of the calling thread (memory
// reads of a process also work while only another of its threads is
// stopped). Stateless, so thread-compatible.

#include <signal.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/base/status.h"

namespace repro::os {

using Registers = user_regs_struct;

Result<Registers> get_registers(pid_t tid);
/// Puts the six syscall arguments in rdi, rsi, rdx, r10, r8, r9.
void set_syscall_args(Registers& regs, const std::array<uint64_t, 6>& args);
Status set_registers(pid_t tid, const Registers& regs);
/// The extended (FPU/SSE/AVX) state as raw bytes (PTRACE_GETREGSET NT_X86_XSTATE).
Result<std::string> get_extended_registers(pid_t tid);
Result<siginfo_t> get_siginfo(pid_t tid);
Status set_siginfo(pid_t tid, const siginfo_t& info);
Result<unsigned long> get_event_message(pid_t tid);

/// Reads `length` bytes at `address` of `tid`'s address space.
Status read_memory(pid_t tid, uint64_t address, void* out, size_t length);
Result<std::string> read_memory(pid_t tid, uint64_t address, size_t length);
/// Appends to *out the first `length` bytes of the buffers of the iovec
/// array at `iovecs` (`count` entries, at most IOV_MAX read): what a
/// writev of `length` bytes wrote.
Status read_gathered(pid_t tid, uint64_t iovecs, uint64_t count, uint64_t length, std::string* out);
/// Reads a NUL-terminated string of at most `max_length` bytes.
Result<std::string> read_c_string(pid_t tid, uint64_t address, size_t max_length = 4096);
/// Writes bytes, also into read-only mappings (falls back to PTRACE_POKEDATA).
Status write_memory(pid_t tid, uint64_t address, const void* data, size_t length);

/// Writes bytes through /proc/PID/mem, which also reaches read-only and
/// executable private mappings; fast for large ranges.
Status write_memory_forced(pid_t pid, uint64_t address, const void* data, size_t length);

/// True if two register sets describe the same user-visible state: every
/// general register, rip, rsp, fs/gs base, and eflags except TF and RF
/// (which depend on how the thread was stopped, not on what it computed).
bool same_user_state(const Registers& a, const Registers& b);
/// The registers that make same_user_state false, as "rax 0x1 != 0x2, ...".
std::string describe_register_differences(const Registers& actual, const Registers& expected);

enum class SignalDisposition { kCaught, kIgnored, kDefault };
/// What delivering `signal` to `tid` would do: run a handler, nothing (set
/// to SIG_IGN, or ignored by default), or the default action (terminate,
/// stop). Read from /proc/TID/status.
Result<SignalDisposition> signal_disposition(pid_t tid, int signal);
/// True for the signals whose default action stops the process (SIGSTOP,
/// SIGTSTP, SIGTTIN, SIGTTOU): a PTRACE_EVENT_STOP carrying one is a
/// group-stop.
inline bool is_job_stop_signal(int signal) {
  return signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU;
}
/// A single step ends with a SIGTRAP the kernel forces on the thread, and
/// forcing a signal unblocks it for good: a thread that had SIGTRAP blocked
/// (a handler installed with a full sa_mask, a program that blocks every
/// signal) no longer has after repro stepped it, and programs see their
/// mask (rt_sigprocmask runs untraced, and signal frames save it). Record
/// and replay step at different places, so each step must leave the mask
/// as it was: read whether SIGTRAP is blocked before (PTRACE_GETSIGMASK),
/// block it again after (PTRACE_SETSIGMASK). Require: `tid` ptrace-stopped.
Result<bool> sigtrap_blocked(pid_t tid);
Status block_sigtrap(pid_t tid);
/// The blocked-signal mask of a ptrace-stopped thread (bit N-1: signal N),
/// read and set with PTRACE_GETSIGMASK/SETSIGMASK.
Result<uint64_t> signal_mask(pid_t tid);
Status set_signal_mask(pid_t tid, uint64_t mask);
/// The signals pending for `tid` or its process, blocked or not.
Result<uint64_t> pending_signals(pid_t tid);

/// The scheduler state of a thread (/proc/TID/stat, field 3): 'R', 'S',
/// 'D', 't', ...; 0 if it cannot be read (the thread is gone).
char scheduler_state(pid_t tid);

/// Whether thread `tid`, inside a syscall, sleeps there: scheduler state
/// 'S', still after it had the chance to run once. The kernel marks a
/// thread asleep before it looks whether it must sleep at all (wait4 then
/// scans its children, and finds one that exited): preempted in that
/// window (our own wakeup does it when we share its CPU), it reads 'S',
/// yet returns at once. Such a thread is still on a run queue, which
/// /proc/TID/wchan tells where it names sleepers' functions (it reads "0"
/// for a thread on a run queue since Linux 5.16); the 'S' must also hold
/// after a sched_yield.
bool asleep_in_kernel(pid_t tid);

/// The CPU time thread `tid` has run, in nanoseconds (/proc/TID/schedstat,
/// field 1); nullopt where the kernel has no schedstat or the thread is
/// gone.
std::optional<uint64_t> thread_cpu_ns(pid_t tid);

/// Waits for thread `tid` (a tracee of the caller) to report a stop or its
/// end, until `deadline`, giving it the CPU meanwhile (it may share ours):
/// its raw wait status, or nullopt if none came (or it is not our tracee).
std::optional<int> wait_for_stop_until(pid_t tid, std::chrono::steady_clock::time_point deadline);

/// Waits for the next stop or end of thread `tid` (a tracee of the
/// caller): its wait status. Errors: waitpid's.
Result<int> wait_for(pid_t tid);

/// True for the signal-delivery stop of a SIGTRAP (a single step's or an
/// int3's trap), not a ptrace event stop, which reports SIGTRAP too.
inline bool is_sigtrap_stop(int wait_status) {
  return WIFSTOPPED(wait_status) && (static_cast<unsigned>(wait_status) >> 16) == 0 &&
         WSTOPSIG(wait_status) == SIGTRAP;
}

/// The 8 bytes of code `word` with an int3 in place of its first byte: a
/// breakpoint, written over the instruction where `word` was read.
inline uint64_t with_breakpoint(uint64_t word) { return (word & ~uint64_t{0xff}) | 0xcc; }

/// One PTRACE_SINGLESTEP of stopped thread `tid`, waited for: its wait
/// status, and whether that stop is the step's own trap (SIGTRAP with
/// TRAP_TRACE) rather than something else that came first (a signal, an
/// exit). Errors: tracee_died, or waitpid's.
struct SingleStep {
  int wait_status = 0;
  bool trapped = false;
};
Result<SingleStep> single_step(pid_t tid);

/// Status for a failed ptrace call: kTraceeDied for ESRCH, io_error otherwise.
Status ptrace_error(int errnum, const char* what, pid_t tid);

}  // namespace repro::os
