#include "tracer/record_session.h"
#include "tracer/record_thread.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <tuple>

#include "core/base/check.h"
#include "core/base/env_switch.h"
#include "core/fastpath/fastpath_abi.h"
#include "core/format/env_redaction.h"
#include "core/format/trace_format.h"
#include "core/os/auxv.h"
#include "core/os/host_probe.h"
#include "core/os/host_report.h"
#include "core/os/memory_hash.h"
#include "core/os/signal_frame.h"
#include "core/os/spawn.h"
#include "core/os/elf_needed.h"
#include "core/os/tracee.h"
#include "core/syscalls/syscall_table.h"
#include "core/seccomp/seccomp_filter.h"
#include "tracer/exec_privileges.h"
#include "tracer/pi_futex.h"
#include "tracer/process_memory_writes.h"
#include "tracer/syscall_inputs.h"

extern char** environ;

namespace repro::tracer {

namespace {

constexpr unsigned long kPtraceOptions =
    PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
    PTRACE_O_TRACEEXEC | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;

// While a thread is inside a syscall that the tables do not mark as
// blocking, other ready threads wait this long before the recorder assumes
// it blocks after all and passes the CPU on. Short enough not to stall a
// writer on a full pipe noticeably, long enough that ordinary syscalls
// (microseconds) finish first.
constexpr int kInKernelGraceMs = 2;
// With the chaos policy, longer: a syscall that outlasts the grace on a
// busy machine is a scheduling point that another run of the same seed
// would not have.
constexpr int kChaosInKernelGraceMs = 50;
// How often, during the grace, the recorder looks whether the thread fell
// asleep in the kernel (then it passes the CPU on at once).
constexpr auto kInKernelSleepCheck = std::chrono::microseconds(50);

// A scheduler state of a thread asleep in the kernel: interruptible or not.
bool is_kernel_sleep(char state) { return state == 'S' || state == 'D'; }

// How often buffered events are written out even if the frame is not full,
// so a recorder killed with SIGKILL loses at most this much.
constexpr auto kFlushInterval = std::chrono::milliseconds(250);

bool is_exit(int number) { return number == SYS_exit || number == SYS_exit_group; }

// The job-stop signals and SIGCONT: their delivery-stop is part of job control and is
// left as it comes.
bool is_stop_signal(int signal) { return os::is_job_stop_signal(signal) || signal == SIGCONT; }

// Syscalls replay executes for real, in trace order. One that ran in the
// kernel while other threads ran user code could have seen or changed the
// address space (or, for fork, memory) at a moment replay cannot
// reproduce, so it keeps the CPU until it returns, past the grace period.
// They all finish on their own. So do the PI futex ops that never block:
// the futex word they leave must be read before anyone else runs.
bool must_finish_alone(int number, const std::array<uint64_t, 6>& args) {
  if (number == SYS_mmap || number == SYS_clone || number == SYS_fork ||
      is_nonblocking_pi_futex(number, args)) {
    return true;
  }
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(number);
  return info != nullptr && info->policy == syscalls::ReplayPolicy::kExecute && !info->may_block();
}

bool is_vfork(int number, const std::array<uint64_t, 6>& args) {
  return number == SYS_vfork || (number == SYS_clone && (args[0] & CLONE_VFORK));
}

// Syscalls the recorder answers ENOSYS without running them: io_uring
// bypasses syscall tracing; rseq lets the kernel write into the thread's
// memory at preemptions we cannot see; clone3 has its arguments in a struct
// (glibc falls back to clone). Copies into the recording's own output are
// answered the same way (SyscallRecorder::copies_to_recording_output).
bool is_denied(int number) {
  return number == SYS_io_uring_setup || number == SYS_rseq || number == SYS_clone3;
}

// The fast-path library: `configured` if given, else librepro_preload.so
// beside the repro binary (where the build puts it) or in ../lib/repro/
// (an install). Empty if there is none.
std::string find_fast_path_library(const std::string& configured) {
  if (!configured.empty()) {
    return access(configured.c_str(), R_OK) == 0 ? configured : "";
  }
  std::error_code ec;
  std::filesystem::path exe_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) {
    return "";
  }
  for (const char* relative : {"librepro_preload.so", "../lib/repro/librepro_preload.so"}) {
    std::filesystem::path candidate = (exe_dir / relative).lexically_normal();
    if (access(candidate.c_str(), R_OK) == 0) {
      return candidate.string();
    }
  }
  return "";
}

// Whether the program links a sanitizer runtime that insists on coming
// first in the initial library list (AddressSanitizer and its kin refuse
// to start after a preloaded library): its DT_NEEDED entries say.
bool links_sanitizer_runtime(const std::string& exe_path) {
  Result<std::vector<std::string>> needed = os::needed_libraries(exe_path);
  if (!needed.is_ok()) {
    return false;  // a script, or no ELF we can read: the loader decides
  }
  for (const std::string& library : *needed) {
    for (const char* runtime : {"libasan.so", "libtsan.so", "libhwasan.so", "liblsan.so",
                                "libclang_rt.asan", "libclang_rt.tsan"}) {
      if (library.starts_with(runtime)) {
        return true;
      }
    }
  }
  return false;
}

// Puts `library` first in LD_PRELOAD, keeping what the user preloads.
void preload_library(const std::string& library, std::vector<std::string>* env) {
  for (std::string& entry : *env) {
    if (entry.starts_with("LD_PRELOAD=")) {
      std::string rest = entry.substr(strlen("LD_PRELOAD="));
      entry = "LD_PRELOAD=" + library + (rest.empty() ? "" : ":" + rest);
      return;
    }
  }
  env->push_back("LD_PRELOAD=" + library);
}

// Trapping where the host makes rdtsc fault, patching elsewhere or when
// REPRO_TSC=patch asks for it. The host is probed for real: some accept
// PR_SET_TSC and still let rdtsc run.
Result<format::TscMode> recording_tsc_mode(const RecordOptions& options) {
  REPRO_ASSIGN_OR_RETURN(os::TscRequest request, os::tsc_request_from_env());
  if (request == os::TscRequest::kPatch) {
    return format::TscMode::kPatch;
  }
  Result<os::TscTrapProbe> probe = os::probe_tsc_trapping();
  REPRO_RETURN_IF_ERROR(probe.status());
  if (os::choose_tsc_mode(probe, request) == os::TscMode::kTrap) {
    return format::TscMode::kTrap;
  }
  if (request == os::TscRequest::kTrap) {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("REPRO_TSC=trap, but this host does not trap rdtsc ({})",
                                     probe->describe()));
  }
  if (options.on_warning) {
    options.on_warning(fmt::format("this host does not trap rdtsc ({}): recording in patching "
                                   "mode; see 'repro doctor'",
                                   probe->describe()));
  }
  return format::TscMode::kPatch;
}

std::string registers_bytes(const os::Registers& regs) {
  return std::string(reinterpret_cast<const char*>(&regs), sizeof regs);
}

}  // namespace


RecordSession::RecordSession(const RecordOptions& options)
    : options_(options), snapshot_bytes_left_(options.snapshot_budget_bytes) {}

RecordSession::~RecordSession() { kill_all(); }

