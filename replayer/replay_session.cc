#include "replayer/replay_session.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/base/check.h"
#include "core/diag/backtrace.h"
#include "core/format/env_redaction.h"
#include "core/os/auxv.h"
#include "core/os/host_probe.h"
#include "core/os/signal_frame.h"
#include "core/os/spawn.h"
#include "core/patch/syscall_sites.h"
#include "core/seccomp/seccomp_filter.h"
#include "core/syscalls/syscall_table.h"
#include "replayer/divergence.h"
#include "replayer/exec_argv.h"

namespace repro::replayer {

namespace {

constexpr unsigned long kPtraceOptions =
    PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
    PTRACE_O_TRACEEXEC | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;

bool is_stop_event(int status, int event) { return (static_cast<unsigned>(status) >> 16) == static_cast<unsigned>(event); }
int stop_event(int status) { return static_cast<int>(static_cast<unsigned>(status) >> 16); }

std::string describe_stop(int status) {
  if (WIFEXITED(status)) {
    return fmt::format("the thread exited with status {}", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return fmt::format("the thread was killed by signal {}", WTERMSIG(status));
  }
  int event = stop_event(status);
  if (event == PTRACE_EVENT_EXIT) {
    return "the thread began to exit";
  }
  if (event != 0) {
    return fmt::format("ptrace event {}", event);
  }
  const char* name = sigabbrev_np(WSTOPSIG(status) & 0x7f);
  return fmt::format("signal SIG{}", name ? name : "?");
}

bool same_cpu(const format::CpuIdentity& a, const format::CpuIdentity& b) { return a == b; }

}  // namespace

ReplaySession::ReplaySession(const ReplayOptions& options,
                             std::unique_ptr<format::TraceReader> reader, ExecPaths paths)
    : options_(options), reader_(std::move(reader)), exec_paths_(std::move(paths)) {
  const char* fast_path = getenv("REPRO_REPLAY_FAST_PATH");
  answer_fast_path_in_process_ = !(fast_path != nullptr && std::string_view(fast_path) == "stop");
}

ReplaySession::~ReplaySession() { kill_all(); }

Result<std::unique_ptr<ReplaySession>> ReplaySession::open(const ReplayOptions& options) {
  REPRO_ASSIGN_OR_RETURN(auto reader, format::TraceReader::open(options.trace_dir));
  if (reader->state() != format::TraceState::kComplete && !options.allow_incomplete) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("trace '{}' is incomplete (the recording did not finish); "
                                     "use --allow-incomplete to replay what was recorded",
                                     options.trace_dir));
  }
  // Before anything runs: a replay that printed the program's output and
  // then found the trace cut off would look like a success at first.
  REPRO_RETURN_IF_ERROR(reader->check_events_size());
  format::CpuIdentity here = format::current_cpu_identity();
  const format::CpuIdentity& there = reader->header().cpu;
  if (!same_cpu(here, there)) {
    std::string message = fmt::format(
        "trace was recorded on a different CPU ({} family {} model {} stepping {}) than this "
        "one ({} family {} model {} stepping {}); cpuid and rdrand cannot be replayed across CPUs",
        there.vendor, there.family, there.model, there.stepping, here.vendor, here.family,
        here.model, here.stepping);
    if (!options.allow_cpu_mismatch) {
      return Status::error(StatusCode::kUnsupported, message + "; use --allow-cpu-mismatch to try anyway");
    }
    if (options.on_warning) {
      options.on_warning(message);
    }
  }
  if (!reader->header().redacted_env.empty() && options.on_warning) {
    std::vector<std::string> names;
    for (const format::RedactedVariable& variable : reader->header().redacted_env) {
      if (std::find(names.begin(), names.end(), variable.name) == names.end()) {
        names.push_back(variable.name);
      }
    }
    options.on_warning(fmt::format(
        "the trace leaves out the values of {} (record --redact-env): the program gets '{}' in "
        "their place, as many as each value had; if what it did depended on one of them, the "
        "replay diverges",
        fmt::join(names, ", "), format::kRedactedValueFiller));
  }
  REPRO_ASSIGN_OR_RETURN(ExecPaths paths, ExecPaths::create());
  std::unique_ptr<ReplaySession> session(
      new ReplaySession(options, std::move(reader), std::move(paths)));
  REPRO_RETURN_IF_ERROR(session->choose_tsc_handling());
  REPRO_RETURN_IF_ERROR(session->choose_isolation());
  return session;
}

Status ReplaySession::choose_tsc_handling() {
  // A trace recorded in patching mode lists its sites: replay patches the
  // same ones, whatever this host can do, and rdtsc elsewhere runs as it
  // ran when recorded. A trace recorded in trapping mode caught every
  // rdtsc: replay traps too where it can, and elsewhere patches what it
  // finds in the same code the recording ran.
  REPRO_ASSIGN_OR_RETURN(os::TscRequest request, os::tsc_request_from_env());
  bool recorded_patched = reader_->header().tsc_mode == format::TscMode::kPatch;
  trap_rdtsc_ = false;
  scan_for_rdtsc_ = false;
  if (request == os::TscRequest::kPatch || (recorded_patched && request == os::TscRequest::kAuto)) {
    scan_for_rdtsc_ = !recorded_patched;
    return Status::ok();
  }
  REPRO_ASSIGN_OR_RETURN(os::TscTrapProbe probe, os::probe_tsc_trapping());
  if (probe.traps()) {
    trap_rdtsc_ = true;
    return Status::ok();
  }
  if (request == os::TscRequest::kTrap) {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("REPRO_TSC=trap, but this host does not trap rdtsc ({})",
                                     probe.describe()));
  }
  scan_for_rdtsc_ = true;
  if (options_.on_warning) {
    options_.on_warning(fmt::format(
        "this host does not trap rdtsc ({}): replaying a trace recorded in trapping mode by "
        "patching rdtsc in the program's code; see 'repro doctor'",
        probe.describe()));
  }
  return Status::ok();
}

// A stop taken from waitpid while replay waited for another thread stays
// in stashed_stops_ until that thread's turn, and the kernel reports it only
// once: a thread that has no turn left (the new thread of a clone the
// recorded SIGKILL cut short, held at its exit stop) would wait there
// forever, and its process with it. End each of them.
void ReplaySession::release_stashed_stops() {
  for (auto& [tid, stops] : stashed_stops_) {
    bool stopped = std::any_of(stops.begin(), stops.end(), [](int status) { return WIFSTOPPED(status); });
    bool ended = std::any_of(stops.begin(), stops.end(),
                             [](int status) { return WIFEXITED(status) || WIFSIGNALED(status); });
    if (stopped && !ended) {
      kill(tid, SIGKILL);
      ptrace(PTRACE_CONT, tid, nullptr, 0);
    }
  }
  stashed_stops_.clear();
}

