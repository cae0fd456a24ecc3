#pragma once
// RecordSession: runs a program and every thread and process it creates
// under ptrace, one thread at a time, and writes what happened to a trace.
//
// Why it is built this way (see docs/recording.md for the long form):
// - Exactly one tracee thread runs user code at any moment (the "current"
//   thread); all others sit in a ptrace-stop or inside a syscall. The order
//   of events in the trace is therefore the order of everything observable,
//   and replay can enforce it with no clock and no counter.
// - A thread that enters a syscall which may block (futex wait, read of a
//   pipe, wait4...) while another thread is ready is let into the kernel and
//   the CPU token passes on; a kSyscallEntered event marks the point, and the
//   kSyscall event at its exit comes whenever the kernel lets it return.
// - A thread that runs without syscalls past its time slice while others
//   are ready is interrupted; the point is named by its registers and a hash
//   of writable memory (kPreempt), which replay can find again.
// - Asynchronous signals are delivered where the thread stands when the
//   kernel reports them, with the point named the same way.
// - Scheduling choices are made by a replaceable SchedulingPolicy.
//
// Not thread-safe. One session records one program tree.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/scoped_fd.h"
#include "core/base/status.h"
#include "core/fastpath/fastpath_abi.h"
#include "core/format/trace_writer.h"
#include "core/patch/rdtsc_patcher.h"
#include "tracer/syscall_site_patcher.h"
#include "tracer/deadlock.h"
#include "tracer/file_read_references.h"
#include "tracer/pipe_data_references.h"
#include "tracer/output_order.h"
#include "tracer/scheduling_policy.h"
#include "tracer/syscall_recorder.h"

namespace repro::tracer {

/// Default RecordOptions::snapshot_budget_bytes. Page copies only help a
/// divergence report show the recorded bytes, so they must stay a small
/// part of a trace, yet cover the first preemption of the programs we
/// record whole: a small C program has 15-60 non-zero writable pages
/// (tests/programs), CPython 3.11 about 1700 (6.5 MiB) at its first
/// preemption after start-up. 16 MiB covers that twice over; measured, a
/// recording of python3 with two threads (through pyenv's shell shims) used
/// 14 MiB of copies, which grew its events from 1.0 to 4.9 MB beside 30 MB
/// of files/. Too small shows as reports that say the trace holds no copy
/// of the page; too large, as traces that grow by the budget.
constexpr uint64_t kDefaultSnapshotBudgetBytes = uint64_t{16} << 20;
/// Long enough for a program's children to finish their exit after it,
/// short enough that a daemon does not keep a CI job waiting.
constexpr std::chrono::milliseconds kDefaultLinger{10000};

struct RecordOptions {
  std::string trace_dir;                 // must not exist yet
  std::vector<std::string> argv;         // argv[0] is the program as the user named it
  std::chrono::milliseconds time_slice{50};
  uint64_t seed = 0;                     // the chaos policy's, when `chaos`
  /// Schedule with the seeded chaos policy (its seed is `seed`, its base
  /// slice `time_slice`) instead of round robin.
  bool chaos = false;
  /// Preload the fast-path library (librepro_preload.so) and let its
  /// syscalls run without a stop (record_fast_path.cc). Off with chaos:
  /// its syscalls are not scheduling points.
  bool fast_path = true;
  /// The library to preload; empty: found next to the repro binary.
  std::string fast_path_library;
  uint32_t chaos_depth = 3;
  uint32_t chaos_points = ChaosOptions{}.expected_points;  // over how many syscall exits
  std::set<uint32_t> chaos_skipped_changes;      // see ChaosOptions
  std::set<uint32_t> chaos_skipped_starvations;
  bool pin_to_one_cpu = true;            // tracer and tracees share one CPU (cheaper stops)
  /// Called with a warning line (the host runs repro degraded, ...).
  std::function<void(const std::string&)> on_warning;
  /// Bytes of page copies that preempt events may carry in all (0: none).
  uint64_t snapshot_budget_bytes = kDefaultSnapshotBudgetBytes;
  /// How long processes the program leaves running (daemons, stopped
  /// children) are still recorded once its first process is gone, before
  /// repro stops them with SIGKILL; nullopt: for as long as they run.
  std::optional<std::chrono::milliseconds> linger = kDefaultLinger;
  /// Called with a line about the recording's progress (leftover processes).
  std::function<void(const std::string&)> on_notice;
  /// Variables whose NAME one of these matches (regex_search) are stored
  /// in the header without their values (format/env_redaction.h); the
  /// program still gets the real values.
  std::vector<std::regex> redact_env;
};

struct RecordOutcome {
  int wait_status = 0;        // raw wait status of the program's first process
  size_t leftovers_stopped = 0;  // processes repro killed once linger ran out
  uint64_t event_count = 0;
  bool interrupted = false;   // repro was told to stop; the trace is incomplete
  format::TscMode tsc_mode = format::TscMode::kTrap;
  uint64_t rdtsc_sites_patched = 0;  // patching mode: sites replaced by traps
  /// What the scheduling policy did of its own accord (chaos: how many
  /// change points and starvation windows came), or "".
  std::string scheduler_decisions;
  /// Non-empty if the program deadlocked and repro ended it (deadlock.h):
  /// what each thread waited for, with backtraces. The trace is complete.
  std::string deadlock;
};

class RecordSession {
 public:
  /// Spawns the program (stopped at its first instruction) and creates the
  /// trace. Errors: not_found (no such program), invalid_argument (trace
  /// dir exists), io_error (ptrace not permitted, ...).
  static Result<std::unique_ptr<RecordSession>> start(const RecordOptions& options);
  ~RecordSession();