Result<std::unique_ptr<RecordSession>> RecordSession::start(const RecordOptions& options) {
  if (options.argv.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "no program to record");
  }
  REPRO_ASSIGN_OR_RETURN(std::string exe_path, os::find_program(options.argv[0]));
  std::unique_ptr<RecordSession> session(new RecordSession(options));
  REPRO_ASSIGN_OR_RETURN(format::TscMode tsc_mode, recording_tsc_mode(options));
  session->patch_rdtsc_ = tsc_mode == format::TscMode::kPatch;
  const char* slice_clock = getenv("REPRO_SLICE_CLOCK");
  session->cpu_time_slices_ = !(slice_clock != nullptr && std::string_view(slice_clock) == "wall") &&
                              os::thread_cpu_ns(getpid()).has_value();

  // The tracer waits for tracee stops and its own SIGINT/SIGTERM on one fd.
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  session->signal_fd_.reset(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!session->signal_fd_.valid()) {
    return Status::from_errno(errno, "signalfd");
  }
  // A trace that outgrows RLIMIT_FSIZE must end in an error (EFBIG) that
  // keeps what was written, not in SIGXFSZ killing repro. The program
  // gets the default back (os::spawn_traced).
  signal(SIGXFSZ, SIG_IGN);
  format::TraceHeader header;
  if (options.pin_to_one_cpu) {
    // A ptrace stop costs 7 µs when tracer and tracee share a CPU and
    // ~65 µs across CPUs here (DESIGN.md); only one tracee runs at a time.
    // The header names the CPU: cpuid tells the program its core.
    int cpu = std::max(sched_getcpu(), 0);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) == 0) {
      header.pinned_cpu = cpu;
    }
  }
  header.cpu = format::current_cpu_identity();
  header.tsc_mode = tsc_mode;
  utsname uts;
  if (uname(&uts) == 0) {
    header.kernel_release = uts.release;
  }
  header.argv = options.argv;
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  if (options.fast_path && !options.chaos) {
    // In the header too: replay runs the same library, whose syscalls then
    // stop at the replayer and are answered from the batches.
    std::string library = find_fast_path_library(options.fast_path_library);
    if (library.empty()) {
      if (options.on_warning) {
        options.on_warning("librepro_preload.so not found next to repro: recording without "
                           "the fast path (every syscall stops)");
      }
    } else if (links_sanitizer_runtime(exe_path)) {
      // Recorded without the fast path, as --no-fast-path would.
    } else {
      preload_library(library, &env);
      session->fast_path_on_ = true;
      session->patch_syscall_sites_ = !switched_off("REPRO_SYSCALL_PATCHING");
      // Chaos mode counts a pipe write's wake-up in its schedule, which a
      // write without a stop would leave to the clock.
      auto pipe_nowait = os::probe_pipe_nowait();
      session->fast_path_pipes_ = !options.chaos && !switched_off("REPRO_FAST_PATH_PIPES") &&
                                  pipe_nowait.is_ok() && *pipe_nowait == 0;
    }
  }
  header.env = format::redact_environment(env, options.redact_env, &header.redacted_env);
  if (!header.redacted_env.empty()) {
    // Preempt events copy changed memory pages, the initial stack and its
    // environment strings included: none, or the values would be in them.
    session->snapshot_bytes_left_ = 0;
  }
  std::error_code ec;
  header.cwd = std::filesystem::current_path(ec).string();
  header.exe_path = exe_path;
  header.seed = options.seed;
  if (options.chaos) {
    header.scheduler.policy = "chaos";
    header.scheduler.depth = options.chaos_depth;
    header.scheduler.expected_points = options.chaos_points;
    header.scheduler.skipped_changes.assign(options.chaos_skipped_changes.begin(),
                                            options.chaos_skipped_changes.end());
    header.scheduler.skipped_starvations.assign(options.chaos_skipped_starvations.begin(),
                                                options.chaos_skipped_starvations.end());
  }
  header.scheduler.base_slice_ms = static_cast<uint32_t>(options.time_slice.count());
  header.start_time_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  header.repro_version = REPRO_VERSION_TEXT;
  REPRO_ASSIGN_OR_RETURN(session->writer_, format::TraceWriter::create(options.trace_dir, header));
  session->file_reads_ = std::make_unique<FileReadReferences>(session->writer_.get());
  if (options.chaos) {
    session->policy_ = make_chaos_policy({.seed = options.seed,
                                          .depth = options.chaos_depth,
                                          .expected_points = header.scheduler.expected_points,
                                          .base_slice = options.time_slice,
                                          .skipped_changes = options.chaos_skipped_changes,
                                          .skipped_starvations = options.chaos_skipped_starvations});
  } else {
    session->policy_ = make_round_robin_policy(options.time_slice);
  }

  os::SpawnOptions spawn;
  spawn.exe_path = exe_path;
  spawn.argv = options.argv;
  spawn.env = env;  // the real values: only the trace goes without them
  spawn.ptrace_options = kPtraceOptions;
  bool trap_rdtsc = !session->patch_rdtsc_;
  uint64_t untraced_ip = session->fast_path_on_ ? REPRO_FASTPATH_UNTRACED_IP : 0;
  spawn.before_exec = [trap_rdtsc, untraced_ip] {
    return seccomp::install_trace_filter(trap_rdtsc, untraced_ip);
  };
  REPRO_ASSIGN_OR_RETURN(pid_t pid, os::spawn_traced(spawn));
  REPRO_RETURN_IF_ERROR(session->begin(pid, exe_path));
  return session;
}

Status RecordSession::begin(pid_t pid, const std::string& exe_path) {
  root_pid_ = pid;
  last_stop_at_ = std::chrono::steady_clock::now();
  auto thread = std::make_unique<Thread>();
  thread->tid = pid;
  thread->pid = pid;
  thread->index = next_index_++;
  thread->exec_filename = exe_path;
  Thread& t = *thread;
  threads_[pid] = std::move(thread);

  event_.clear();
  event_.kind = format::EventKind::kThreadStart;
  event_.thread = t.index;
  event_.recorded_tid = pid;
  REPRO_RETURN_IF_ERROR(log(event_));
  // The first exec came from spawn, which replay repeats by itself: the
  // program starts at this exec stop, not at an execve syscall exit.
  REPRO_RETURN_IF_ERROR(log_exec(t, /*first_exec=*/true));
  make_ready(t);
  return Status::ok();
}

std::set<pid_t> RecordSession::live_processes() const {
  std::set<pid_t> processes;
  for (const auto& [tid, t] : threads_) {
    processes.insert(t->pid);
  }
  return processes;
}

Status RecordSession::log(const format::Event& event) {
  forget_page_copies(event);
  return trace_error(writer_->append(event));
}

Status RecordSession::flush_trace() {
  return trace_error(writer_->flush());
}

Status RecordSession::trace_error(Status status) const {
  if (!status.is_ok()) {
    return status.context(fmt::format("writing trace '{}'", options_.trace_dir));
  }
  return status;
}

RecordSession::Thread* RecordSession::find(pid_t tid) {
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : it->second.get();
}

void RecordSession::kill_all() {
  for (auto& [tid, thread] : threads_) {
    kill(tid, SIGKILL);
  }
}

// ---------------------------------------------------------------------------
// Scheduling

void RecordSession::make_ready(Thread& t) {
  if (t.emulated_stop_status != 0) {
    t.state = Thread::State::kEmulatedStop;  // runs again when its tracer lets it
    return;
  }
  t.state = Thread::State::kReady;
  ready_.push_back(t.tid);
}

void RecordSession::release_cpu(Thread& t) {
  if (current_ == t.tid) {
    current_ = 0;
  }
}

std::vector<uint32_t> RecordSession::ready_indices() {
  std::vector<uint32_t> indices;
  indices.reserve(ready_.size());
  for (pid_t tid : ready_) {
    indices.push_back(find(tid)->index);
  }
  return indices;
}

void RecordSession::schedule_next() {
  while (current_ == 0 && !ready_.empty()) {
    size_t chosen = policy_->pick(ready_indices());
    pid_t tid = ready_[chosen];
    ready_.erase(ready_.begin() + static_cast<long>(chosen));
    Thread* t = find(tid);
    current_ = tid;
    start_slice(tid);
    running_since_ = slice_start_;
    probed_this_run_ = false;
    Status status;
    if (t->held_for_output) {
      t->held_for_output = false;
      status = enter_syscall(*t);
    } else if (t->held_for_tracee) {
      status = retry_wait_for_ptrace_stop(*t);
    } else if (t->signal_to_deliver != 0) {
      status = deliver_signal_from_emulated_tracer(*t);
    } else {
      status = resume_user(*t);
    }
    if (!status.is_ok()) {
      // The thread died while parked; its exit is reported by waitpid.
      current_ = 0;
    }
  }
}

Status RecordSession::resume_user(Thread& t) {
  t.state = Thread::State::kRunning;
  if (t.stop_ahead) {
    deferred_stops_.emplace_back(t.tid, *t.stop_ahead);
    t.stop_ahead.reset();
    return Status::ok();
  }
  if (ptrace(PTRACE_CONT, t.tid, nullptr, 0) != 0) {
    return os::ptrace_error(errno, "resuming", t.tid);
  }
  return Status::ok();
}

std::chrono::steady_clock::time_point RecordSession::in_kernel_deadline(
    std::chrono::steady_clock::time_point since) const {
  return since +
         std::chrono::milliseconds(options_.chaos ? kChaosInKernelGraceMs : kInKernelGraceMs);
}

Status RecordSession::resume_in_kernel(Thread& t) {
  t.state = Thread::State::kInSyscall;
  t.in_kernel_since = std::chrono::steady_clock::now();
  if (ptrace(PTRACE_SYSCALL, t.tid, nullptr, 0) != 0) {
    return os::ptrace_error(errno, "resuming into syscall", t.tid);
  }
  return Status::ok();
}

Status RecordSession::log_entered(Thread& t) {
  event_.clear();
  event_.kind = format::EventKind::kSyscallEntered;
  event_.thread = t.index;
  event_.syscall_number = t.syscall_number;
  event_.args = t.args;
  REPRO_RETURN_IF_ERROR(add_pi_lock_word(t));
  t.entered_logged = true;
  return log(event_);
}

std::vector<uint64_t> RecordSession::stack_pointers(const Thread& t, uint64_t rsp) {
  // Replay computes the same list for the same point (preemption_finder):
  // each thread as it stands, one inside a syscall as at its entry.
  std::vector<uint64_t> pointers;
  for (const auto& [tid, other] : threads_) {
    if (other->pid != t.pid) {
      continue;
    }
    if (other.get() == &t) {
      pointers.push_back(rsp);
    } else if (other->state == Thread::State::kInSyscall ||
               other->state == Thread::State::kHeld || other->state == Thread::State::kExiting ||
               other->state == Thread::State::kStarting) {
      pointers.push_back(other->syscall_entry_sp);  // a new thread's: its clone's stack
    } else if (other->state == Thread::State::kJobStopped) {
      pointers.push_back(other->job_stop_sp);
    } else if (auto regs = os::get_registers(tid); regs.is_ok()) {
      pointers.push_back(regs->rsp);
    }
  }
  return pointers;
}