void ReplaySession::kill_all() {
  for (auto& [index, t] : threads_) {
    if (t.where != ReplayThread::Where::kGone) {
      kill(t.tid, SIGKILL);
    }
    t.where = ReplayThread::Where::kGone;
  }
  release_stashed_stops();
  // Reap every tracee, known or not (a child whose fork event was not
  // handled yet). A thread held at a ptrace stop, its PTRACE_EVENT_EXIT
  // stop among them, is not woken by SIGKILL alone, and a group leader is
  // reported only after all its threads. Give up after a while: tracees
  // die with repro anyway (PTRACE_O_EXITKILL).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
    if (tid < 0 && errno != EINTR) {
      return;  // ECHILD: all gone
    }
    if (tid == 0) {
      usleep(1000);
    } else if (tid > 0 && WIFSTOPPED(status)) {
      kill(tid, SIGKILL);
      ptrace(PTRACE_CONT, tid, nullptr, 0);
    }
  }
}

ReplayThread& ReplaySession::thread(uint32_t index) {
  auto it = threads_.find(index);
  REPRO_CHECK(it != threads_.end()) << "event #" << event_index_ << " names unknown thread t"
                                    << index;
  return it->second;
}

ReplayThread* ReplaySession::find_by_tid(pid_t tid) {
  for (auto& [index, t] : threads_) {
    if (t.tid == tid && t.where != ReplayThread::Where::kGone) {
      return &t;
    }
  }
  return nullptr;
}

Status ReplaySession::diverged(const ReplayThread& t, std::string expected, std::string observed) {
  DivergenceReport report;
  report.event_index = event_index_;
  report.thread = t.index;
  report.live_tid = t.tid;
  report.live_pid = t.pid;
  report.expected = std::move(expected);
  report.observed = std::move(observed);
  if (!trap_rdtsc_ || reader_->header().tsc_mode == format::TscMode::kPatch) {
    // Patched rdtsc covers the code of files only.
    std::string hint = patcher_.unpatched_rdtsc_hint(t.pid);
    if (!hint.empty()) {
      report.observed += "; " + hint;
    }
  }
  report.mapped_modules = report_modules(t.pid);
  return divergence(report);
}

void ReplaySession::note_exit(pid_t tid, int wait_status) {
  if (tid == root_pid_) {
    root_reaped_ = true;
    root_wait_status_ = wait_status;
  }
}

// ---------------------------------------------------------------------------
// Waiting and resuming

Status ReplaySession::resume(ReplayThread& t, int request, int signal) {
  if (request == 0) {
    request = PTRACE_CONT;
  }
  t.watcher_step = false;
  if (request == PTRACE_CONT && watcher_ != nullptr && !hide_from_watcher_ &&
      watcher_->wants_instruction_steps(t)) {
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    if (signal == 0) {
      // It may have got here without a step the watcher saw (parked by an
      // event, or by a step of the replay's own), or by a step into a
      // syscall that replay answered since, which ends here: the kernel
      // reports no step at the return of a syscall it did not run.
      REPRO_RETURN_IF_ERROR(show_to_watcher(t, &regs,
                                            t.stepped_into_syscall
                                                ? ReplayWatcher::Arrival::kStepped
                                                : ReplayWatcher::Arrival::kParked));
    }
    t.stepped_into_syscall = false;
    if (watcher_->wants_instruction_steps(t)) {
      REPRO_RETURN_IF_ERROR(prepare_watcher_step(t, regs.rip));
      request = PTRACE_SINGLESTEP;
      t.watcher_step = true;
    }
  }
  if (ptrace(static_cast<__ptrace_request>(request), t.tid, nullptr, signal) != 0) {
    return os::ptrace_error(errno, "resuming", t.tid);
  }
  t.stepping = request == PTRACE_SINGLESTEP;
  if (request == PTRACE_CONT) {
    t.watched_rip = 0;
  }
  t.where = request == PTRACE_SYSCALL ? ReplayThread::Where::kInSyscall
                                      : ReplayThread::Where::kRunning;
  return Status::ok();
}

Result<int> ReplaySession::wait_stop(ReplayThread& t) {
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_raw_stop(t));
    if (watcher_ == nullptr || !t.stepping || !WIFSTOPPED(status)) {
      return status;
    }
    if (is_stop_event(status, PTRACE_EVENT_SECCOMP)) {
      t.stepped_into_syscall = t.watcher_step;
      if (t.watcher_step) {
        REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
        REPRO_RETURN_IF_ERROR(finish_watcher_step(t, &regs));
      }
      return status;
    }
    if (stop_event(status) != 0 || WSTOPSIG(status) != SIGTRAP) {
      return status;
    }
    // A step's trap (TRAP_TRACE), or the report of a stepped syscall at its
    // exit (TRAP_BRKPT); an int3 (SI_KERNEL) or a SIGTRAP someone sent is
    // the program's, or the replay's own breakpoint.
    REPRO_ASSIGN_OR_RETURN(siginfo_t info, os::get_siginfo(t.tid));
    if (info.si_code != TRAP_TRACE && info.si_code != TRAP_BRKPT) {
      return status;
    }
    t.stepping = false;
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    if (t.watcher_step) {
      REPRO_RETURN_IF_ERROR(finish_watcher_step(t, &regs));
    }
    // A syscall's exit report where the watcher saw the thread already,
    // when replay resumed it from the syscall's entry stop: no instruction
    // ran since.
    bool seen = info.si_code != TRAP_TRACE && regs.rip == t.watched_rip;
    if (!hide_from_watcher_ && !seen) {
      REPRO_RETURN_IF_ERROR(show_to_watcher(t, &regs, ReplayWatcher::Arrival::kStepped));
    }
    if (!t.watcher_step) {
      return status;  // the replay's own step: its caller goes on from here
    }
    REPRO_RETURN_IF_ERROR(continue_after_step(t, regs));
  }
}

Status ReplaySession::show_to_watcher(ReplayThread& t, os::Registers* regs,
                                      ReplayWatcher::Arrival arrival) {
  if (arrival == ReplayWatcher::Arrival::kParked && regs->rip == t.watched_rip) {
    return Status::ok();
  }
  t.watched_rip = regs->rip;
  REPRO_ASSIGN_OR_RETURN(bool stopped, watcher_->at_instruction(t, *regs, arrival));
  if (stopped) {
    REPRO_ASSIGN_OR_RETURN(*regs, os::get_registers(t.tid));  // the debugger may set them
  }
  return Status::ok();
}