  /// Records until every tracee is gone, then completes the trace. On a
  /// failure the trace is flushed and left incomplete.
  Result<RecordOutcome> run();

 private:
  struct Thread;
  /// A thread's fast-path buffer in the tracee: where it is, and how far
  /// its records went into the trace already.
  struct FastPathBuffer {
    uint64_t address = 0;
    uint32_t drained_offset = 0;
  };
  enum class StepResult { kContinue, kDone };

  explicit RecordSession(const RecordOptions& options);
  Status begin(pid_t pid, const std::string& exe_path);
  Result<StepResult> step();

  // Stop handlers.
  Status on_syscall_entry(Thread& t);
  Result<bool> follow_restart_result(Thread& t);
  Status on_syscall_exit(Thread& t);
  /// Lets t, stopped at its syscall's entry, into the kernel, passing the
  /// CPU on where the syscall may block; or holds it there (OutputOrder).
  Status enter_syscall(Thread& t);
  Status hold_for_output(Thread& t, std::optional<OutputTarget> target);
  /// Makes ready the threads OutputOrder no longer holds back.
  void wake_held(const std::vector<pid_t>& tids);
  /// Lets exit_group/execve holds past their deadline go in.
  void expire_exit_holds();
  Status release_vfork_parent(pid_t child_tid);
  Status on_new_thread(Thread& t, int ptrace_event);
  Status on_exec(Thread& t);
  Status log_exec(Thread& t, bool first_exec = false);
  Status on_exit_event(Thread& t);
  // The in-process fast path (record_fast_path.cc).
  /// Logs the records t's library added to its buffer since the last
  /// drain as one kSyscallBatch event; nothing if there are none.
  Status drain_fast_path(Thread& t);
  /// Logs records `data` of t's buffer as kSyscallBatch events, with the
  /// reads it can store by reference as syscall events between them.
  Status log_syscall_batch(Thread& t, const std::string& data);
  /// Answers the library's control syscall (register a buffer, flush it)
  /// at its entry; returns false for any other syscall.
  Result<bool> on_fast_path_control(Thread& t);
  /// What the library's writes must leave to the slow path: the
  /// recording's stdout and stderr, and the recorder's /proc.
  repro_fastpath_write_exclusions write_exclusions() const;
  /// An unsupported error if the fast-path write with `args` went into a
  /// /proc/PID/mem file, whose change to memory the trace would miss.
  Status refuse_fast_path_memory_write(const Thread& t, const std::array<uint64_t, 6>& args);
  /// At the exit of t's mmap of a file MAP_SHARED: tells the library of
  /// t's process that its writes take the slow path from now on (the
  /// recorder notes where each one went, for replay to apply to its copy
  /// of the file), as a memory write of the mmap event.
  Status stop_fast_path_writes(Thread& t);
  /// Whether t stands inside the library's logging of one syscall (its
  /// buffer's busy mark): no point to preempt it at or deliver a signal,
  /// since replay could not reach it once the syscall is made.
  Result<bool> inside_fast_path_syscall(Thread& t);
  /// What t's new thread or process runs its fast path on.
  void inherit_fast_path(const Thread& parent, Thread& child, uint64_t clone_flags);
  Status on_event_stop(Thread& t, int signal);
  Status on_signal(Thread& t, int signal);
  /// Delivers `signal` (siginfo `info`) to t at its signal-delivery-stop.
  Status deliver_signal(Thread& t, int signal, siginfo_t info);
  Status on_gone(pid_t tid, int wait_status);
  Status finish_step_into_handler(Thread& t, int wait_status, bool* consumed);