Status RecordSession::log_preempt(Thread& t) {
  // The thread may have run since its stop was handled (stepped to a
  // point replay can find): what it logged in that time comes first.
  REPRO_RETURN_IF_ERROR(drain_fast_path(t));
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  REPRO_ASSIGN_OR_RETURN(uint64_t xstate_hash, os::hash_extended_registers(t.tid));
  event_.clear();
  // Copies, made in the hashing pass: of the pages whose content changed
  // since this process's last copy of them, while the budget lasts. A page
  // of zeros needs none (its hash says what it holds), which keeps thread
  // stacks and fresh heap out of the budget.
  os::PageVisitor copy_changed;
  if (snapshot_bytes_left_ >= os::kPageBytes) {
    copy_changed = [&, copies = &page_copies_[t.pid]](const os::PageHash& page,
                                                      const char* bytes) {
      if (page.hash == os::zero_page_hash()) {
        copies->erase(page.address);
        return;
      }
      auto it = copies->find(page.address);
      if ((it != copies->end() && it->second == page.hash) ||
          snapshot_bytes_left_ < os::kPageBytes) {
        return;
      }
      (*copies)[page.address] = page.hash;
      snapshot_bytes_left_ -= os::kPageBytes;
      event_.writes.push_back({page.address, std::string(bytes, os::kPageBytes)});
    };
  }
  REPRO_ASSIGN_OR_RETURN(os::WritableMemory memory,
                         os::hash_writable_memory(t.pid, stack_pointers(t, regs.rsp), 0,
                                                  copy_changed));
  event_.kind = format::EventKind::kPreempt;
  event_.thread = t.index;
  event_.registers = registers_bytes(regs);
  event_.extended_registers_hash = xstate_hash;
  event_.memory_hash = memory.hash;
  event_.page_hashes.resize(memory.pages.size());
  for (size_t i = 0; i < memory.pages.size(); ++i) {
    event_.page_hashes[i] = {memory.pages[i].address, memory.pages[i].hash};
  }
  return log(event_);
}

void RecordSession::forget_page_copies(const format::Event& event) {
  if (event.kind == format::EventKind::kThreadStart && (event.clone_flags & CLONE_THREAD) == 0) {
    page_copies_.erase(event.recorded_tid);  // a new process (its pid may be reused)
  } else if (event.kind == format::EventKind::kExec) {
    for (const auto& [tid, thread] : threads_) {
      if (thread->index == event.thread) {
        page_copies_.erase(thread->pid);
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The loop

Result<RecordOutcome> RecordSession::run() {
  add_last_words_hook([this] {
    (void)writer_->flush();
    kill_all();
  });
  while (true) {
    auto result = step();
    if (!result.is_ok()) {
      (void)writer_->flush();
      kill_all();
      return result.status();
    }
    if (*result == StepResult::kDone) {
      break;
    }
  }
  RecordOutcome outcome;
  outcome.wait_status = root_wait_status_;
  outcome.leftovers_stopped = leftovers_stopped_;
  outcome.event_count = writer_->event_count();
  outcome.interrupted = control_signals_ >= 2;
  outcome.tsc_mode = patch_rdtsc_ ? format::TscMode::kPatch : format::TscMode::kTrap;
  outcome.rdtsc_sites_patched = patcher_.sites_patched();
  outcome.deadlock = deadlock_report_;
  outcome.scheduler_decisions = policy_->decisions();
  if (outcome.interrupted) {
    REPRO_RETURN_IF_ERROR(flush_trace());
  } else {
    REPRO_RETURN_IF_ERROR(trace_error(writer_->finish()));
  }
  return outcome;
}

Status RecordSession::handle_control_signal(int signal) {
  if (root_gone_at_) {
    // The program has ended: Ctrl-C is for what it left running.
    stop_leftovers_if_due(/*immediately=*/true);
    return Status::ok();
  }
  ++control_signals_;
  if (control_signals_ == 1) {
    // First Ctrl-C or SIGTERM: the program decides what it means.
    kill(root_pid_, signal);
  } else {
    // Second one: stop now, keep what was recorded (incomplete trace).
    (void)writer_->flush();
    kill_all();
  }
  return Status::ok();
}

Result<RecordSession::StepResult> RecordSession::step() {
  if (threads_.empty()) {
    return StepResult::kDone;
  }
  expire_exit_holds();
  stop_leftovers_if_due(/*immediately=*/false);
  end_stuck_tracer_waits();
  schedule_next();

  auto now = std::chrono::steady_clock::now();
  if (now - last_flush_ > kFlushInterval) {
    REPRO_RETURN_IF_ERROR(flush_trace());
    last_flush_ = now;
  }

  // How long to wait for the next stop before acting on the current thread.
  int timeout_ms = -1;
  bool in_kernel_check = false;  // look again soon whether it fell asleep
  Thread* current = current_ ? find(current_) : nullptr;
  if (current != nullptr && !ready_.empty()) {
    if (current->state == Thread::State::kRunning && !current->interrupt_requested) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(interrupt_deadline() - now);
      timeout_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    } else if (current->state == Thread::State::kInSyscall &&
               !must_finish_alone(current->syscall_number, current->args)) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(
          in_kernel_deadline(current->in_kernel_since) - now);
      timeout_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
      if (!current->entered_logged && os::asleep_in_kernel(current_)) {
        // It sleeps in the kernel (a write to a full pipe, a wait) while
        // others are ready: pass the CPU on now rather than at the end of
        // the grace. (In chaos mode, enter_until_asleep may have kept the
        // CPU for it while no one else was ready.)
        REPRO_RETURN_IF_ERROR(log_entered(*current));
        release_cpu(*current);
        return StepResult::kContinue;
      }
      in_kernel_check = true;
    }
  }
  if (timeout_ms < 0 || timeout_ms > 250) {
    timeout_ms = 250;  // wake up to flush
  }
  for (const auto& [tid, held] : threads_) {
    if (held->hold_deadline) {
      timeout_ms = std::min(timeout_ms, 20);  // wake up to let an exit hold expire
    }
  }

  int wait_status = 0;
  pid_t tid = 0;
  bool from_deferred = !deferred_stops_.empty();
  if (from_deferred) {
    std::tie(tid, wait_status) = deferred_stops_.front();
    deferred_stops_.pop_front();
  } else {
    tid = waitpid(-1, &wait_status, __WALL | WNOHANG);
  }
  if (tid == 0) {
    pollfd fd{signal_fd_.get(), POLLIN, 0};
    auto timeout = std::chrono::microseconds(timeout_ms) * 1000;
    if (in_kernel_check) {
      // Past the grace too: the thread still runs in the kernel (below).
      timeout = timeout_ms == 0 ? kInKernelSleepCheck : std::min(timeout, kInKernelSleepCheck);
    }
    // Under a second (timeout_ms is at most 250).
    timespec poll_timeout{0, std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count()};
    int ready = ppoll(&fd, 1, &poll_timeout, nullptr);
    if (ready < 0 && errno != EINTR) {
      return Status::from_errno(errno, "poll");
    }
    signalfd_siginfo info;
    while (read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGINT || info.ssi_signo == SIGTERM) {
        REPRO_RETURN_IF_ERROR(handle_control_signal(static_cast<int>(info.ssi_signo)));
      }
    }
    tid = waitpid(-1, &wait_status, __WALL | WNOHANG);
    if (tid == 0) {
      REPRO_ASSIGN_OR_RETURN(bool deadlocked, end_if_deadlocked());
      if (deadlocked) {
        return StepResult::kContinue;
      }
      // Nothing happened within the timeout: act on the current thread.
      current = current_ ? find(current_) : nullptr;
      if (current != nullptr && !ready_.empty()) {
        if (current->state == Thread::State::kRunning && !current->interrupt_requested &&
            deadline_reached_on_cpu(*current, std::chrono::steady_clock::now())) {
          current->interrupt_requested = true;
          if (ptrace(PTRACE_INTERRUPT, current->tid, nullptr, nullptr) != 0 && errno != ESRCH) {
            return Status::from_errno(errno, "ptrace(PTRACE_INTERRUPT)");
          }
        } else if (current->state == Thread::State::kInSyscall &&
                   !current->entered_logged &&
                   !must_finish_alone(current->syscall_number, current->args) &&
                   // poll also returns for a SIGCHLD left from stops already
                   // handled: only a syscall that outlasted the grace blocks.
                   std::chrono::steady_clock::now() >=
                       in_kernel_deadline(current->in_kernel_since) &&
                   // Only while it sleeps in the kernel. Not while it runs,
                   // or waits for a CPU (other jobs on a busy machine): it
                   // has not blocked, and whether the grace ran out would
                   // be a matter of the machine's load. Nor once it stands
                   // at a stop ('t') that came after the waitpid above: its
                   // syscall ended, and that stop is next.
                   is_kernel_sleep(os::scheduler_state(current->tid))) {
          REPRO_RETURN_IF_ERROR(log_entered(*current));
          release_cpu(*current);
        }
      }
      return StepResult::kContinue;
    }
  }
  if (tid > 0) {
    last_stop_at_ = std::chrono::steady_clock::now();
    deadlock_checked_ = false;
    if (!from_deferred && hold_back_wakeup(tid, wait_status)) {
      return StepResult::kContinue;
    }
  }
  if (tid < 0) {
    if (errno == ECHILD) {
      threads_.clear();
      return StepResult::kDone;
    }
    return Status::from_errno(errno, "waitpid");
  }

  if (WIFEXITED(wait_status) || WIFSIGNALED(wait_status)) {
    REPRO_RETURN_IF_ERROR(on_gone(tid, wait_status));
    return StepResult::kContinue;
  }
  Thread* t = find(tid);
  if (t == nullptr) {
    // A new thread's first stop, before its creator's clone event: park it.
    early_stops_.insert(tid);
    if ((static_cast<unsigned>(wait_status) >> 16) == PTRACE_EVENT_EXIT) {
      // Killed before anyone knew it (SIGKILL as its process cloned it):
      // its creator may never report the clone, so let it die now rather
      // than hold it in its exit stop, and the recording with it.
      if (ptrace(PTRACE_CONT, tid, nullptr, 0) != 0 && errno != ESRCH) {
        return os::ptrace_error(errno, "resuming an exiting thread", tid);
      }
    }
    return StepResult::kContinue;
  }
  int signal = WSTOPSIG(wait_status);
  int event = static_cast<unsigned>(wait_status) >> 16;
  Status status;
  if (event != PTRACE_EVENT_EXEC) {
    // What it did without a stop comes first (an exec stop finds its old
    // memory gone: it was drained at the execve entry).
    status = drain_fast_path(*t);
    if (status.code() == StatusCode::kTraceeDied) {
      return StepResult::kContinue;
    }
    REPRO_RETURN_IF_ERROR(status);
  }
  if (event == PTRACE_EVENT_STOP && t->interrupt_requested &&
      t->state == Thread::State::kRunning && !os::is_job_stop_signal(signal)) {
    Result<bool> replaced = take_trap_behind_interrupt(*t);
    if (!replaced.is_ok() && replaced.status().code() != StatusCode::kTraceeDied) {
      return replaced.status();
    }
    if (!replaced.is_ok() || *replaced) {
      return StepResult::kContinue;
    }
  }
  if (t->probing) {
    if (is_spin_probe_hit(*t, wait_status)) {
      status = on_spin_probe_hit(*t);
      return status.is_ok() || status.code() == StatusCode::kTraceeDied
                 ? Result<StepResult>(StepResult::kContinue)
                 : Result<StepResult>(status);
    }
    // Anything else ends the probe: the thread left the loop.
    status = remove_spin_probe(*t);
    if (!status.is_ok() && status.code() != StatusCode::kTraceeDied) {
      return status;
    }
  }
  if (t->stepping_into_handler) {
    bool consumed = false;
    status = finish_step_into_handler(*t, wait_status, &consumed);
    if (consumed || !status.is_ok()) {
      return status.code() == StatusCode::kTraceeDied || status.is_ok()
                 ? Result<StepResult>(StepResult::kContinue)
                 : Result<StepResult>(status);
    }
  }
  if (signal == (SIGTRAP | 0x80)) {
    status = on_syscall_exit(*t);
  } else if (event == PTRACE_EVENT_SECCOMP) {
    status = on_syscall_entry(*t);
  } else if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
             event == PTRACE_EVENT_VFORK) {
    status = on_new_thread(*t, event);
  } else if (event == PTRACE_EVENT_EXEC) {
    status = on_exec(*t);
  } else if (event == PTRACE_EVENT_EXIT) {
    status = on_exit_event(*t);
  } else if (event == PTRACE_EVENT_STOP) {
    status = on_event_stop(*t, signal);
  } else if (event == 0) {
    status = on_signal(*t, signal);
  } else {
    status = resume_user(*t);  // PTRACE_EVENT_VFORK_DONE and the like
  }
  if (status.code() == StatusCode::kTraceeDied) {
    // The thread vanished mid-handling (killed by exit_group of a sibling,
    // or SIGKILL from outside); waitpid reports its end next.
    return StepResult::kContinue;
  }
  REPRO_RETURN_IF_ERROR(status);
  return StepResult::kContinue;
}