Status ReplaySession::prepare_watcher_step(ReplayThread& t, uint64_t rip) {
  // Longest x86 instruction: 15 bytes; prefixes come first.
  uint8_t code[15] = {};
  t.clear_pushed_trap_flag = false;
  t.clear_r11_trap_flag = false;
  if (!os::read_memory(t.tid, rip, code, sizeof code).is_ok()) {
    return Status::ok();  // the step faults, as it would have run
  }
  for (size_t i = 0; i < sizeof code; ++i) {
    uint8_t byte = code[i];
    bool prefix = byte == 0x66 || byte == 0x67 || byte == 0xf0 || byte == 0xf2 || byte == 0xf3 ||
                  byte == 0x2e || byte == 0x36 || byte == 0x3e || byte == 0x26 || byte == 0x64 ||
                  byte == 0x65 || (byte >= 0x40 && byte <= 0x4f);
    if (!prefix) {
      t.clear_pushed_trap_flag = byte == 0x9c;                                      // pushf
      t.clear_r11_trap_flag = byte == 0x0f && i + 1 < sizeof code && code[i + 1] == 0x05;  // syscall
      break;
    }
  }
  return Status::ok();
}

Status ReplaySession::finish_watcher_step(ReplayThread& t, os::Registers* regs) {
  // The flags pushf stores and syscall copies into r11 carry TF, set for
  // the step: the program would see it, and a preemption point's memory
  // hash or registers would differ from the recording's.
  constexpr uint64_t kTrapFlag = 0x100;
  if (t.clear_r11_trap_flag && (regs->r11 & kTrapFlag)) {
    regs->r11 &= ~kTrapFlag;
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, *regs));
  }
  if (!t.clear_pushed_trap_flag) {
    return Status::ok();
  }
  t.clear_pushed_trap_flag = false;
  uint64_t pushed = 0;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, regs->rsp, &pushed, sizeof pushed));
  if (pushed & kTrapFlag) {
    pushed &= ~kTrapFlag;
    REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, regs->rsp, &pushed, sizeof pushed));
  }
  return Status::ok();
}

Status ReplaySession::continue_after_step(ReplayThread& t, const os::Registers& regs) {
  int request = PTRACE_CONT;
  if (watcher_->wants_instruction_steps(t)) {
    REPRO_RETURN_IF_ERROR(prepare_watcher_step(t, regs.rip));
    request = PTRACE_SINGLESTEP;
  }
  if (ptrace(static_cast<__ptrace_request>(request), t.tid, nullptr, 0) != 0) {
    return os::ptrace_error(errno, "resuming", t.tid);
  }
  t.stepping = t.watcher_step = request == PTRACE_SINGLESTEP;
  if (!t.stepping) {
    t.watched_rip = 0;
  }
  return Status::ok();
}

Result<int> ReplaySession::wait_raw_stop(ReplayThread& t) {
  auto& stash = stashed_stops_[t.tid];
  if (!stash.empty()) {
    int status = stash.front();
    stash.pop_front();
    return status;
  }
  while (true) {
    int status = 0;
    pid_t tid = waitpid(-1, &status, __WALL);
    if (tid < 0) {
      if (errno == EINTR) {
        continue;
      }
      return Status::from_errno(errno, fmt::format("waiting for thread t{}", t.index));
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      note_exit(tid, status);
    }
    if (tid == t.tid) {
      return status;
    }
    stashed_stops_[tid].push_back(status);
  }
}

Status ReplaySession::ensure_started(ReplayThread& t) {
  if (t.where != ReplayThread::Where::kStarting) {
    return Status::ok();
  }
  REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
  if (!WIFSTOPPED(status)) {
    return diverged(t, "the new thread's first stop", describe_stop(status));
  }
  t.where = ReplayThread::Where::kParked;
  return Status::ok();
}

Status ReplaySession::advance_to_syscall(ReplayThread& t) {
  REPRO_RETURN_IF_ERROR(ensure_started(t));
  if (t.where == ReplayThread::Where::kAtEntry) {
    return Status::ok();
  }
  if (t.where == ReplayThread::Where::kParked) {
    REPRO_RETURN_IF_ERROR(resume(t));
  }
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    if (!WIFSTOPPED(status) || is_stop_event(status, PTRACE_EVENT_EXIT)) {
      stashed_stops_[t.tid].push_front(status);
      t.where = ReplayThread::Where::kExiting;
      return diverged(t, "a syscall", describe_stop(status));
    }
    if (is_stop_event(status, PTRACE_EVENT_SECCOMP)) {
      return note_syscall_entry(t);
    }
    int signal = WSTOPSIG(status);
    if (stop_event(status) == 0 && signal != (SIGTRAP | 0x80)) {
      REPRO_ASSIGN_OR_RETURN(siginfo_t info, os::get_siginfo(t.tid));
      bool fault = info.si_code > 0 && (signal == SIGSEGV || signal == SIGBUS || signal == SIGILL ||
                                        signal == SIGFPE);
      if (fault) {
        t.where = ReplayThread::Where::kParked;
        return diverged(t, "a syscall", describe_stop(status) + " (a fault)");
      }
      // A signal the kernel raised during replay (a real child's SIGCHLD,
      // ...): the trace delivers its own copy where it belongs.
    }
    REPRO_RETURN_IF_ERROR(resume(t));
  }
}

Status ReplaySession::note_syscall_entry(ReplayThread& t) {
  REPRO_ASSIGN_OR_RETURN(t.entry_regs, os::get_registers(t.tid));
  const os::Registers& r = t.entry_regs;
  t.syscall_number = static_cast<int>(r.orig_rax);
  t.args = {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9};
  t.where = ReplayThread::Where::kAtEntry;
  if (t.syscall_number == SYS_clone && (r.rdi & CLONE_UNTRACED)) {
    // The recorder dropped the flag to record the child (LeakSanitizer's
    // helper task): replay must follow that child too. t.args keep it.
    os::Registers stripped = r;
    stripped.rdi &= ~static_cast<uint64_t>(CLONE_UNTRACED);
    return os::set_registers(t.tid, stripped);
  }
  return Status::ok();
}

