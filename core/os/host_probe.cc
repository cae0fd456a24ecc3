#include "core/os/host_probe.h"

#include <asm/prctl.h>
#include <cpuid.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>
#include <thread>
#include <utility>

#include "core/base/scoped_fd.h"

namespace repro::os {
namespace {

// How long a probe child may live. Each probe does microseconds of work;
// fork, a few ptrace stops and exit take milliseconds even on a busy 2-CPU
// VM. A probe failing with "did not stop or exit" on an idle host means the
// child hung (a stop that never came), not that this is too short.
constexpr auto kProbeDeadline = std::chrono::seconds(2);
// How often a bounded wait polls: small against the deadline, large enough
// not to keep a CPU busy.
constexpr auto kPollInterval = std::chrono::milliseconds(1);

// A probe child's exit code: kWorked when every call did what it should;
// 1 to 126 the errno of the call that failed; kNoEffect when a call returned
// success without doing what it should. Death by signal N reads as 128 + N.
constexpr int kWorked = 0;
constexpr int kNoEffect = 127;

// In a probe child: the exit code for the call that just failed. The calls
// probed here set no errno above 126 (those are key and robust-mutex errors).
int failed_call() { return errno > 0 && errno < kNoEffect ? errno : EIO; }

// Exit code, or 128 + the signal that killed the child.
int end_code(int wait_status) {
  return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
}

bool is_errno_code(int end) { return end > 0 && end < kNoEffect; }

Status unexpected_end(const char* probe, int end) {
  if (end > 128) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("the {} probe child died of signal {}", probe, end - 128));
  }
  return Status::error(StatusCode::kIoError,
                       fmt::format("the {} probe child exited with {}", probe, end));
}

// A forked probe child. Destroying it kills the child with SIGKILL and
// reaps it, unless it has been reaped already, so that no early return
// leaves a stopped child or a zombie behind. Movable, not copyable.
class ProbeChild {
 public:
  // Forks; the child runs `body` and exits with what it returns. With
  // `stop_first` it stops itself (SIGSTOP) before `body`, so that the parent
  // can seize it first. Errors: io_error (fork failed).
  static Result<ProbeChild> start(const std::function<int()>& body, bool stop_first) {
    pid_t pid = fork();
    if (pid < 0) {
      return Status::from_errno(errno, "fork (host probe)");
    }
    if (pid == 0) {
      // A child left stopped must not outlive repro.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      // Default actions, so a fault kills the child and the parent sees it.
      for (int sig : {SIGSEGV, SIGILL, SIGBUS, SIGTRAP}) {
        signal(sig, SIG_DFL);
      }
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      if (stop_first) {
        raise(SIGSTOP);
      }
      _exit(body());
    }
    return ProbeChild(pid);
  }