// ---------------------------------------------------------------------------
// Syscalls

Status RecordSession::on_syscall_entry(Thread& t) {
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  if (t.restarting) {
    // The same syscall again, after our interrupt broke it off (or
    // restart_syscall, which continues it): the trace goes on with it as
    // if nothing happened.
    t.restarting = false;
    if (t.tracee_wait_interrupted) {
      // A wait broken off because a thread it traces stopped (emulated):
      // answered when it is scheduled (record_ptrace.cc).
      t.tracee_wait_interrupted = false;
      t.held_for_tracee = true;
      make_ready(t);
      return Status::ok();
    }
    if (t.entered_logged) {
      return resume_in_kernel(t);  // its entry is logged, its CPU passed on
    }
    if (static_cast<int>(regs.orig_rax) == SYS_restart_syscall) {
      regs.orig_rax = static_cast<uint64_t>(t.syscall_number);  // log it as the original
    }
  }
  t.syscall_number = static_cast<int>(regs.orig_rax);
  t.entry_regs = regs;
  t.syscall_entry_sp = regs.rsp;
  t.args = {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9};
  t.entered_logged = false;

  if (t.syscall_number == SYS_ptrace) {
    return emulate_ptrace(t);
  }
  if (t.syscall_number == SYS_wait4 || t.syscall_number == SYS_waitid) {
    REPRO_ASSIGN_OR_RETURN(bool answered, emulate_wait_for_ptrace_stop(t));
    if (answered) {
      return Status::ok();
    }
  }
  REPRO_ASSIGN_OR_RETURN(bool fast_path_control, on_fast_path_control(t));
  if (fast_path_control) {
    return Status::ok();
  }
  if (strip_clone_untraced(t, regs)) {
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  }

  if (is_denied(t.syscall_number) ||
      recorder_.copies_to_recording_output(t.pid, t.syscall_number, t.args)) {
    regs.orig_rax = static_cast<uint64_t>(-1);  // skip it; rax is the result
    regs.rax = static_cast<uint64_t>(-ENOSYS);
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
    event_.clear();
    event_.kind = format::EventKind::kSyscall;
    event_.thread = t.index;
    event_.syscall_number = t.syscall_number;
    event_.args = t.args;
    event_.result = -ENOSYS;
    event_.syscall_flags = format::kSyscallDenied;
    REPRO_RETURN_IF_ERROR(log(event_));
    return resume_user(t);
  }
  return enter_syscall(t);
}

Status RecordSession::enter_syscall(Thread& t) {
  std::optional<OutputTarget> target = output_target(t.pid, t.syscall_number, t.args);
  bool kills_siblings = t.syscall_number == SYS_exit_group || t.syscall_number == SYS_execve ||
                        t.syscall_number == SYS_execveat;
  if (target ? output_order_.busy(*target, t.tid)
             : kills_siblings && !t.hold_expired && output_order_.process_busy(t.pid, t.tid)) {
    return hold_for_output(t, target);
  }
  t.hold_expired = false;
  if (target) {
    output_order_.begin(t.tid, t.pid, *target);
  }
  if (is_exit(t.syscall_number)) {
    event_.clear();
    event_.kind = format::EventKind::kSyscall;
    event_.thread = t.index;
    event_.syscall_number = t.syscall_number;
    event_.args = t.args;
    event_.syscall_flags = format::kSyscallExecuted;
    REPRO_RETURN_IF_ERROR(log(event_));
    // The thread keeps the CPU until it is gone: the kernel clears its
    // CLONE_CHILD_CLEARTID word on the way out, which a joining thread
    // reads, so nothing else may run until then.
    t.state = Thread::State::kExiting;
    if (ptrace(PTRACE_CONT, t.tid, nullptr, 0) != 0) {
      return os::ptrace_error(errno, "resuming exit", t.tid);
    }
    return Status::ok();
  }
  if (t.syscall_number == SYS_execve || t.syscall_number == SYS_execveat) {
    uint64_t filename = t.syscall_number == SYS_execve ? t.args[0] : t.args[1];
    auto name = os::read_c_string(t.tid, filename);
    t.exec_filename = name.is_ok() ? *name : "";
  }
  if (is_pi_futex_lock(t.syscall_number, t.args)) {
    return enter_until_asleep(t);
  }
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(t.syscall_number);
  // clone blocks only with CLONE_VFORK; otherwise it must return before
  // anything else runs, like the other syscalls replay executes. A write
  // to a regular file does not wait for anyone either.
  bool may_block = info != nullptr && info->may_block() && !must_finish_alone(t.syscall_number, t.args) &&
                   !(target && target->completes_alone);
  if (options_.chaos && may_block && !ready_.empty()) {
    return enter_until_asleep(t);
  }
  if (is_vfork(t.syscall_number, t.args) || (may_block && !ready_.empty())) {
    if (!t.entered_logged) {
      REPRO_RETURN_IF_ERROR(log_entered(t));
    }
    release_cpu(t);
  }
  return resume_in_kernel(t);
}