Status ReplaySession::check_syscall(ReplayThread& t, const format::Event& event) {
  REPRO_RETURN_IF_ERROR(check_fast_path_fallback(t));
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(event.syscall_number);
  int count = info ? info->arg_count : 6;
  bool same = t.syscall_number == event.syscall_number;
  for (int i = 0; same && i < count; ++i) {
    same = t.args[i] == event.args[i];
  }
  if (!same) {
    return diverged(t, describe_syscall(event.syscall_number, event.args),
                    describe_syscall(t.syscall_number, t.args));
  }
  return Status::ok();
}

Status ReplaySession::settle_after_step(ReplayThread& t) {
  // Signals dropped on the way: a few strays (a replayed child's SIGCHLD)
  // are normal; a signal that comes back at every step is a fault the
  // step cannot get past, and waiting on would hang the replay.
  constexpr int kMaxDroppedSignals = 1000;
  for (int dropped = 0;; ++dropped) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    if (!WIFSTOPPED(status) || is_stop_event(status, PTRACE_EVENT_EXIT)) {
      stashed_stops_[t.tid].push_front(status);
      t.where = ReplayThread::Where::kExiting;
      return Status::ok();
    }
    if (is_stop_event(status, PTRACE_EVENT_SECCOMP)) {
      return note_syscall_entry(t);
    }
    if (stop_event(status) == 0 && WSTOPSIG(status) == SIGTRAP) {
      t.where = ReplayThread::Where::kParked;
      return Status::ok();
    }
    if (stop_event(status) == 0 && WSTOPSIG(status) == SIGSEGV) {
      // The kernel could not write the handler's frame (an overflowed
      // stack and no alternate one) and forced a SIGSEGV instead. The
      // recording saw it as the thread's next signal: keep the stop for
      // that event. Dropping it would refault forever.
      REPRO_ASSIGN_OR_RETURN(siginfo_t info, os::get_siginfo(t.tid));
      if (info.si_code == SI_KERNEL) {
        stashed_stops_[t.tid].push_front(status);
        t.where = ReplayThread::Where::kRunning;  // its next stop is the stashed one
        return Status::ok();
      }
    }
    if (dropped == kMaxDroppedSignals) {
      t.where = ReplayThread::Where::kParked;
      return diverged(t, "the step into the signal handler",
                      describe_stop(status) + " at every step");
    }
    // Another signal got in the way: drop it and keep stepping.
    REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SINGLESTEP));
  }
}

Status ReplaySession::deliver_signal(ReplayThread& t, int signal, const siginfo_t& info,
                                     bool synchronous) {
  REPRO_ASSIGN_OR_RETURN(os::SignalDisposition disposition, os::signal_disposition(t.tid, signal));
  bool stops = disposition == os::SignalDisposition::kDefault && os::is_job_stop_signal(signal);
  if (disposition == os::SignalDisposition::kIgnored || stops) {
    // Delivering it would change nothing, or only stop the thread right
    // here until SIGCONT, as the recorded one did (whether the kernel would
    // stop it at all depends on its process group: SIGTSTP is discarded in
    // an orphaned one). The recorded schedule says when it runs on: leave
    // it parked where it is; the next resume drops the signal.
    t.where = ReplayThread::Where::kParked;
    return Status::ok();
  }
  REPRO_RETURN_IF_ERROR(os::set_siginfo(t.tid, info));
  std::string xstate;
  if (disposition == os::SignalDisposition::kCaught) {
    REPRO_ASSIGN_OR_RETURN(xstate, os::get_extended_registers(t.tid));
  }
  // Single-step into the handler so the thread is stopped again before it
  // runs on: its next event (maybe a preemption) must find it parked.
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SINGLESTEP, signal));
  REPRO_RETURN_IF_ERROR(settle_after_step(t));
  if (disposition == os::SignalDisposition::kCaught && t.where == ReplayThread::Where::kParked) {
    // The frame as the recorder left it (core/os/signal_frame.h).
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    if (!synchronous) {
      REPRO_RETURN_IF_ERROR(os::clear_frame_trap_info(t.tid, regs.rsp));
    }
    REPRO_RETURN_IF_ERROR(os::normalize_frame_fpu_state(t.tid, regs.rsp, xstate));
    REPRO_RETURN_IF_ERROR(os::fill_frame_slack(t.tid, regs.rsp, info));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------
// The loop

void ReplaySession::pin_like_the_recording(int recorded_cpu) {
  // cpuid (which cannot be trapped) tells a program the APIC id of the core
  // it runs on, and programs do keep it (libgcc's CPU feature probe leaves
  // it on the stack, which preemption points hash). So replay runs on the
  // CPU the recording ran on. One CPU also makes ptrace stops cheaper.
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    return;
  }
  int cpu = recorded_cpu;
  if (cpu < 0 || !CPU_ISSET(cpu, &allowed)) {
    if (cpu >= 0 && options_.on_warning) {
      options_.on_warning(fmt::format(
          "the trace was recorded on CPU {}, which this replay may not use; a program that "
          "reads its core number with cpuid may diverge",
          cpu));
    }
    cpu = std::max(sched_getcpu(), 0);
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  sched_setaffinity(0, sizeof one, &one);
}

Status ReplaySession::start() {
  format::Event first;
  format::Event exec;
  for (format::Event* event : {&first, &exec}) {
    REPRO_ASSIGN_OR_RETURN(bool more, reader_->next(event));
    if (!more) {
      return Status::error(StatusCode::kCorruption,
                           fmt::format("trace '{}' has no program start", options_.trace_dir));
    }
    if (options_.on_event) {
      options_.on_event(event_index_, *event);
    }
    ++event_index_;
  }
  if (first.kind != format::EventKind::kThreadStart || exec.kind != format::EventKind::kExec) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("trace '{}' does not start with a thread start and an exec",
                                     options_.trace_dir));
  }
  REPRO_ASSIGN_OR_RETURN(std::string exe_copy, stored_copy(exec.content_id, exec.path));
  REPRO_ASSIGN_OR_RETURN(std::string exe_path, exec_paths_.make(exec.path.size(), exe_copy));
  std::vector<std::string> exec_argv = split_exec_argv(exec.data);

  const format::TraceHeader& header = reader_->header();
  pin_like_the_recording(header.pinned_cpu);
  os::SpawnOptions spawn;
  spawn.exe_path = exe_path;
  // As the kernel laid it out: a script's interpreter comes first.
  spawn.argv = exec_argv.empty() ? header.argv : exec_argv;
  spawn.env = format::environment_for_replay(header.env, header.redacted_env);
  spawn.cwd = exec_paths_.dir();
  spawn.ptrace_options = kPtraceOptions;
  bool trap_rdtsc = trap_rdtsc_;
  spawn.before_exec = [trap_rdtsc] { return seccomp::install_trace_filter(trap_rdtsc); };
  os::IsolationFailure isolation_failure;
  spawn.isolate = isolation_ != os::IsolationRequest::kOff;
  spawn.writable_dir = exec_paths_.dir();
  spawn.isolation_failure = &isolation_failure;
  REPRO_ASSIGN_OR_RETURN(pid_t pid, os::spawn_traced(spawn));
  root_pid_ = pid;

  ReplayThread t;
  t.index = first.thread;
  t.tid = pid;
  t.pid = pid;
  t.recorded_tid = first.recorded_tid;
  t.where = ReplayThread::Where::kParked;
  threads_[t.index] = t;
  REPRO_RETURN_IF_ERROR(check_isolation(isolation_failure));

  REPRO_RETURN_IF_ERROR(restore_exec_state(threads_[t.index], exec));
  return scan_new_code(threads_[t.index], 0, UINT64_MAX);
}