  // Scheduling.
  void schedule_next();
  /// The index of each ready thread, longest waiting first.
  std::vector<uint32_t> ready_indices();
  Status resume_user(Thread& t);
  Status resume_in_kernel(Thread& t);
  /// When a thread let into a syscall not marked blocking at `since` is
  /// taken to block after all (the in-kernel grace).
  std::chrono::steady_clock::time_point in_kernel_deadline(
      std::chrono::steady_clock::time_point since) const;
  void make_ready(Thread& t);
  void release_cpu(Thread& t);
  Status log_entered(Thread& t);
  Status log_preempt(Thread& t);
  /// The stack pointers of the threads of t's process, t's being `rsp`
  /// (os::hash_writable_memory leaves their dead stack out).
  std::vector<uint64_t> stack_pointers(const Thread& t, uint64_t rsp);
  /// Forgets the page copies of a process whose memory `event` replaces
  /// (a new process, an exec): its next preempt event copies afresh.
  void forget_page_copies(const format::Event& event);
  /// Logs the mapped-file event of a successful file mmap at `address`
  /// through descriptor `fd`. Returns false, logging nothing, when the file
  /// is one whose memory cannot be recorded (a device other than /dev/zero).
  Result<bool> log_mapped_file(Thread& t, int fd, uint64_t address);
  Status note_write_to_shared_file(Thread& t, int64_t written);

  /// At the exit of t's syscall with `result`: notes an open of a
  /// /proc/PID/mem file, and adds to event_ what a write through one did to
  /// memory (tracer/process_memory_writes.h).
  Status note_write_to_process_memory(Thread& t, int64_t result);
  /// If t stopped (with `signal`) at an rdtsc or rdtscp, trapped or
  /// patched, emulates it, logs the value and resumes t.
  Status emulate_rdtsc(Thread& t, int signal, bool* handled);
  /// Patching mode: patches rdtsc in the code of t's process mapped
  /// executable in [start, end), and logs the sites now, or with
  /// `defer` once the exec's syscall event is logged.
  Status patch_new_code(Thread& t, uint64_t start, uint64_t end, bool defer = false);
  Status log_rdtsc_patches(Thread& t, const std::vector<patch::PatchedFile>& files);
  /// At the exit of t's syscall (after its event): in patching mode, patch
  /// what an mmap or mprotect made executable, or log an exec's patches.
  Status patch_code_made_executable(Thread& t, int64_t result);
  // At a syscall's exit: patch the site it came from, if that is now due
  // (tracer/syscall_site_patcher.h), and log it.
  Status patch_syscall_site(Thread& t, int64_t result);

  // Job control: a group-stop lasts until SIGCONT.
  Status begin_job_stop(Thread& t);
  Status listen(Thread& t);
  Status end_job_stop(Thread& t);