  ProbeChild(ProbeChild&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)), deadline_(other.deadline_) {}
  ProbeChild& operator=(ProbeChild&&) = delete;
  ProbeChild(const ProbeChild&) = delete;
  ProbeChild& operator=(const ProbeChild&) = delete;

  ~ProbeChild() {
    if (pid_ <= 0) {
      return;
    }
    kill(pid_, SIGKILL);
    int status = 0;
    while (true) {
      pid_t got = waitpid(pid_, &status, __WALL);
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got != pid_ || WIFEXITED(status) || WIFSIGNALED(status)) {
        break;
      }
      // A tracee still stops on its way out (PTRACE_EVENT_EXIT with
      // PTRACE_O_TRACEEXIT, even after SIGKILL here) and waits for us.
      ptrace(PTRACE_CONT, pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }

  // The next wait status: a stop (traced or not), or the end, after which
  // the child is reaped. Errors: io_error when nothing happened before the
  // deadline (the destructor then kills the child).
  Result<int> wait() {
    while (true) {
      int status = 0;
      pid_t got = waitpid(pid_, &status, WNOHANG | WUNTRACED | __WALL);
      if (got == pid_) {
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
          pid_ = -1;
        }
        return status;
      }
      if (got < 0 && errno != EINTR) {
        return Status::from_errno(errno, fmt::format("waiting for host probe child {}", pid_));
      }
      if (std::chrono::steady_clock::now() >= deadline_) {
        return Status::error(StatusCode::kIoError,
                             fmt::format("host probe child {} did not stop or exit within {} s",
                                         pid_, kProbeDeadline.count()));
      }
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  // Waits until the child has ended. Returns its end_code().
  Result<int> wait_for_end() {
    while (true) {
      REPRO_ASSIGN_OR_RETURN(int status, wait());
      if (WIFEXITED(status) || WIFSIGNALED(status)) {
        return end_code(status);
      }
    }
  }

 private:
  explicit ProbeChild(pid_t pid)
      : pid_(pid), deadline_(std::chrono::steady_clock::now() + kProbeDeadline) {}

  pid_t pid_;
  std::chrono::steady_clock::time_point deadline_;
};

// How a probe child ended: its exit code, or 128 + the signal that killed it.
Result<int> run_in_child(const std::function<int()>& body) {
  REPRO_ASSIGN_OR_RETURN(ProbeChild child, ProbeChild::start(body, false));
  return child.wait_for_end();
}

// The PTRACE_O_* options record and replay seize their tracees with
// (tracer/record_session.cc, replayer/replay_session.cc): a kernel that
// refuses one of them refuses repro.
constexpr unsigned long kReproPtraceOptions =
    PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
    PTRACE_O_TRACEEXEC | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;

// Starts `body` in a child that stops itself, and seizes it with `options`.
// Sets `*seize_errno` to PTRACE_SEIZE's errno, or 0; when 0, the child is in
// a ptrace stop (its group stop, reported to the new tracer), where its
// registers may be written. Errors: io_error (fork, no stop in time).
Result<ProbeChild> start_seized(const std::function<int()>& body, unsigned long options,
                                int* seize_errno) {
  REPRO_ASSIGN_OR_RETURN(ProbeChild child, ProbeChild::start(body, true));
  REPRO_ASSIGN_OR_RETURN(int stopped, child.wait());
  if (!WIFSTOPPED(stopped)) {
    return unexpected_end("ptrace", end_code(stopped));
  }
  *seize_errno = 0;
  if (ptrace(PTRACE_SEIZE, child.pid(), nullptr, options) != 0) {
    *seize_errno = errno;
    return child;
  }
  REPRO_ASSIGN_OR_RETURN(int trapped, child.wait());
  if (!WIFSTOPPED(trapped)) {
    return unexpected_end("ptrace", end_code(trapped));
  }
  return child;
}

// Resumes a child from start_seized() and runs it to its end, showing every
// ptrace stop's wait status to `on_stop` first. Job-control signals and
// SIGTRAP are not delivered (a probe's SIGTRAP is the tracer's business);
// other signals are. Returns the end_code().
Result<int> run_seized(ProbeChild& child, const std::function<void(int status)>& on_stop) {
  kill(child.pid(), SIGCONT);
  ptrace(PTRACE_CONT, child.pid(), nullptr, 0);
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, child.wait());
    if (!WIFSTOPPED(status)) {
      return end_code(status);
    }
    on_stop(status);
    int sig = WSTOPSIG(status);
    bool deliver = (status >> 16) == 0 && sig != SIGSTOP && sig != SIGCONT && sig != SIGTRAP;
    // ESRCH here means the child died meanwhile; the next wait says so.
    ptrace(PTRACE_CONT, child.pid(), nullptr, deliver ? sig : 0);
  }
}

// Reads a small text file (/proc, /sys). Returns 0 or the errno.
int read_text_file(const char* path, std::string* text) {
  ScopedFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return errno;
  }
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return errno;
    }
    if (n == 0) {
      return 0;
    }
    text->append(buffer, static_cast<size_t>(n));
  }
}

// The first integer in `text` after leading blanks, or -1.
int leading_int(std::string_view text) {
  size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    return -1;
  }
  int value = -1;
  auto [end, error] = std::from_chars(text.data() + start, text.data() + text.size(), value);
  return error == std::errc() ? value : -1;
}

// SECCOMP_RET_DATA of the probe filter's SECCOMP_RET_TRACE: the tracer
// reads it back with PTRACE_GETEVENTMSG, so it knows the stop is this
// filter's. Any 16-bit value works.
constexpr uint32_t kProbeTraceData = 0x7e57;

// In a probe child: sets no_new_privs and installs a filter that returns
// `getppid_action` for getppid on x86-64 and allows everything else.
// Returns what seccomp(2) returns (0, or a listener fd), or -1 with errno.
long install_getppid_filter(uint32_t getppid_action, unsigned int flags) {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, getppid_action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return -1;
  }
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &program);
}