Status ReplaySession::scan_new_code(ReplayThread& t, uint64_t start, uint64_t end) {
  if (!scan_for_rdtsc_) {
    return Status::ok();
  }
  auto patched = patcher_.patch_mappings(t.tid, t.pid, start, end);
  if (!patched.is_ok()) {
    return patched.status().context(fmt::format("event #{}: patching rdtsc in thread t{}",
                                                event_index_, t.index));
  }
  return Status::ok();
}

Status ReplaySession::scan_code_made_executable(ReplayThread& t, const format::Event& event) {
  if (!scan_for_rdtsc_) {
    return Status::ok();
  }
  if (auto range = patch::code_made_executable(event.syscall_number, event.args, event.result)) {
    return scan_new_code(t, range->start, range->end);
  }
  return Status::ok();
}

Result<bool> ReplaySession::next_event(format::Event* event) {
  if (!lookahead_.empty()) {
    *event = std::move(lookahead_.front());
    lookahead_.pop_front();
    return true;
  }
  return reader_->next(event);
}

Result<const format::Event*> ReplaySession::peek_next_of_thread(uint32_t thread) {
  // How far to read ahead for one thread's next event: far beyond what a
  // blocked thread waits for in practice, small enough to bound memory.
  constexpr size_t kMaxLookahead = 1 << 20;
  for (size_t i = 0;; ++i) {
    if (i == lookahead_.size()) {
      if (lookahead_.size() >= kMaxLookahead) {
        return nullptr;
      }
      format::Event event;
      REPRO_ASSIGN_OR_RETURN(bool more, reader_->next(&event));
      if (!more) {
        return nullptr;
      }
      lookahead_.push_back(std::move(event));
    }
    const format::Event& candidate = lookahead_[i];
    if (candidate.thread == thread && candidate.kind != format::EventKind::kPreempt) {
      return &candidate;
    }
  }
}

Result<ReplayOutcome> ReplaySession::run() {
  REPRO_RETURN_IF_ERROR(begin());
  while (true) {
    REPRO_ASSIGN_OR_RETURN(bool more, replay_next());
    if (!more) {
      break;
    }
    if (options_.stop_after_event && *options_.stop_after_event + 1 == event_index_) {
      ReplayOutcome outcome;
      outcome.event_count = event_index_;
      outcome.stopped_at = describe_threads();
      kill_all();
      return outcome;
    }
  }
  return finish();
}

Status ReplaySession::begin() {
  add_last_words_hook([this] { kill_all(); });
  return start();
}

Result<const format::Event*> ReplaySession::peek_next_event() {
  if (lookahead_.empty()) {
    format::Event event;
    REPRO_ASSIGN_OR_RETURN(bool more, reader_->next(&event));
    if (!more) {
      return nullptr;
    }
    lookahead_.push_back(std::move(event));
  }
  return &lookahead_.front();
}

Result<bool> ReplaySession::replay_next() {
  format::Event event;
  REPRO_ASSIGN_OR_RETURN(bool more, next_event(&event));
  if (!more) {
    return false;
  }
  if (options_.on_event) {
    options_.on_event(event_index_, event);
  }
  REPRO_RETURN_IF_ERROR(replay_event(event));
  if (event.kind != format::EventKind::kSyscallBatch && event.kind != format::EventKind::kMappedFile &&
      event.kind != format::EventKind::kThreadExit) {
    auto t = threads_.find(event.thread);
    if (t != threads_.end()) {
      REPRO_RETURN_IF_ERROR(check_fast_path_queue_used(t->second));
    }
  }
  last_event_thread_ = event.thread;
  ++event_index_;
  return true;
}

Result<ReplayOutcome> ReplaySession::finish() {
  ReplayOutcome outcome;
  outcome.event_count = event_index_;
  outcome.recorded_wait_status = recorded_root_status_;
  outcome.deadlock = deadlock_report_;
  if (reader_->state() != format::TraceState::kComplete) {
    kill_all();
  }
  release_stashed_stops();
  while (!root_reaped_) {
    int status = 0;
    pid_t tid = waitpid(-1, &status, __WALL);
    if (tid < 0) {
      break;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      note_exit(tid, status);
    } else {
      // A thread still stopped after the last event: the trace ended
      // before the program did.
      kill(tid, SIGKILL);
    }
  }
  kill_all();
  outcome.wait_status = root_wait_status_;
  if (reader_->state() == format::TraceState::kComplete &&
      outcome.wait_status != outcome.recorded_wait_status) {
    return Status::error(
        StatusCode::kDivergence,
        fmt::format("replay ended with wait status {:#x}, the recording with {:#x}",
                    outcome.wait_status, outcome.recorded_wait_status));
  }
  return outcome;
}