  // ptrace between recorded threads (record_ptrace.cc).
  /// Emulates t's ptrace() at its entry: answers it in place and logs it.
  Status emulate_ptrace(Thread& t);
  Status emulate_traceme(Thread& t, const std::function<Status(int)>& refuse);
  /// The tracer's CONT or DETACH of `target` with `signal` (0: none).
  Status pass_on_signal(Thread& target, int signal);
  /// At the entry of t's wait4/waitid: if it waits for a thread it traces
  /// (emulated), answers in place with that thread's stop and returns true.
  Result<bool> emulate_wait_for_ptrace_stop(Thread& t);
  /// clone(CLONE_UNTRACED) loses the flag in `regs`, so the child is
  /// recorded; true if t's syscall was such a clone.
  bool strip_clone_untraced(Thread& t, os::Registers& regs);
  void stop_for_emulated_tracer(Thread& target, int wait_status);
  /// Stops t, at a ptrace-stop of ours, for its emulated tracer: it gives
  /// up the CPU, and a wait of its tracer reports `wait_status`.
  void park_for_emulated_tracer(Thread& t, int wait_status);
  /// Lets the threads of `tracer_tid`'s process that wait for a tracee to
  /// stop look again.
  void wake_waiting_tracers(pid_t tracer_tid);
  /// A scheduled thread that its tracer let go with a signal: delivers it.
  Status deliver_signal_from_emulated_tracer(Thread& t);
  /// When nothing can run but tracers waiting for a tracee to stop, their
  /// waits fail (ECHILD) rather than the recording hang.
  void end_stuck_tracer_waits();
  /// A scheduled tracer held in its wait: answers it, or lets the kernel.
  Status retry_wait_for_ptrace_stop(Thread& t);
  /// A successful exec of a thread attached by TRACEME or ATTACH stops it
  /// with SIGTRAP. Returns true if t is stopped so.
  bool stop_after_exec_for_emulated_tracer(Thread& t);
  Result<os::Registers> registers_for_emulated_tracer(Thread& target);
  void release_from_emulated_stop(Thread& target);
  /// A tracer's exit detaches its tracees, as the kernel does.
  void release_emulated_tracees(pid_t tracer_tid);
  /// Requires: t at a syscall's entry, event_ cleared or holding the
  /// memory the answer writes. Skips the syscall, writes that memory, gives
  /// t `result`, logs the event (kSyscallDenied) and resumes t.
  Status answer_in_place(Thread& t, int64_t result);
  /// Passes `message` to RecordOptions::on_warning the first time `key` is seen.
  void warn_once(const std::string& key, const std::string& message);

  // Processes left running once the program's first process is gone
  // (record_leftovers.cc).
  /// Notes that the first process is gone; names the leftovers, if any.
  void on_root_gone();
  /// Stops the leftovers with SIGKILL once `linger` has run out, or at once
  /// if `immediately` (Ctrl-C after the program's end).
  void stop_leftovers_if_due(bool immediately);

  // Priority-inheritance futexes (record_pi_futex.cc, see pi_futex.h).
  /// Lets t into a syscall that may block and waits until it sleeps there
  /// (or returns) before another thread may run: for FUTEX_LOCK_PI, whose
  /// futex word the next thread must find as t left it, and for every
  /// blocking syscall with the chaos policy, so that whether it sleeps or
  /// returns at once does not depend on what the next thread does
  /// meanwhile (one seed, one schedule).
  Status enter_until_asleep(Thread& t);
  /// Waits, for a bounded time, until t (let into the kernel) sleeps there.
  /// Returns false if it stopped first (the stop is queued in
  /// deferred_stops_), is gone, or is still running at the time limit.
  Result<bool> wait_until_asleep(Thread& t);
  /// For a PI lock t is blocked in: adds its futex word to event_ (the
  /// syscall-entered event being logged).
  Status add_pi_lock_word(Thread& t);
  /// At the exit of t's PI futex op: logs the entry of the current thread's
  /// PI unlock or requeue first, if it is not logged yet.
  Status log_handover_order(Thread& t);

  // Deadlocks (record_deadlock.cc, see deadlock.h).
  /// At the exit of t's syscall with `result`: follows the timers that may
  /// send its process a signal.
  void note_signal_timers(Thread& t, int64_t result);
  /// When nothing has stopped for a while: if every thread sleeps in a wait
  /// only another recorded thread could end, logs the deadlock (kDeadlock),
  /// kills the program and returns true.
  Result<bool> end_if_deadlocked();
  /// t's backtrace, t asleep in a syscall (interrupted for it) or stopped.
  std::string backtrace_of(Thread& t);
  /// Brings t, asleep in a syscall, to a ptrace-stop (PTRACE_INTERRUPT) so
  /// its stack can be read; a thread not in a syscall is left alone. The
  /// stop is consumed here: use only when the program is about to end.
  /// Returns "" on success, else why not ("the thread is gone").
  std::string stop_for_backtrace(Thread& t);

  // Fatal signals (record_failure_stacks.cc).
  /// At t's delivery-stop of `signal` (siginfo `info`), whose action is to
  /// end t's process: logs a kFailureStacks event with the faulting
  /// instruction and the backtrace of every thread of the process.
  Status log_failure_stacks(Thread& t, const siginfo_t& info);