int tsc_child(bool rdtscp) {
  if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) {
    return failed_call();
  }
  unsigned lo = 0;
  unsigned hi = 0;
  unsigned aux = 0;
  if (rdtscp) {
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
  } else {
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  }
  return kWorked;
}

// What the debug-register probe child executes (DR0) and writes (DR1).
// noinline and the asm keep the call a real call to this address.
__attribute__((noinline)) void debug_register_target() { __asm__ volatile("" ::: "memory"); }
alignas(8) volatile uint64_t debug_register_watched = 0;

// DR7: L0 and L1 enable DR0 and DR1. R/W0 = 00 is instruction execution
// (its LEN0 must be 00); R/W1 = 01 is data writes, LEN1 = 10 eight bytes
// (the watched variable is 8-aligned). Intel SDM vol. 3, 18.2.4.
constexpr unsigned long kDr7 = (1UL << 0) | (1UL << 2) | (0b01UL << 20) | (0b10UL << 22);

size_t debug_register_offset(int index) {
  return offsetof(struct user, u_debugreg) + static_cast<size_t>(index) * sizeof(long);
}

std::string cpuid_string(const uint32_t* registers, size_t count) {
  // Registers hold the bytes in order; names are padded with NULs or spaces.
  std::string text(reinterpret_cast<const char*>(registers), count * sizeof(uint32_t));
  text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
  size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) {
    return "";
  }
  return text.substr(first, text.find_last_not_of(' ') + 1 - first);
}

}  // namespace

std::string TscTrapProbe::describe() const {
  if (!prctl_accepted) {
    return fmt::format("prctl(PR_SET_TSC) failed: {}", std::strerror(prctl_errno));
  }
  if (traps()) {
    return "rdtsc and rdtscp fault under PR_SET_TSC";
  }
  if (!rdtsc_faults && !rdtscp_faults) {
    return "PR_SET_TSC is accepted but rdtsc and rdtscp still run";
  }
  return rdtsc_faults ? "PR_SET_TSC is accepted but rdtscp still runs"
                      : "PR_SET_TSC is accepted but rdtsc still runs";
}

Result<TscTrapProbe> probe_tsc_trapping() {
  TscTrapProbe probe;
  REPRO_ASSIGN_OR_RETURN(int rdtsc_end, run_in_child([] { return tsc_child(false); }));
  if (is_errno_code(rdtsc_end)) {
    probe.prctl_errno = rdtsc_end;
    return probe;
  }
  probe.prctl_accepted = true;
  probe.rdtsc_faults = rdtsc_end == 128 + SIGSEGV;
  REPRO_ASSIGN_OR_RETURN(int rdtscp_end, run_in_child([] { return tsc_child(true); }));
  // SIGILL: the CPU has no rdtscp, so programs cannot run it either.
  probe.rdtscp_faults = rdtscp_end == 128 + SIGSEGV || rdtscp_end == 128 + SIGILL;
  return probe;
}

Result<TscRequest> tsc_request_from_env() {
  const char* value = std::getenv("REPRO_TSC");
  std::string_view text = value == nullptr ? "" : value;
  if (text.empty() || text == "auto") {
    return TscRequest::kAuto;
  }
  if (text == "trap") {
    return TscRequest::kTrap;
  }
  if (text == "patch") {
    return TscRequest::kPatch;
  }
  return Status::error(StatusCode::kInvalidArgument,
                       fmt::format("REPRO_TSC='{}': expected auto, trap or patch", text));
}

Result<PtraceProbe> probe_ptrace() {
  PtraceProbe probe;
  std::string scope;
  probe.yama_errno = read_text_file("/proc/sys/kernel/yama/ptrace_scope", &scope);
  if (probe.yama_errno == 0) {
    probe.yama_scope = leading_int(scope);
  }
  // Seizing was the test: `child` is killed and reaped on return.
  REPRO_ASSIGN_OR_RETURN(ProbeChild child, start_seized([] { return kWorked; }, kReproPtraceOptions,
                                                        &probe.seize_errno));
  return probe;
}