Status ReplaySession::replay_event(const format::Event& event) {
  note_for_memory_reports(event);
  switch (event.kind) {
    case format::EventKind::kThreadStart:
      return on_thread_start(event);
    case format::EventKind::kExec:
      return on_exec(event);
    case format::EventKind::kSyscallEntered:
      return on_syscall_entered(event);
    case format::EventKind::kSyscall:
      if (event.syscall_flags & format::kSyscallFastPath) {
        return answer_fast_path_syscall(thread(event.thread), event);
      }
      return on_syscall(event);
    case format::EventKind::kSignal:
      return on_signal(event);
    case format::EventKind::kPreempt:
      return on_preempt(event);
    case format::EventKind::kRdtsc:
      return on_rdtsc(event);
    case format::EventKind::kRdtscPatch:
      return on_rdtsc_patch(event);
    case format::EventKind::kSyscallPatch:
      return on_syscall_patch(event);
    case format::EventKind::kThreadExit:
      return on_thread_exit(event);
    case format::EventKind::kMappedFile:
      thread(event.thread).mapped_content_id = event.content_id;
      mapped_path_ = event.path;
      mapped_offset_ = event.result;
      return Status::ok();
    case format::EventKind::kDeadlock:
      return on_deadlock(event);
    case format::EventKind::kFailureStacks:
      return Status::ok();  // what the recorder saw at a fatal signal, for `repro report`
    case format::EventKind::kSyscallBatch:
      return on_syscall_batch(event);
  }
  return Status::error(StatusCode::kCorruption, fmt::format("event #{} has an unknown kind", event_index_));
}

// ---------------------------------------------------------------------------
// Threads and processes

Status ReplaySession::on_thread_start(const format::Event& event) {
  if (threads_.count(event.thread) != 0) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("event #{} starts thread t{} twice", event_index_, event.thread));
  }
  ReplayThread& parent = thread(event.parent_thread);
  if (parent.where != ReplayThread::Where::kInSyscall) {
    REPRO_RETURN_IF_ERROR(advance_to_syscall(parent));
    int n = parent.syscall_number;
    if (n != SYS_clone && n != SYS_fork && n != SYS_vfork) {
      return diverged(parent, fmt::format("clone, fork or vfork creating t{}", event.thread),
                      describe_syscall(n, parent.args));
    }
    REPRO_RETURN_IF_ERROR(resume(parent, PTRACE_SYSCALL));
  }
  REPRO_ASSIGN_OR_RETURN(int status, wait_stop(parent));
  int ptrace_event = WIFSTOPPED(status) ? stop_event(status) : 0;
  if (ptrace_event != PTRACE_EVENT_CLONE && ptrace_event != PTRACE_EVENT_FORK &&
      ptrace_event != PTRACE_EVENT_VFORK) {
    stashed_stops_[parent.tid].push_front(status);
    return diverged(parent, fmt::format("creation of t{}", event.thread), describe_stop(status));
  }
  REPRO_ASSIGN_OR_RETURN(unsigned long new_tid, os::get_event_message(parent.tid));
  ReplayThread child;
  child.index = event.thread;
  child.tid = static_cast<pid_t>(new_tid);
  bool same_process = ptrace_event == PTRACE_EVENT_CLONE && (event.clone_flags & CLONE_THREAD);
  child.pid = same_process ? parent.pid : child.tid;
  child.recorded_tid = event.recorded_tid;
  child.parent_index = parent.index;
  child.shares_parent_memory = (event.clone_flags & CLONE_VM) && !same_process;
  child.where = ReplayThread::Where::kStarting;
  // Until it runs, its stack is the one its clone gave it.
  child.entry_regs.rsp = parent.syscall_number == SYS_clone ? parent.args[1] : 0;
  threads_[child.index] = child;
  if (!same_process) {
    patcher_.note_fork(parent.pid, child.pid);  // its own copy of the patched code
  }
  return resume(parent, PTRACE_SYSCALL);
}

Status ReplaySession::on_exec(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  REPRO_RETURN_IF_ERROR(advance_to_syscall(t));
  if (t.syscall_number != SYS_execve && t.syscall_number != SYS_execveat) {
    return diverged(t, fmt::format("exec of \"{}\"", event.path),
                    describe_syscall(t.syscall_number, t.args));
  }
  // The program's memory is left as it is: the exec runs from scratch
  // memory below the stack, which the exec discards, except in a vfork
  // parent that shares it (put back below).
  REPRO_ASSIGN_OR_RETURN(auto scratch, redirect_exec(t, event));
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  // The exec stop is reported under the thread group leader's tid when a
  // non-leader thread execs.
  while (true) {
    int status = 0;
    pid_t tid = waitpid(-1, &status, __WALL);
    if (tid < 0) {
      return Status::from_errno(errno, "waiting for exec");
    }
    if ((tid == t.tid || tid == t.pid) && is_stop_event(status, PTRACE_EVENT_EXEC)) {
      if (tid != t.tid) {
        // The old leader vanished in the exec; what was stashed under its
        // tid was its own, and that tid is now this thread's.
        ReplayThread* leader = find_by_tid(tid);
        if (leader != nullptr) {
          leader->where = ReplayThread::Where::kGone;
        }
        stashed_stops_.erase(tid);
        stashed_stops_.erase(t.tid);
        t.tid = tid;
      }
      break;
    }
    if (tid == t.tid && (WIFEXITED(status) || WIFSIGNALED(status) ||
                         (WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80)))) {
      return diverged(t, fmt::format("exec of \"{}\"", event.path), describe_stop(status));
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      note_exit(tid, status);
    }
    if (WIFSTOPPED(status) && is_stop_event(status, PTRACE_EVENT_EXIT)) {
      // A sibling killed by the exec: the exec waits until it is gone.
      ptrace(PTRACE_CONT, tid, nullptr, 0);
      continue;
    }
    stashed_stops_[tid].push_back(status);
  }
  REPRO_RETURN_IF_ERROR(restore_exec_state(t, event));
  patcher_.note_exec(t.pid);
  REPRO_RETURN_IF_ERROR(scan_new_code(t, 0, UINT64_MAX));
  if (t.shares_parent_memory) {
    // The parent is not stopped (the exec just woke it from vfork), so
    // write through /proc/PID/mem, which needs no ptrace-stop. Through any
    // live thread of its process: the parent itself may have been killed
    // while it waited in vfork, and with no thread left nothing reads that
    // memory again.
    const pid_t parent_pid = thread(t.parent_index).pid;
    for (const auto& [index, other] : threads_) {
      if (other.pid == parent_pid && other.where != ReplayThread::Where::kGone) {
        REPRO_RETURN_IF_ERROR(os::write_memory_forced(other.tid, scratch.first,
                                                      scratch.second.data(), scratch.second.size()));
        break;
      }
    }
  }
  return resume(t, PTRACE_SYSCALL);
}

Status ReplaySession::on_deadlock(const format::Event& event) {
  (void)event;  // the recorder's own report; replay describes what it reached
  deadlock_report_ = "every thread waits for another recorded thread:\n" + describe_threads();
  return Status::ok();
}