Status RecordSession::hold_for_output(Thread& t, std::optional<OutputTarget> target) {
  // The entry is logged now: replay takes the thread to this syscall, where
  // it stands while others run (memory hashes of their preemption points
  // see what it did up to here).
  if (!t.entered_logged) {
    REPRO_RETURN_IF_ERROR(log_entered(t));
  }
  output_order_.hold(t.tid, t.pid, target);
  t.held_for_output = true;
  t.state = Thread::State::kHeld;
  if (!target) {
    t.hold_deadline = std::chrono::steady_clock::now() + kExitHoldLimit;
  }
  release_cpu(t);
  return Status::ok();
}

void RecordSession::wake_held(const std::vector<pid_t>& tids) {
  for (pid_t tid : tids) {
    Thread* held = find(tid);
    if (held != nullptr && held->held_for_output && held->state == Thread::State::kHeld) {
      held->hold_deadline.reset();
      make_ready(*held);
    }
  }
}

void RecordSession::expire_exit_holds() {
  auto now = std::chrono::steady_clock::now();
  for (auto& [tid, t] : threads_) {
    if (t->state == Thread::State::kHeld && t->hold_deadline && now >= *t->hold_deadline) {
      output_order_.end(tid);  // forgets its hold
      t->hold_deadline.reset();
      t->hold_expired = true;
      make_ready(*t);
    }
  }
}

Result<bool> RecordSession::log_mapped_file(Thread& t, int fd, uint64_t address) {
  std::string fd_path = fmt::format("/proc/{}/fd/{}", t.pid, fd);
  std::error_code ec;
  std::string path = std::filesystem::read_symlink(fd_path, ec).string();
  struct stat by_fd, by_name;
  if (stat(fd_path.c_str(), &by_fd) != 0) {
    return Status::from_errno(errno, fmt::format("stat of mapped file '{}'", path));
  }
  std::string content_id;
  if (S_ISCHR(by_fd.st_mode) && by_fd.st_rdev == makedev(1, 5)) {
    // /dev/zero (character device 1:5 on every Linux): zero-filled
    // memory, private or shared; replay maps /dev/zero itself.
    content_id = format::kDevZeroContentId;
  } else if (!S_ISREG(by_fd.st_mode)) {
    // A device's or other special file's memory changes behind the
    // program's back and cannot be stored: recorded, replay refuses it.
    return false;
  } else {
    // Prefer the file's own name (it can be hard-linked into the trace)
    // when it still names the same file; fall back to the open descriptor.
    std::string source = fd_path;
    if (!ec && stat(path.c_str(), &by_name) == 0 && by_fd.st_dev == by_name.st_dev &&
        by_fd.st_ino == by_name.st_ino) {
      source = path;
    }
    auto stored = writer_->store_mapped_range(source, t.args[5], t.args[1]);
    if (!stored.is_ok()) {
      return stored.status().context(fmt::format("storing mapped file '{}'", path));
    }
    content_id = *stored;
  }
  event_.clear();
  event_.kind = format::EventKind::kMappedFile;
  event_.thread = t.index;
  event_.path = path;
  event_.content_id = content_id;
  event_.result = static_cast<int64_t>(address);
  REPRO_RETURN_IF_ERROR(log(event_));
  return true;
}

Status RecordSession::note_write_to_shared_file(Thread& t, int64_t written) {
  // A write to a file that is mapped shared changes the mapped memory too;
  // replay must apply it to its copy of the file. Only checked once the
  // program has mapped a file shared, so other programs pay nothing.
  int fd = static_cast<int>(t.args[0]);
  std::string fd_path = fmt::format("/proc/{}/fd/{}", t.pid, fd);
  struct stat file;
  if (stat(fd_path.c_str(), &file) != 0 || !S_ISREG(file.st_mode)) {
    return Status::ok();
  }
  std::string maps_path = fmt::format("/proc/{}/maps", t.pid);
  FILE* maps = std::fopen(maps_path.c_str(), "re");
  if (maps == nullptr) {
    return Status::ok();
  }
  bool mapped_shared = false;
  char line[512];
  while (!mapped_shared && std::fgets(line, sizeof line, maps) != nullptr) {
    char perms[8] = {};
    unsigned long inode = 0;
    if (std::sscanf(line, "%*x-%*x %7s %*x %*x:%*x %lu", perms, &inode) == 2) {
      mapped_shared = perms[3] == 's' && inode == file.st_ino;
    }
  }
  std::fclose(maps);
  if (!mapped_shared) {
    return Status::ok();
  }
  int64_t offset = static_cast<int64_t>(t.args[3]);
  if (t.syscall_number == SYS_write || t.syscall_number == SYS_writev) {
    // They wrote just before the file position they left behind.
    std::optional<uint64_t> position = file_position(t.pid, fd);
    if (!position) {
      return Status::error(StatusCode::kIoError,
                           fmt::format("reading '/proc/{}/fdinfo/{}'", t.pid, fd));
    }
    offset = static_cast<int64_t>(*position) - written;
  }
  std::error_code ec;
  format::Event note;
  note.kind = format::EventKind::kMappedFile;
  note.thread = t.index;
  note.path = std::filesystem::read_symlink(fd_path, ec).string();
  note.result = offset;
  event_.syscall_flags |= format::kSyscallWritesMappedFile;
  return log(note);
}

Status RecordSession::note_write_to_process_memory(Thread& t, int64_t result) {
  // Writes are looked at only once the program has opened a /proc/PID/mem
  // file: until then it costs a readlink per open, not one per write.
  const int number = t.syscall_number;
  if (!proc_mem_opened_ && result >= 0 &&
      (number == SYS_open || number == SYS_openat || number == SYS_openat2)) {
    proc_mem_opened_ = proc_mem_owner(t.pid, static_cast<int>(result)).has_value();
  }
  if (!proc_mem_opened_ || result <= 0 || !writes_at_file_position(number)) {
    return Status::ok();
  }
  std::optional<pid_t> owner = proc_mem_owner(t.pid, static_cast<int>(t.args[0]));
  if (!owner) {
    return Status::ok();
  }
  const Thread* owner_thread = find(*owner);
  if (*owner == t.pid || (owner_thread != nullptr && owner_thread->pid == t.pid)) {
    return capture_own_memory_write(t.tid, t.pid, &event_);
  }
  event_.syscall_flags |= format::kSyscallEffectsUnknown;  // another process's memory
  return Status::ok();
}

Status RecordSession::release_vfork_parent(pid_t child_tid) {
  for (auto& [tid, parent] : threads_) {
    if (parent->vfork_child == child_tid) {
      parent->vfork_child = 0;
      if (parent->vfork_exit_held) {
        parent->vfork_exit_held = false;
        return on_syscall_exit(*parent);
      }
    }
  }
  return Status::ok();
}

// A signal broke the syscall off (a restart result), and whether the
// program sees that depends on what the kernel does next, on the thread's
// way out: deliver a signal (the result becomes EINTR, or the syscall runs
// again after the handler) or, finding none, restart the syscall unseen.
// Finding none happens: a signal sent to the whole process wakes one
// thread, and another one may take it first. The result can only be logged
// once the thread's next stop shows which: a thread leaving a syscall stops
// again before running any instruction of its own (a signal-delivery stop,
// the restarted syscall's seccomp stop, a group-stop, its exit), so wait
// for that stop here. Our own PTRACE_INTERRUPT, if one is on its way,
// breaks a syscall off as a signal does (and the kernel restarts it after
// the interrupt's stop); that stop is served here and the next one taken.
// Returns true if the program never sees the result.
Result<bool> RecordSession::follow_restart_result(Thread& t) {
  while (true) {
    if (ptrace(PTRACE_CONT, t.tid, nullptr, 0) != 0) {
      return os::ptrace_error(errno, "resuming a broken-off syscall", t.tid);
    }
    REPRO_ASSIGN_OR_RETURN(int status, os::wait_for(t.tid));
    int event = static_cast<unsigned>(status) >> 16;
    if (WIFEXITED(status) || WIFSIGNALED(status) || event == PTRACE_EVENT_EXIT) {
      deferred_stops_.emplace_back(t.tid, status);  // killed inside the syscall
      return true;
    }
    if (event == PTRACE_EVENT_SECCOMP) {
      t.restarting = true;  // restarted: the trace shows one syscall
      REPRO_RETURN_IF_ERROR(on_syscall_entry(t));
      return true;
    }
    if (event == PTRACE_EVENT_STOP && t.interrupt_requested &&
        !os::is_job_stop_signal(WSTOPSIG(status))) {
      t.interrupt_requested = false;
      continue;
    }
    // Still at the syscall's exit for the program (the registers hold the
    // restart result until the signal is dealt with): log it as such, and
    // the stop comes when the thread is resumed.
    t.stop_ahead = status;
    return false;
  }
}