SeccompStatus parse_seccomp_status(std::string_view proc_status) {
  SeccompStatus status;
  while (!proc_status.empty()) {
    size_t end = proc_status.find('\n');
    std::string_view line = proc_status.substr(0, end);
    proc_status = end == std::string_view::npos ? std::string_view() : proc_status.substr(end + 1);
    constexpr std::string_view kMode = "Seccomp:";
    constexpr std::string_view kFilters = "Seccomp_filters:";
    if (line.substr(0, kMode.size()) == kMode) {
      status.mode = leading_int(line.substr(kMode.size()));
    } else if (line.substr(0, kFilters.size()) == kFilters) {
      status.filter_count = leading_int(line.substr(kFilters.size()));
    }
  }
  return status;
}

Result<SeccompStatus> probe_seccomp_status() {
  std::string text;
  if (int err = read_text_file("/proc/self/status", &text); err != 0) {
    return Status::from_errno(err, "reading /proc/self/status");
  }
  return parse_seccomp_status(text);
}

Result<SeccompTraceProbe> probe_seccomp_trace() {
  SeccompTraceProbe probe;
  auto body = [] {
    if (install_getppid_filter(SECCOMP_RET_TRACE | kProbeTraceData, 0) < 0) {
      return failed_call();
    }
    syscall(SYS_getppid);
    return kWorked;
  };
  REPRO_ASSIGN_OR_RETURN(
      ProbeChild child,
      start_seized(body, PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL, &probe.seize_errno));
  if (probe.seize_errno != 0) {
    return probe;
  }
  REPRO_ASSIGN_OR_RETURN(int end, run_seized(child, [&](int status) {
                           unsigned long data = 0;
                           if ((status >> 16) == PTRACE_EVENT_SECCOMP &&
                               ptrace(PTRACE_GETEVENTMSG, child.pid(), nullptr, &data) == 0 &&
                               data == kProbeTraceData) {
                             probe.trace_stop_seen = true;
                           }
                         }));
  if (is_errno_code(end)) {
    probe.filter_errno = end;
  } else if (end != kWorked) {
    return unexpected_end("seccomp", end);
  }
  return probe;
}

Result<int> probe_pipe_nowait() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Status::from_errno(errno, "pipe2");
  }
  ScopedFd reader(fds[0]);
  ScopedFd writer(fds[1]);
  char byte = 0;
  iovec iov{&byte, 1};
  ssize_t n = preadv2(reader.get(), &iov, 1, -1, RWF_NOWAIT);
  if (n < 0 && errno == EAGAIN) {
    return 0;
  }
  return n < 0 ? errno : EIO;  // an empty pipe cannot have given a byte
}

Result<int> probe_seccomp_user_notif() {
  REPRO_ASSIGN_OR_RETURN(int end, run_in_child([] {
                           long fd = install_getppid_filter(SECCOMP_RET_USER_NOTIF,
                                                            SECCOMP_FILTER_FLAG_NEW_LISTENER);
                           return fd < 0 ? failed_call() : kWorked;
                         }));
  if (end != kWorked && !is_errno_code(end)) {
    return unexpected_end("seccomp user notification", end);
  }
  return end;
}

Result<AslrProbe> probe_disable_aslr() {
  REPRO_ASSIGN_OR_RETURN(int end, run_in_child([] {
                           // 0xffffffff only reads the persona (Docker's profile allows that).
                           int persona = personality(0xffffffff);
                           if (persona == -1 || personality(persona | ADDR_NO_RANDOMIZE) == -1) {
                             return failed_call();
                           }
                           bool set = (personality(0xffffffff) & ADDR_NO_RANDOMIZE) != 0;
                           return set ? kWorked : kNoEffect;
                         }));
  AslrProbe probe;
  if (is_errno_code(end)) {
    probe.personality_errno = end;
  } else if (end == kWorked) {
    probe.flag_set = true;
  } else if (end != kNoEffect) {
    return unexpected_end("personality", end);
  }
  return probe;
}

Result<CpuidFaultProbe> probe_cpuid_faulting() {
  CpuidFaultProbe probe;
  // ARCH_GET_CPUID only reads this process's setting.
  probe.get_result = static_cast<int>(syscall(SYS_arch_prctl, ARCH_GET_CPUID, 0));
  REPRO_ASSIGN_OR_RETURN(int end, run_in_child([] {
                           if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
                             return failed_call();
                           }
                           unsigned a = 0;
                           unsigned b = 0;
                           unsigned c = 0;
                           unsigned d = 0;
                           __cpuid(0, a, b, c, d);
                           return kWorked;
                         }));
  if (is_errno_code(end)) {
    probe.set_errno = end;
  } else if (end == 128 + SIGSEGV) {
    probe.cpuid_faults = true;
  } else if (end != kWorked) {
    return unexpected_end("cpuid", end);
  }
  return probe;
}