  // Wake-ups made part of the schedule, chaos mode (record_wakeups.cc).
  /// At the exit of the running thread t's syscall with `result`: if it
  /// woke threads asleep in the kernel (a futex wake, a pipe write), waits
  /// for them (bounded) and handles their syscall exits now.
  Status settle_wakeups(Thread& t, int64_t result);
  /// The same once a thread of process `pid` is gone: the joiner waiting on
  /// its `clear_child_tid` word, and with `process_gone` a parent in wait4.
  Status settle_exit_wakeups(pid_t pid, uint64_t clear_child_tid, bool process_gone);
  /// A syscall-exit stop of thread `tid` that came while the running thread
  /// is still in its own syscall: queues the running thread's stop (waited
  /// for, bounded) and then this one in deferred_stops_, and returns true.
  bool hold_back_wakeup(pid_t tid, int status);
  // Whether `writer` is in a write to the pipe that thread `reader_tid`
  // just finished a read of.
  bool is_pipe_handoff(const Thread& writer, pid_t reader_tid);
  /// Waits, for a bounded time, until `expected` of `candidates` stop, and
  /// handles their syscall-exit stops (other stops go to deferred_stops_).
  Status collect_woken(const std::vector<pid_t>& candidates, size_t expected);

  // Preemption (record_preemption.cc).
  Status on_interrupted(Thread& t);
  /// At the stop of our PTRACE_INTERRUPT, a trap of ours that the thread
  /// raised in the same instant (a single step, the spin probe's int3) may
  /// still be queued behind it: takes it (record_preemption.cc). Returns
  /// true if the stop to handle is now another one, put first in
  /// deferred_stops_ (the probe's trap, or whatever came instead); false if
  /// the interrupt's stop is still the one to handle (no trap was queued,
  /// or it is dropped when the thread is next resumed).
  Result<bool> take_trap_behind_interrupt(Thread& t);
  /// When to interrupt the running thread while others wait: a first spin
  /// probe soon after it got the CPU, then once per time slice.
  std::chrono::steady_clock::time_point interrupt_deadline() const;
  /// Starts the current thread's time slice (slice_start_, and the CPU
  /// time it has run so far).
  void start_slice(pid_t tid);
  /// Whether the running thread `t` has had the CPU for as long as its
  /// interrupt_deadline() allowed: time it waited for a CPU (other
  /// processes on a loaded machine, a paused virtual CPU) does not count,
  /// and moves the deadline on by as much.
  bool deadline_reached_on_cpu(const Thread& t, std::chrono::steady_clock::time_point now);
  Status start_spin_probe(Thread& t);
  Status arm_spin_probe(Thread& t);
  Status on_spin_probe_hit(Thread& t);
  Status remove_spin_probe(Thread& t);
  bool is_spin_probe_hit(Thread& t, int wait_status);
  enum class StepOutcome { kAtRelocatable, kNotFound, kStoppedOtherwise };
  /// Single-steps t out of the stretch inside_fast_path_syscall() names.
  /// kAtRelocatable: out (or was not in it); kStoppedOtherwise: another
  /// stop came, in deferred_stops_ (record_fast_path.cc).
  Result<StepOutcome> step_out_of_fast_path_syscall(Thread& t);
  /// Single-steps a thread stopped in user code to the next instruction
  /// replay can watch with a trampoline (core/patch/instruction.h).
  /// kStoppedOtherwise: a stop other than the step's came first; it is
  /// queued in deferred_stops_ for the main loop. With
  /// `hold_pending_signals` (t at the delivery-stop of a signal held back),
  /// signals pending for t stay blocked while it is stepped, so they come
  /// after the held one, as natively; with a SIGTRAP pending, t is not
  /// stepped (kNotFound). The signal mask is the program's again when this
  /// returns.
  Result<StepOutcome> step_to_relocatable(Thread& t, bool hold_pending_signals = false);
  /// Runs t to `address` at once, with a breakpoint there (the end of the
  /// rep movs/stos/lods t stands on; the fast-path library's point past a
  /// logged call). False if another stop came first (queued in
  /// deferred_stops_; the breakpoint is gone).
  Result<bool> run_to_breakpoint(Thread& t, uint64_t address);

  Status log(const format::Event& event);
  // Writes the buffered events out; a failure names the trace.
  Status flush_trace();
  Status trace_error(Status status) const;
  Thread* find(pid_t tid);
  /// The processes (thread group ids) of the threads being recorded.
  std::set<pid_t> live_processes() const;
  Status handle_control_signal(int signal);
  void kill_all();