Status RecordSession::on_syscall_exit(Thread& t) {
  if (t.vfork_child != 0) {
    // The kernel lets a vfork parent return as soon as its child drops the
    // shared memory, which can be before the child's exec stop: log it
    // after the child's exec or exit, the order replay can reproduce.
    t.vfork_exit_held = true;
    return Status::ok();
  }
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  int64_t result = static_cast<int64_t>(regs.rax);
  if (syscalls::is_restart_result(result)) {
    REPRO_ASSIGN_OR_RETURN(bool never_returned, follow_restart_result(t));
    if (never_returned) {
      return Status::ok();
    }
  }
  REPRO_RETURN_IF_ERROR(log_handover_order(t));
  t.tracee_wait_interrupted = false;  // it ended before the interrupt could
  std::vector<pid_t> unheld = output_order_.end(t.tid);
  bool mapped_unknown = false;
  if (t.syscall_number == SYS_mmap && result >= 0 && !(t.args[3] & MAP_ANONYMOUS)) {
    REPRO_ASSIGN_OR_RETURN(bool stored, log_mapped_file(t, static_cast<int>(t.args[4]),
                                                         static_cast<uint64_t>(result)));
    mapped_unknown = !stored;
  }
  event_.clear();
  event_.kind = format::EventKind::kSyscall;
  event_.thread = t.index;
  event_.syscall_number = t.syscall_number;
  event_.args = t.args;
  event_.result = result;
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(t.syscall_number);
  if (info != nullptr && info->policy != syscalls::ReplayPolicy::kEmulate) {
    event_.syscall_flags |= format::kSyscallExecuted;
  }
  REPRO_RETURN_IF_ERROR(recorder_.capture(t.tid, t.pid, &event_));
  capture_syscall_inputs(t.tid, t.exec_filename, &event_);
  file_reads_->reference(t.tid, &event_);
  REPRO_RETURN_IF_ERROR(pipe_data_.note(t.tid, t.pid, &event_));
  if (mapped_unknown) {
    event_.syscall_flags |= format::kSyscallEffectsUnknown;
  }
  if (event_.syscall_flags & format::kSyscallEffectsUnknown) {
    // Said while recording, so the user learns before trying to replay.
    std::string name = syscalls::syscall_name(t.syscall_number);
    std::string what =
        t.syscall_number == SYS_ioctl ? fmt::format("{} (request {:#x})", name, t.args[1]) : name;
    warn_once(
        "effects unknown: " + name,
        fmt::format("{} has effects repro does not record; replay will refuse this trace", what));
  }
  if (t.syscall_number == SYS_mmap && result >= 0 && (t.args[3] & MAP_SHARED) &&
      !(t.args[3] & MAP_ANONYMOUS)) {
    shared_file_mapped_ = true;
    REPRO_RETURN_IF_ERROR(stop_fast_path_writes(t));
  }
  if (shared_file_mapped_ && result > 0 && writes_shared_file_data(t.syscall_number)) {
    REPRO_RETURN_IF_ERROR(note_write_to_shared_file(t, result));
  }
  REPRO_RETURN_IF_ERROR(note_write_to_process_memory(t, result));
  REPRO_RETURN_IF_ERROR(log(event_));
  note_signal_timers(t, result);
  wake_held(unheld);  // after this event: their output comes after its
  REPRO_RETURN_IF_ERROR(patch_code_made_executable(t, result));
  REPRO_RETURN_IF_ERROR(patch_syscall_site(t, result));
  if (result == 0 && (t.syscall_number == SYS_execve || t.syscall_number == SYS_execveat) &&
      stop_after_exec_for_emulated_tracer(t)) {
    t.entered_logged = false;
    return Status::ok();
  }
  if (t.syscall_number == SYS_set_tid_address) {
    t.clear_child_tid = t.args[0];
  }
  bool was_current = current_ == t.tid;
  if (was_current) {
    REPRO_RETURN_IF_ERROR(settle_wakeups(t, result));
  }
  t.entered_logged = false;
  if (!was_current) {
    // It was descheduled inside the kernel; it runs again when chosen.
    make_ready(t);
    return Status::ok();
  }
  auto now = std::chrono::steady_clock::now();
  running_since_ = now;
  probed_this_run_ = false;
  // (With the chaos policy the slice only bounds a stretch without syscalls:
  // see interrupt_deadline.)
  bool slice_over = !options_.chaos && now - slice_start_ >= policy_->time_slice();
  if (!ready_.empty() &&
      (policy_->switch_at_syscall(t.index, t.syscall_number, ready_indices()) || slice_over)) {
    release_cpu(t);
    make_ready(t);
    return Status::ok();
  }
  return resume_user(t);
}

// ---------------------------------------------------------------------------
// Threads, processes, exec, exit

Status RecordSession::on_new_thread(Thread& t, int ptrace_event) {
  REPRO_ASSIGN_OR_RETURN(unsigned long message, os::get_event_message(t.tid));
  pid_t new_tid = static_cast<pid_t>(message);
  auto thread = std::make_unique<Thread>();
  thread->tid = new_tid;
  uint64_t flags = t.syscall_number == SYS_clone ? t.args[0] : 0;
  thread->pid = (ptrace_event == PTRACE_EVENT_CLONE && (flags & CLONE_THREAD)) ? t.pid : new_tid;
  thread->index = next_index_++;
  Thread& child = *thread;
  threads_[new_tid] = std::move(thread);
  child.syscall_entry_sp = t.syscall_number == SYS_clone ? t.args[1] : 0;
  child.clear_child_tid = (flags & CLONE_CHILD_CLEARTID) ? t.args[3] : 0;
  if (child.pid != t.pid) {
    patcher_.note_fork(t.pid, child.pid);  // its own copy of the patched code
    if (ptrace_event != PTRACE_EVENT_VFORK && !(flags & CLONE_VM)) {
      site_patcher_.note_fork(t.pid, child.pid);  // a vfork child patches nothing
    }
    record_published_points_.erase(child.pid);
    if (auto point = record_published_points_.find(t.pid); point != record_published_points_.end()) {
      record_published_points_[child.pid] = point->second;  // the same code
    }
    fast_path_writes_.erase(child.pid);
    if (auto writes = fast_path_writes_.find(t.pid); writes != fast_path_writes_.end()) {
      fast_path_writes_[child.pid] = writes->second;  // a copy of its memory and its mappings
    }
  }
  inherit_fast_path(t, child,
                    ptrace_event == PTRACE_EVENT_CLONE   ? flags
                    : ptrace_event == PTRACE_EVENT_VFORK ? CLONE_VM
                                                         : 0);

  event_.clear();
  event_.kind = format::EventKind::kThreadStart;
  event_.thread = child.index;
  event_.parent_thread = t.index;
  event_.recorded_tid = new_tid;
  event_.clone_flags = ptrace_event == PTRACE_EVENT_CLONE ? flags
                       : ptrace_event == PTRACE_EVENT_VFORK ? (CLONE_VM | CLONE_VFORK)
                                                            : 0;
  REPRO_RETURN_IF_ERROR(log(event_));
  if (ptrace_event == PTRACE_EVENT_VFORK) {
    t.vfork_child = new_tid;
  }
  if (auto ended = early_ends_.find(new_tid); ended != early_ends_.end()) {
    // Born and gone already: only its end is left to log.
    deferred_stops_.emplace_back(new_tid, ended->second);
    early_ends_.erase(ended);
  } else if (early_stops_.erase(new_tid) != 0) {
    make_ready(child);
  } else {
    // Its first stop comes at once: wait for it here, so the new thread is
    // ready at the same point of every run (a schedule, chaos included,
    // must not depend on when that stop happens to be reported).
    int status = 0;
    pid_t got = 0;
    do {
      got = waitpid(new_tid, &status, __WALL);
    } while (got < 0 && errno == EINTR);
    if (got == new_tid) {
      if (WIFSTOPPED(status) && (static_cast<unsigned>(status) >> 16) == PTRACE_EVENT_STOP) {
        make_ready(child);
      } else {
        deferred_stops_.emplace_back(new_tid, status);  // killed already: handled next
      }
    }
  }
  return resume_in_kernel(t);
}