std::string ReplaySession::describe_threads() {
  std::string report;
  for (const auto& [index, t] : threads_) {
    if (t.where == ReplayThread::Where::kGone) {
      continue;
    }
    std::string where = t.where == ReplayThread::Where::kAtEntry
                            ? "in " + describe_syscall(t.syscall_number, t.args)
                            : std::string("stopped");
    report += fmt::format("t{} (tid {}) {}\n", index, t.tid, where);
    report += diag::backtrace(t.pid, t.tid, report_modules(t.pid));
  }
  return report;
}

Status ReplaySession::on_thread_exit(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  if (t.index == 0) {
    recorded_root_status_ = event.exit_status;
  }
  int fatal_signal = event.exit_status & 0x7f;
  // Stopped after its last event, or inside a syscall replay executes for
  // real (vfork waiting for its child: only SIGKILL ends that wait).
  bool stopped_here = t.where == ReplayThread::Where::kParked ||
                      t.where == ReplayThread::Where::kAtEntry ||
                      t.where == ReplayThread::Where::kInSyscall;
  auto kill_here = [&]() -> Status {
    if (syscall(SYS_tgkill, t.pid, t.tid, SIGKILL) != 0) {
      return Status::from_errno(errno, fmt::format("killing thread t{}", t.index));
    }
    return Status::ok();
  };
  if (fatal_signal == SIGKILL && stopped_here) {
    // SIGKILL has no delivery stop to record: it arrived (from the thread
    // itself, a sibling or the recorder) where the thread stands now. Do
    // the same.
    REPRO_RETURN_IF_ERROR(kill_here());
  } else if (fatal_signal != 0 && t.where == ReplayThread::Where::kParked) {
    // Killed by a signal the recording saw no delivery of: the program's
    // own seccomp filter (SECCOMP_RET_KILL) ends it at a syscall that never
    // reached repro's filter. Let it run into that again. Or a sibling's
    // fatal signal, already delivered, takes the whole group: the kill has
    // woken this thread from its stop, so there is nothing to resume and
    // it is on its way to its exit stop.
    Status resumed = resume(t);
    if (!resumed.is_ok() && resumed.code() != StatusCode::kTraceeDied) {
      return resumed;
    }
  }
  while (t.where != ReplayThread::Where::kGone) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      t.where = ReplayThread::Where::kGone;
      break;
    }
    if (is_stop_event(status, PTRACE_EVENT_SECCOMP) && fatal_signal == SIGKILL) {
      // Killed while it ran, somewhere before this syscall, which the
      // recording never saw: it dies here.
      t.where = ReplayThread::Where::kAtEntry;
      REPRO_RETURN_IF_ERROR(kill_here());
      ptrace(PTRACE_CONT, t.tid, nullptr, 0);
      continue;
    }
    if (is_stop_event(status, PTRACE_EVENT_SECCOMP)) {
      REPRO_ASSIGN_OR_RETURN(os::Registers r, os::get_registers(t.tid));
      t.where = ReplayThread::Where::kAtEntry;
      return diverged(t, "thread exit",
                      describe_syscall(static_cast<int>(r.orig_rax),
                                       {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9}));
    }
    if (is_stop_event(status, PTRACE_EVENT_EXIT)) {
      ptrace(PTRACE_CONT, t.tid, nullptr, 0);
      // A thread group leader is reaped only after its last thread: do
      // not wait for that here.
      bool leader_with_threads = false;
      if (t.tid == t.pid) {
        for (auto& [index, other] : threads_) {
          if (other.index != t.index && other.pid == t.pid &&
              other.where != ReplayThread::Where::kGone) {
            leader_with_threads = true;
          }
        }
      }
      if (leader_with_threads) {
        t.where = ReplayThread::Where::kExiting;
        return Status::ok();
      }
      continue;
    }
    // A signal or stop on the way out: let it go on.
    ptrace(PTRACE_CONT, t.tid, nullptr, 0);
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Syscalls, signals, preemptions, rdtsc

Status ReplaySession::on_syscall_entered(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  if (t.where == ReplayThread::Where::kInSyscall) {
    // Already running it: a clone whose new thread was logged first.
    return check_syscall(t, event);
  }
  REPRO_RETURN_IF_ERROR(advance_to_syscall(t));
  REPRO_RETURN_IF_ERROR(check_syscall(t, event));
  // What the kernel wrote before the thread blocked (a PI futex word).
  REPRO_RETURN_IF_ERROR(write_recorded_memory(t, event));
  int n = event.syscall_number;
  if (n == SYS_clone || n == SYS_fork || n == SYS_vfork) {
    // The thread it creates appears in the events that follow.
    return resume(t, PTRACE_SYSCALL);
  }
  return Status::ok();  // answered when its kSyscall event comes
}

Status ReplaySession::on_syscall(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  if (t.where == ReplayThread::Where::kInSyscall) {
    if (t.syscall_number != event.syscall_number) {
      return diverged(t, describe_syscall(event.syscall_number, event.args),
                      describe_syscall(t.syscall_number, t.args));
    }
    if (event.syscall_number == SYS_execve || event.syscall_number == SYS_execveat) {
      REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
      t.where = ReplayThread::Where::kParked;
    } else {
      REPRO_RETURN_IF_ERROR(finish_clone(t, event));
    }
  } else {
    REPRO_RETURN_IF_ERROR(advance_to_syscall(t));
    REPRO_RETURN_IF_ERROR(check_syscall(t, event));
    REPRO_RETURN_IF_ERROR(check_output(t, event));
    REPRO_RETURN_IF_ERROR(answer_syscall(t, event));
    REPRO_RETURN_IF_ERROR(scan_code_made_executable(t, event));
  }
  return emit_output(event);
}