PerfCounterProbe probe_perf_counters() {
  auto open_counter = [](uint64_t config) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      return errno;
    }
    close(static_cast<int>(fd));
    return 0;
  };
  PerfCounterProbe probe;
  probe.instructions_errno = open_counter(PERF_COUNT_HW_INSTRUCTIONS);
  probe.branches_errno = open_counter(PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
  return probe;
}

Result<DebugRegisterProbe> probe_debug_registers() {
  DebugRegisterProbe probe;
  auto body = [] {
    debug_register_target();
    debug_register_watched = 1;
    return kWorked;
  };
  REPRO_ASSIGN_OR_RETURN(ProbeChild child,
                         start_seized(body, PTRACE_O_EXITKILL, &probe.seize_errno));
  if (probe.seize_errno != 0) {
    return probe;
  }
  auto poke = [&](int index, unsigned long value) {
    return ptrace(PTRACE_POKEUSER, child.pid(), debug_register_offset(index), value) == 0;
  };
  // Addresses before DR7 enables them; fork kept them the same in the child.
  if (!poke(0, reinterpret_cast<unsigned long>(&debug_register_target)) ||
      !poke(1, reinterpret_cast<unsigned long>(&debug_register_watched)) || !poke(7, kDr7)) {
    probe.poke_errno = errno;
    return probe;
  }
  REPRO_ASSIGN_OR_RETURN(int end, run_seized(child, [&](int status) {
                           if ((status >> 16) != 0 || WSTOPSIG(status) != SIGTRAP) {
                             return;
                           }
                           // DR6 bits B0 and B1 say which register fired.
                           errno = 0;
                           long dr6 = ptrace(PTRACE_PEEKUSER, child.pid(), debug_register_offset(6),
                                             nullptr);
                           if (errno == 0) {
                             probe.breakpoint_fired |= (dr6 & 1) != 0;
                             probe.watchpoint_fired |= (dr6 & 2) != 0;
                           }
                         }));
  if (end != kWorked) {
    return unexpected_end("debug register", end);
  }
  return probe;
}

Result<CpuPinningProbe> probe_cpu_pinning() {
  CpuPinningProbe probe;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    probe.affinity_errno = errno;
    return probe;
  }
  probe.allowed_cpus = CPU_COUNT(&allowed);
  // The CPU repro runs on, as `repro record` pins to it; else the first allowed.
  int current = sched_getcpu();
  if (current >= 0 && CPU_ISSET(current, &allowed)) {
    probe.target_cpu = current;
  }
  for (int cpu = 0; cpu < CPU_SETSIZE && probe.target_cpu < 0; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) {
      probe.target_cpu = cpu;
    }
  }
  if (probe.target_cpu < 0) {
    return probe;
  }
  int target = probe.target_cpu;
  REPRO_ASSIGN_OR_RETURN(int end, run_in_child([target] {
                           cpu_set_t one;
                           CPU_ZERO(&one);
                           CPU_SET(target, &one);
                           if (sched_setaffinity(0, sizeof one, &one) != 0) {
                             return failed_call();
                           }
                           return sched_getcpu() == target ? kWorked : kNoEffect;
                         }));
  if (is_errno_code(end)) {
    probe.affinity_errno = end;
  } else if (end == kWorked) {
    probe.pinned = true;
  } else if (end != kNoEffect) {
    return unexpected_end("cpu pinning", end);
  }
  return probe;
}