Status RecordSession::on_exec(Thread& t) {
  const pid_t leader_tid = t.tid;
  std::optional<uint32_t> replaced_leader;
  REPRO_ASSIGN_OR_RETURN(unsigned long former_tid, os::get_event_message(leader_tid));
  if (static_cast<pid_t>(former_tid) != leader_tid) {
    // A non-leader thread exec'd: it now carries the leader's tid, and the
    // old leader is gone without an exit report of its own.
    auto it = threads_.find(static_cast<pid_t>(former_tid));
    if (it != threads_.end()) {
      std::unique_ptr<Thread> moved = std::move(it->second);
      threads_.erase(it);
      std::erase(ready_, moved->tid);
      std::erase(ready_, leader_tid);
      if (!t.exit_logged) {
        replaced_leader = t.index;
      }
      if (current_ == moved->tid || current_ == leader_tid) {
        current_ = leader_tid;
      }
      moved->tid = leader_tid;
      threads_[leader_tid] = std::move(moved);  // destroys the old leader `t`
    }
  }
  Thread& thread = *find(leader_tid);
  thread.fast_path.reset();  // the new image registers its own buffer
  REPRO_RETURN_IF_ERROR(log_exec(thread));
  signal_timers_.note_exec(thread.pid);
  REPRO_RETURN_IF_ERROR(release_vfork_parent(thread.tid));
  // The other threads of the process died in the exec; replay sees them go
  // only once the exec has happened.
  for (const format::Event& exit : deferred_exits_[thread.pid]) {
    REPRO_RETURN_IF_ERROR(log(exit));
  }
  deferred_exits_.erase(thread.pid);
  if (replaced_leader) {
    // After the exec, as replay sees it: the exec is what ends the leader.
    event_.clear();
    event_.kind = format::EventKind::kThreadExit;
    event_.thread = *replaced_leader;
    REPRO_RETURN_IF_ERROR(log(event_));
  }
  return resume_in_kernel(thread);
}

Status RecordSession::log_exec(Thread& thread, bool first_exec) {
  REPRO_ASSIGN_OR_RETURN(os::ExecAuxv auxv, os::patch_exec_auxv(thread.tid));
  auto content_id = writer_->store_file(fmt::format("/proc/{}/exe", thread.tid));
  if (!content_id.is_ok()) {
    return content_id.status().context("storing the executable");
  }
  event_.clear();
  event_.kind = format::EventKind::kExec;
  event_.thread = thread.index;
  // The kernel's own name for the file (execveat's "/dev/fd/N/..."), and
  // the argv it built (a script's interpreter first): what replay must lay
  // out on the new stack.
  event_.path = auxv.execfn.empty() ? thread.exec_filename : auxv.execfn;
  event_.content_id = *content_id;
  event_.random_bytes = auxv.random_bytes;
  event_.data = auxv.argv;
  REPRO_RETURN_IF_ERROR(log(event_));
  if (std::optional<std::string> lost = privileges_lost_at_exec(thread.tid)) {
    warn_once("setid:" + event_.path,
              fmt::format("'{}' is {}: a traced program runs without those privileges, so it "
                          "may fail or act differently than outside repro",
                          event_.path, *lost));
  }
  patcher_.note_exec(thread.pid);
  site_patcher_.forget(thread.pid);
  record_published_points_.erase(thread.pid);
  fast_path_writes_.erase(thread.pid);
  // The program and ld.so, mapped by the kernel. The first exec has no
  // syscall event; replay stands at its exec stop too.
  return patch_new_code(thread, 0, UINT64_MAX, /*defer=*/!first_exec);
}

Status RecordSession::patch_new_code(Thread& t, uint64_t start, uint64_t end, bool defer) {
  if (!patch_rdtsc_) {
    return Status::ok();
  }
  auto patched = patcher_.patch_mappings(t.tid, t.pid, start, end);
  if (!patched.is_ok()) {
    return patched.status().context(fmt::format("patching rdtsc in thread t{}", t.index));
  }
  if (defer) {
    t.exec_patches = std::move(*patched);
    return Status::ok();
  }
  return log_rdtsc_patches(t, *patched);
}

Status RecordSession::patch_code_made_executable(Thread& t, int64_t result) {
  if (!patch_rdtsc_ || result < 0) {
    return Status::ok();
  }
  if (t.syscall_number == SYS_execve || t.syscall_number == SYS_execveat) {
    std::vector<patch::PatchedFile> files = std::move(t.exec_patches);
    t.exec_patches.clear();
    return log_rdtsc_patches(t, files);
  }
  if (auto range = patch::code_made_executable(t.syscall_number, t.args, result)) {
    return patch_new_code(t, range->start, range->end);
  }
  return Status::ok();
}

Status RecordSession::log_rdtsc_patches(Thread& t, const std::vector<patch::PatchedFile>& files) {
  for (const patch::PatchedFile& file : files) {
    format::Event patch;
    patch.kind = format::EventKind::kRdtscPatch;
    patch.thread = t.index;
    patch.path = file.path;
    for (const patch::PatchedSite& site : file.sites) {
      patch.writes.push_back({site.address, site.original});
    }
    REPRO_RETURN_IF_ERROR(log(patch));
  }
  return Status::ok();
}

Status RecordSession::on_exit_event(Thread& t) {
  REPRO_ASSIGN_OR_RETURN(unsigned long status, os::get_event_message(t.tid));
  if (t.state == Thread::State::kInSyscall && !t.entered_logged && !t.exit_logged &&
      !t.process_killed) {
    // It dies inside a syscall (SIGKILL during kill(getpid(), SIGKILL)):
    // replay must take it that far before it kills it. Not once a sibling
    // was logged dying of SIGKILL: replay killed this thread with it, where
    // it stood, and cannot take it anywhere now.
    REPRO_RETURN_IF_ERROR(log_entered(t));
  }
  if (!t.exit_logged) {
    event_.clear();
    event_.kind = format::EventKind::kThreadExit;
    event_.thread = t.index;
    event_.exit_status = static_cast<int32_t>(status);
    bool killed_by_exec = false;
    for (const auto& [tid, other] : threads_) {
      killed_by_exec |=
          tid != t.tid && other->pid == t.pid && other->state == Thread::State::kInSyscall &&
          (other->syscall_number == SYS_execve || other->syscall_number == SYS_execveat);
    }
    if (killed_by_exec) {
      deferred_exits_[t.pid].push_back(event_);
    } else {
      REPRO_RETURN_IF_ERROR(log(event_));
      if (WIFSIGNALED(static_cast<int>(status)) && WTERMSIG(static_cast<int>(status)) == SIGKILL) {
        for (auto& [tid, other] : threads_) {
          other->process_killed |= other->pid == t.pid;
        }
      }
    }
    t.exit_logged = true;
  }
  t.state = Thread::State::kExiting;
  t.held_for_output = false;
  std::erase(ready_, t.tid);
  release_emulated_tracees(t.tid);
  if (t.emulated_tracer != 0) {
    wake_waiting_tracers(t.emulated_tracer);  // its end is for the kernel to report
  }
  wake_held(output_order_.end(t.tid));
  REPRO_RETURN_IF_ERROR(release_vfork_parent(t.tid));
  // A thread group leader is reaped only after its last thread, so it
  // cannot hold the CPU until then; any other thread holds it until reaped.
  bool leader_with_threads = false;
  if (t.tid == t.pid) {
    for (const auto& [tid, other] : threads_) {
      leader_with_threads |= other->pid == t.pid && tid != t.tid;
    }
  }
  if (current_ != t.tid || leader_with_threads) {
    release_cpu(t);
  }
  if (ptrace(PTRACE_CONT, t.tid, nullptr, 0) != 0 && errno != ESRCH) {
    return os::ptrace_error(errno, "resuming an exiting thread", t.tid);
  }
  return Status::ok();
}

Status RecordSession::on_gone(pid_t tid, int wait_status) {
  if (tid == root_pid_) {
    root_wait_status_ = wait_status;
  }
  Thread* t = find(tid);
  if (t == nullptr) {
    if (early_stops_.erase(tid) != 0) {
      early_ends_[tid] = wait_status;  // in case its creator's event still comes
    }
    return Status::ok();
  }
  if (!t->exit_logged) {
    event_.clear();
    event_.kind = format::EventKind::kThreadExit;
    event_.thread = t->index;
    event_.exit_status = wait_status;
    REPRO_RETURN_IF_ERROR(log(event_));
  }
  std::erase(ready_, tid);
  release_cpu(*t);
  pid_t pid = t->pid;
  uint64_t clear_child_tid = t->clear_child_tid;
  threads_.erase(tid);
  bool process_gone = std::none_of(threads_.begin(), threads_.end(),
                                   [pid](const auto& entry) { return entry.second->pid == pid; });
  if (process_gone) {
    signal_timers_.forget(pid);
  }
  REPRO_RETURN_IF_ERROR(settle_exit_wakeups(pid, clear_child_tid, process_gone));
  wake_held(output_order_.end(tid));
  if (tid == root_pid_) {
    on_root_gone();
  }
  return Status::ok();
}