  RecordOptions options_;
  std::unique_ptr<format::TraceWriter> writer_;
  std::unique_ptr<FileReadReferences> file_reads_;  // stores file reads against copies
  PipeDataReferences pipe_data_;                     // stores data passed through pipes once
  std::unique_ptr<SchedulingPolicy> policy_;
  SyscallRecorder recorder_;
  OutputOrder output_order_;
  patch::RdtscPatcher patcher_;
  SyscallSitePatcher site_patcher_;
  // By process: where its fast-path library has cleared `busy` after a
  // logged call (OP_SYSCALL_STUBS), to run a thread out of one.
  std::map<pid_t, uint64_t> record_published_points_;
  bool patch_syscall_sites_ = false;  // REPRO_SYSCALL_PATCHING=off clears it
  bool patch_rdtsc_ = false;  // patching mode (the header's tsc_mode)
  ScopedFd signal_fd_;

  std::map<pid_t, std::unique_ptr<Thread>> threads_;
  std::set<pid_t> early_stops_;   // new threads whose first stop beat their creator's event
  // New threads whose end beat their creator's event (the process was
  // killed as it cloned them): their wait statuses.
  std::map<pid_t, int> early_ends_;
  // Stops collected by a synchronous wait for another stop (stepping), to
  // be handled by the main loop before it waits again.
  std::deque<std::pair<pid_t, int>> deferred_stops_;
  std::deque<pid_t> ready_;
  pid_t current_ = 0;
  std::chrono::steady_clock::time_point slice_start_;
  // Slices are measured in the thread's CPU time where the kernel says it
  // (REPRO_SLICE_CLOCK=wall measures them in wall-clock time): the CPU time
  // at slice_start_, and the time since then the thread waited for a CPU.
  bool cpu_time_slices_ = false;
  std::optional<uint64_t> slice_cpu_start_ns_;
  std::chrono::steady_clock::duration slice_waited_{0};
  std::chrono::steady_clock::time_point last_flush_;
  // Start of the current thread's run without a syscall or switch.
  std::chrono::steady_clock::time_point running_since_;
  bool probed_this_run_ = false;  // the first spin probe of this run was made
  uint32_t next_index_ = 0;
  pid_t root_pid_ = 0;
  int root_wait_status_ = 0;
  std::optional<std::chrono::steady_clock::time_point> root_gone_at_;
  size_t leftovers_stopped_ = 0;
  int control_signals_ = 0;   // SIGINT/SIGTERM received by repro
  bool shared_file_mapped_ = false;  // the program has mapped a file MAP_SHARED
  bool proc_mem_opened_ = false;     // the program has opened a /proc/PID/mem file
  // What the library's fast-path writes depend on, by pid: a forked
  // child starts with its parent's, an exec drops it.
  struct FastPathWrites {
    uint64_t exclusions_address = 0;  // the library's write exclusions; 0: none yet
    bool shared_file_mapped = false;  // a file mapped MAP_SHARED since the exec
  };
  std::map<pid_t, FastPathWrites> fast_path_writes_;
  format::Event event_;       // reused to avoid allocation per event
  SignalTimers signal_timers_;
  // When the main loop last got a stop; whether the waits have been
  // examined since; the report of the deadlock that ended the recording.
  std::chrono::steady_clock::time_point last_stop_at_;
  bool deadlock_checked_ = false;
  std::string deadlock_report_;
  bool fast_path_on_ = false;  // the library is preloaded and its syscalls pass the filter
  // Pipes may take the fast path (repro_fastpath_write_exclusions.pipes_nowait).
  bool fast_path_pipes_ = false;
  std::set<std::string> warned_;  // keys of warn_once's warnings given
  // Page copies in preempt events (log_preempt): the bytes of copies the
  // snapshot budget still allows, and per process, page address -> hash of
  // the page's last copy (a page absent here needs none while it is zeros).
  uint64_t snapshot_bytes_left_ = 0;
  std::map<pid_t, std::unordered_map<uint64_t, uint64_t>> page_copies_;
  // Exits of threads killed by a sibling's execve, logged after its exec.
  std::map<pid_t, std::vector<format::Event>> deferred_exits_;
};

}  // namespace repro::tracer