Status ReplaySession::on_signal(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  REPRO_RETURN_IF_ERROR(ensure_started(t));
  siginfo_t info;
  if (event.signal_info.size() != sizeof info) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("event #{} has a siginfo of {} bytes", event_index_,
                                     event.signal_info.size()));
  }
  std::memcpy(&info, event.signal_info.data(), sizeof info);
  int signal = event.signal_number;
  bool synchronous = event.signal_flags & format::kSignalSynchronous;
  if (t.where == ReplayThread::Where::kAtEntry) {
    return diverged(t, fmt::format("signal {}", signal), describe_syscall(t.syscall_number, t.args));
  }
  if (!synchronous && t.queued_signal == signal) {
    t.queued_signal = 0;  // sent already, to end an rt_sigsuspend
  } else if (!synchronous) {
    // Queue it now; it is delivered the moment the thread resumes, before
    // any instruction runs: exactly the recorded point.
    if (syscall(SYS_tgkill, t.pid, t.tid, signal) != 0) {
      return Status::from_errno(errno, fmt::format("sending signal {} to thread t{}", signal, t.index));
    }
  }
  if (t.where == ReplayThread::Where::kParked) {
    REPRO_RETURN_IF_ERROR(resume(t));
  }
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    if (WIFSTOPPED(status) && stop_event(status) == 0 && WSTOPSIG(status) == signal) {
      return deliver_signal(t, signal, info, synchronous);
    }
    if (!WIFSTOPPED(status) || is_stop_event(status, PTRACE_EVENT_SECCOMP) ||
        is_stop_event(status, PTRACE_EVENT_EXIT)) {
      stashed_stops_[t.tid].push_front(status);
      return diverged(t, fmt::format("signal {}{}", signal, synchronous ? " (a fault)" : ""),
                      describe_stop(status));
    }
    REPRO_RETURN_IF_ERROR(resume(t));  // some other signal: not in the trace here
  }
}

Status ReplaySession::on_rdtsc(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  REPRO_RETURN_IF_ERROR(ensure_started(t));
  if (t.where == ReplayThread::Where::kParked) {
    REPRO_RETURN_IF_ERROR(resume(t));
  }
  const std::string expected = fmt::format("rdtsc at {:#x}", event.address);
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    int signal = WIFSTOPPED(status) && stop_event(status) == 0 ? WSTOPSIG(status) : 0;
    if (signal == SIGSEGV || signal == SIGILL) {
      // Trapped (SIGSEGV on the instruction) or patched (SIGILL on a site).
      t.where = ReplayThread::Where::kParked;  // resuming with no signal drops it
      REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
      REPRO_ASSIGN_OR_RETURN(std::optional<patch::TscStop> stop,
                             patcher_.rdtsc_at_stop(t.tid, t.pid, signal, regs));
      if (!stop) {
        return diverged(t, expected, describe_stop(status) + " (a fault)");
      }
      if (regs.rip != event.address) {
        return diverged(t, expected, fmt::format("rdtsc at {:#x}", regs.rip));
      }
      patch::emulate_rdtsc(regs, *stop, event.tsc, event.tsc_aux);
      return os::set_registers(t.tid, regs);
    }
    if (!WIFSTOPPED(status) || is_stop_event(status, PTRACE_EVENT_SECCOMP) ||
        is_stop_event(status, PTRACE_EVENT_EXIT)) {
      stashed_stops_[t.tid].push_front(status);
      if (is_stop_event(status, PTRACE_EVENT_SECCOMP)) {
        REPRO_ASSIGN_OR_RETURN(os::Registers r, os::get_registers(t.tid));
        t.where = ReplayThread::Where::kParked;
        stashed_stops_[t.tid].pop_front();
        return diverged(t, expected,
                        describe_syscall(static_cast<int>(r.orig_rax),
                                         {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9}));
      }
      return diverged(t, expected, describe_stop(status));
    }
    REPRO_RETURN_IF_ERROR(resume(t));
  }
}

Status ReplaySession::on_rdtsc_patch(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  REPRO_RETURN_IF_ERROR(ensure_started(t));
  for (const format::MemoryWrite& site : event.writes) {
    Status patched = patcher_.patch_site(t.tid, t.pid, {site.address, site.bytes});
    if (patched.code() == StatusCode::kInvalidArgument) {
      return diverged(t, fmt::format("rdtsc to patch in {}", event.path), patched.message());
    }
    REPRO_RETURN_IF_ERROR(patched);
  }
  return Status::ok();
}

Status ReplaySession::on_syscall_patch(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  REPRO_RETURN_IF_ERROR(ensure_started(t));
  const auto* original = reinterpret_cast<const uint8_t*>(event.data.data());
  auto compare = event.data.size() > 2 ? patch::site_compare_at(original + 2, event.data.size() - 2)
                                       : std::nullopt;
  if (!compare || event.writes.size() != 2) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("event #{}: a syscall-patch event without a site", event_index_));
  }
  std::string found(event.data.size(), '\0');
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, event.address, found.data(), found.size()));
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  if (found != event.data || regs.rip != event.address + 2) {
    return diverged(t, fmt::format("the syscall site at {:#x} in {} to patch, the thread past its syscall", event.address, event.path),
                    fmt::format("the thread at {:#x}, the site's bytes {}", regs.rip,
                                found == event.data ? "as recorded" : "changed"));
  }
  for (const format::MemoryWrite& write : event.writes) {
    REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, write.address, write.bytes.data(), write.bytes.size()));
  }
  patch::finish_site_compare(regs, compare->first, static_cast<uint8_t>(event.data.size()));
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  // The recorder patches no site another thread stands in, but replay may
  // have left one there: a thread whose fast-path calls were answered in
  // the program stays where its last event left it (just past this
  // syscall) while the recording had it run on to its next stop. It gets
  // past the compare as the patching thread did, before the bytes under
  // it have changed meaning.
  for (auto& [index, other] : threads_) {
    if (index == t.index || other.pid != t.pid || other.where != ReplayThread::Where::kParked) {
      continue;
    }
    REPRO_ASSIGN_OR_RETURN(os::Registers other_regs, os::get_registers(other.tid));
    if (other_regs.rip == event.address + 2) {
      patch::finish_site_compare(other_regs, compare->first, static_cast<uint8_t>(event.data.size()));
      REPRO_RETURN_IF_ERROR(os::set_registers(other.tid, other_regs));
    }
  }
  return Status::ok();
}

Status ReplaySession::on_preempt(const format::Event& event) {
  if (!reader_->header().redacted_env.empty()) {
    // A preemption point is found again by a hash of the program's
    // writable memory, and the initial stack of every process holds the
    // environment: with filler in place of the redacted values that hash
    // can never match, so stop here rather than search for it.
    return Status::error(
        StatusCode::kUnsupported,
        fmt::format("event #{}: cannot replay a preemption point of a trace recorded with "
                    "--redact-env (the memory hash that finds it covers the environment, whose "
                    "values the trace left out); record without --redact-env to replay past it",
                    event_index_));
  }
  ReplayThread& t = thread(event.thread);
  REPRO_RETURN_IF_ERROR(ensure_started(t));
  if (t.where == ReplayThread::Where::kAtEntry) {
    return diverged(t, "a preemption in user code", describe_syscall(t.syscall_number, t.args));
  }
  return find_preemption_point(t, event);
}

}  // namespace repro::replayer