Status RecordSession::on_event_stop(Thread& t, int signal) {
  if (t.state == Thread::State::kStarting) {
    make_ready(t);
    return Status::ok();
  }
  if (t.state == Thread::State::kJobStopped) {
    return os::is_job_stop_signal(signal) ? listen(t) : end_job_stop(t);
  }
  if (os::is_job_stop_signal(signal)) {
    return begin_job_stop(t);
  }
  if (t.interrupt_requested) {
    t.interrupt_requested = false;
    if (t.state == Thread::State::kRunning) {
      return on_interrupted(t);
    }
  }
  if (t.restarting) {
    // On its way back into the syscall: no syscall-entry stop (PTRACE_CONT),
    // the seccomp stop comes next.
    if (ptrace(PTRACE_CONT, t.tid, nullptr, 0) != 0) {
      return os::ptrace_error(errno, "resuming a restarted syscall", t.tid);
    }
    return Status::ok();
  }
  return t.state == Thread::State::kInSyscall ? resume_in_kernel(t) : resume_user(t);
}

// Job control. A thread in a group-stop must stay stopped until SIGCONT,
// as the program (a shell, a debugger, a test) expects: PTRACE_CONT would
// run it on. PTRACE_LISTEN keeps it stopped, yet lets the kernel report
// the stop's end (a PTRACE_EVENT_STOP whose signal is no stop signal).
// Meanwhile the thread holds no CPU, and is neither ready nor readable.

Status RecordSession::begin_job_stop(Thread& t) {
  t.interrupt_requested = false;  // the group-stop served our interrupt too
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  t.job_stop_sp = t.state == Thread::State::kInSyscall ? t.syscall_entry_sp : regs.rsp;
  t.state_before_job_stop =
      t.state == Thread::State::kInSyscall ? Thread::State::kInSyscall : Thread::State::kRunning;
  std::erase(ready_, t.tid);
  release_cpu(t);
  t.state = Thread::State::kJobStopped;
  return listen(t);
}

Status RecordSession::listen(Thread& t) {
  if (ptrace(PTRACE_LISTEN, t.tid, nullptr, 0) != 0) {
    return os::ptrace_error(errno, "keeping a stopped thread stopped", t.tid);
  }
  return Status::ok();
}

Status RecordSession::end_job_stop(Thread& t) {
  if (t.state_before_job_stop == Thread::State::kInSyscall) {
    return resume_in_kernel(t);
  }
  make_ready(t);
  return Status::ok();
}

Status RecordSession::emulate_rdtsc(Thread& t, int signal, bool* handled) {
  *handled = false;
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  REPRO_ASSIGN_OR_RETURN(std::optional<patch::TscStop> stop,
                         patcher_.rdtsc_at_stop(t.tid, t.pid, signal, regs));
  if (!stop) {
    return Status::ok();
  }
  unsigned aux = 0;
  uint64_t tsc = stop->rdtscp ? __rdtscp(&aux) : __rdtsc();
  event_.clear();
  event_.kind = format::EventKind::kRdtsc;
  event_.thread = t.index;
  event_.address = regs.rip;
  event_.tsc = tsc;
  event_.tsc_aux = aux;
  patch::emulate_rdtsc(regs, *stop, tsc, aux);
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  REPRO_RETURN_IF_ERROR(log(event_));
  *handled = true;
  return resume_user(t);
}

Status RecordSession::on_signal(Thread& t, int signal) {
  REPRO_ASSIGN_OR_RETURN(siginfo_t info, os::get_siginfo(t.tid));
  if (signal == SIGSEGV || signal == SIGILL) {
    bool handled = false;
    REPRO_RETURN_IF_ERROR(emulate_rdtsc(t, signal, &handled));
    if (handled) {
      return Status::ok();
    }
  }
  bool reraised = t.reraised_signal && signal == t.reraised_signal->si_signo;
  bool let_through = signal == t.signal_let_through;
  t.signal_let_through = 0;
  if (t.emulated_tracer != 0 && !reraised && !let_through) {
    // Traced by a recorded thread: its tracer sees the signal first, and
    // says with its PTRACE_CONT whether the thread gets it.
    t.emulated_signal = info;
    t.emulated_signal_is_pending = true;
    park_for_emulated_tracer(t, (signal << 8) | 0x7f);
    return Status::ok();
  }
  return deliver_signal(t, signal, info);
}

Status RecordSession::deliver_signal(Thread& t, int signal, siginfo_t info) {
  bool synchronous = info.si_code > 0 && (signal == SIGSEGV || signal == SIGBUS ||
                                          signal == SIGILL || signal == SIGFPE ||
                                          signal == SIGTRAP || signal == SIGSYS);
  if (t.reraised_signal && signal == t.reraised_signal->si_signo && info.si_code == SI_TKILL) {
    // The signal held back below, back again: with its own siginfo.
    info = *t.reraised_signal;
    t.reraised_signal.reset();
    REPRO_RETURN_IF_ERROR(os::set_siginfo(t.tid, info));
  }
  if (!synchronous && t.state == Thread::State::kRunning) {
    // An asynchronous signal may come a few instructions later than it
    // landed: the thread is stepped (the signal held back) to a point
    // replay finds without a stop per visit, as at the end of a slice, and
    // the signal delivered there. Stop signals are left where they are.
    // Signals pending meanwhile stay pending (blocked while stepping) and
    // come after this one, as they would have.
    if (!is_stop_signal(signal)) {
      // Never between the fast-path library's syscall and its record.
      REPRO_ASSIGN_OR_RETURN(StepOutcome outcome, step_out_of_fast_path_syscall(t));
      if (outcome == StepOutcome::kAtRelocatable) {
        REPRO_ASSIGN_OR_RETURN(outcome, step_to_relocatable(t, /*hold_pending_signals=*/true));
      }
      if (outcome == StepOutcome::kStoppedOtherwise) {
        // Another stop came first (a second signal, a fault) and waits in
        // deferred_stops_: send the held signal again; it comes back later
        // and gets its siginfo back then (above).
        t.reraised_signal = info;
        if (syscall(SYS_tgkill, t.pid, t.tid, signal) != 0 && errno != ESRCH) {
          return Status::from_errno(errno, "sending a held signal again");
        }
        return Status::ok();
      }
      // At a single-step stop now, whose signal becomes this one.
      REPRO_RETURN_IF_ERROR(os::set_siginfo(t.tid, info));
    }
    // Name the point so replay can deliver the signal at the same one.
    REPRO_RETURN_IF_ERROR(log_preempt(t));
  }
  event_.clear();
  event_.kind = format::EventKind::kSignal;
  event_.thread = t.index;
  event_.signal_number = signal;
  event_.signal_flags = synchronous ? uint32_t{format::kSignalSynchronous} : 0u;
  event_.signal_info.assign(reinterpret_cast<const char*>(&info), sizeof info);
  REPRO_RETURN_IF_ERROR(log(event_));
  t.state = Thread::State::kRunning;
  int request = PTRACE_CONT;
  REPRO_ASSIGN_OR_RETURN(os::SignalDisposition disposition, os::signal_disposition(t.tid, signal));
  if (disposition == os::SignalDisposition::kDefault && !is_stop_signal(signal)) {
    // The default action of every other signal not ignored by default ends
    // the process: say where, while its threads still exist.
    REPRO_RETURN_IF_ERROR(log_failure_stacks(t, info));
  }
  if (disposition == os::SignalDisposition::kCaught) {
    // Stop at the handler's first instruction to make the frame the same
    // in every run, as replay does (see core/os/signal_frame.h): the FPU
    // state saved in it, and for an asynchronous signal its trap info.
    REPRO_ASSIGN_OR_RETURN(t.xstate_before_handler, os::get_extended_registers(t.tid));
    REPRO_ASSIGN_OR_RETURN(os::Registers interrupted, os::get_registers(t.tid));
    site_patcher_.note_signal_return(t.pid, interrupted.rip);  // the handler returns there
    t.handler_siginfo = info;
    request = PTRACE_SINGLESTEP;
    t.stepping_into_handler = true;
    t.handler_signal_synchronous = synchronous;
  }
  if (ptrace(static_cast<__ptrace_request>(request), t.tid, nullptr, signal) != 0) {
    return os::ptrace_error(errno, "delivering a signal", t.tid);
  }
  return Status::ok();
}

Status RecordSession::finish_step_into_handler(Thread& t, int wait_status, bool* consumed) {
  t.stepping_into_handler = false;
  *consumed = false;
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  if (!t.handler_signal_synchronous) {
    REPRO_RETURN_IF_ERROR(os::clear_frame_trap_info(t.tid, regs.rsp));
  }
  REPRO_RETURN_IF_ERROR(os::normalize_frame_fpu_state(t.tid, regs.rsp, t.xstate_before_handler));
  REPRO_RETURN_IF_ERROR(os::fill_frame_slack(t.tid, regs.rsp, t.handler_siginfo));
  if (os::is_sigtrap_stop(wait_status)) {
    *consumed = true;
    return resume_user(t);
  }
  return Status::ok();  // another signal stops it at the handler's entry: handle that
}

}  // namespace repro::tracer