CpuInfo probe_cpu() {
  CpuInfo cpu;
  uint32_t eax = 0;
  uint32_t ebx = 0;
  uint32_t ecx = 0;
  uint32_t edx = 0;
  uint32_t max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf == 0) {
    return cpu;
  }
  __cpuid(0, eax, ebx, ecx, edx);
  uint32_t vendor[3] = {ebx, edx, ecx};
  cpu.vendor = cpuid_string(vendor, 3);
  if (max_leaf >= 1) {
    // The decoding of format::current_cpu_identity(), which traces record.
    __cpuid(1, eax, ebx, ecx, edx);
    uint32_t base_family = (eax >> 8) & 0xF;
    cpu.stepping = eax & 0xF;
    cpu.family = base_family;
    cpu.model = (eax >> 4) & 0xF;
    if (base_family == 0xF) {
      cpu.family += (eax >> 20) & 0xFF;
    }
    if (base_family == 0x6 || base_family == 0xF) {
      cpu.model += ((eax >> 16) & 0xF) << 4;
    }
    cpu.xsave = (ecx >> 26) & 1;
    cpu.osxsave = (ecx >> 27) & 1;
    cpu.rdrand = (ecx >> 30) & 1;
    cpu.hypervisor = (ecx >> 31) & 1;
  }
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    cpu.rdseed = (ebx >> 18) & 1;
  }
  if (max_leaf >= 0xd && cpu.xsave) {
    __cpuid_count(0xd, 0, eax, ebx, ecx, edx);
    cpu.xcr0_supported = (static_cast<uint64_t>(edx) << 32) | eax;
    cpu.xsave_enabled_bytes = ebx;
    cpu.xsave_max_bytes = ecx;
  }
  if (cpu.osxsave) {
    uint32_t lo = 0;
    uint32_t hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    cpu.xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
  if (cpu.hypervisor) {
    // Leaves 0x40000000 and up belong to the hypervisor; __get_cpuid would
    // check them against the basic maximum leaf and refuse.
    __cpuid(0x40000000, eax, ebx, ecx, edx);
    uint32_t name[3] = {ebx, ecx, edx};
    cpu.hypervisor_vendor = cpuid_string(name, 3);
  }
  uint32_t max_extended = __get_cpuid_max(0x80000000, nullptr);
  if (max_extended >= 0x80000001) {
    __cpuid(0x80000001, eax, ebx, ecx, edx);
    cpu.rdtscp = (edx >> 27) & 1;
  }
  if (max_extended >= 0x80000004) {
    uint32_t brand[12];
    for (uint32_t i = 0; i < 3; ++i) {
      __cpuid(0x80000002 + i, brand[4 * i], brand[4 * i + 1], brand[4 * i + 2], brand[4 * i + 3]);
    }
    cpu.brand = cpuid_string(brand, 12);
  }
  return cpu;
}

Result<ReplayIsolationProbe> probe_replay_isolation() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Status::from_errno(errno, "pipe (host probe)");
  }
  ScopedFd read_end(fds[0]);
  ScopedFd write_end(fds[1]);
  const int out = write_end.get();
  REPRO_ASSIGN_OR_RETURN(int end, run_in_child([out] {
                           ReplayIsolationProbe found;
                           found.failure = isolate_process(nullptr);
                           if (!found.failure.failed()) {
                             struct statvfs fs;
                             found.read_only =
                                 statvfs("/", &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
                             int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                             sockaddr_in addr = {};
                             addr.sin_family = AF_INET;
                             addr.sin_port = htons(9);  // discard; nothing need listen
                             addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                             found.network_unreachable =
                                 sock >= 0 &&
                                 connect(sock, reinterpret_cast<sockaddr*>(&addr),
                                         sizeof addr) != 0 &&
                                 errno == ENETUNREACH;
                           }
                           // `failure.step` is a static string: valid in the parent too.
                           return write(out, &found, sizeof found) == sizeof found ? kWorked
                                                                                   : failed_call();
                         }));
  if (end != kWorked) {
    return unexpected_end("replay isolation", end);
  }
  ReplayIsolationProbe probe;
  if (read(read_end.get(), &probe, sizeof probe) != sizeof probe) {
    return Status::error(StatusCode::kIoError, "the replay isolation probe child reported nothing");
  }
  return probe;
}

Result<KernelInfo> probe_kernel() {
  utsname uts;
  if (uname(&uts) != 0) {
    return Status::from_errno(errno, "uname");
  }
  return KernelInfo{uts.release, uts.version, uts.machine};
}

std::string errno_text(int errnum) {
  const char* name = strerrorname_np(errnum);
  return fmt::format("{} ({})", name != nullptr ? name : fmt::format("errno {}", errnum),
                     std::strerror(errnum));
}

}  // namespace repro::os
