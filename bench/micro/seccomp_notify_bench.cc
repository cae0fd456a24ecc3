// What one intercepted syscall costs through the two ways seccomp hands a
// syscall to another task: a ptrace seccomp stop (SECCOMP_RET_TRACE, the
// tracer resumes with PTRACE_CONT, as the recorder does at a syscall it lets
// run), and a user notification (SECCOMP_RET_USER_NOTIF, a supervisor answers
// with SECCOMP_IOCTL_NOTIF_RECV / SEND, either letting the syscall run with
// SECCOMP_USER_NOTIF_FLAG_CONTINUE or answering it with a result). Each is
// measured with the other side (tracer or supervisor) on the benchmark's CPU
// and on the other CPU.
//
// One seccomp filter, installed once on the benchmark thread, sends
// getppid(kTraceMagic) to the tracer and getppid(kNotifyMagic) to the
// listener and allows everything else, so the benchmarks do not disturb each
// other (getppid ignores its arguments). Without a tracer, a RET_TRACE
// syscall fails with ENOSYS, which the benchmark checks for.
//
// Times are wall-clock (UseRealTime): the calling thread sleeps while the
// other side works. Args: cpus (1: both on CPU 0; 2: caller on CPU 0, the
// other side on CPU 1).

#include <benchmark/benchmark.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>

namespace {

constexpr unsigned kTraceMagic = 0x7ace;
constexpr unsigned kNotifyMagic = 0x0071f;
// The answer a supervisor gives in the "answered" mode: not our parent's pid,
// so a syscall that ran anyway would be noticed.
constexpr long kAnsweredValue = 424242;

int g_listener = -2;  // -2: not installed yet; -1: installing failed

// Installs the filter on the calling thread; returns the listener fd or -1.
int install_filter() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kTraceMagic, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNotifyMagic, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program = {static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return -1;
  }
  return static_cast<int>(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                  SECCOMP_FILTER_FLAG_NEW_LISTENER, &program));
}

bool ensure_filter(benchmark::State& state) {
  if (g_listener == -2) {
    g_listener = install_filter();
  }
  if (g_listener < 0) {
    state.SkipWithError("cannot install a seccomp filter with a listener");
    return false;
  }
  return true;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

// Pins the calling thread to CPU 0 for the lifetime of the guard.
class PinnedToCpu0 {
 public:
  PinnedToCpu0() {
    sched_getaffinity(0, sizeof saved_, &saved_);
    pin_to(0);
  }
  ~PinnedToCpu0() { sched_setaffinity(0, sizeof saved_, &saved_); }

 private:
  cpu_set_t saved_;
};

int other_side_cpu(const benchmark::State& state) { return state.range(0) == 1 ? 0 : 1; }

void BM_GetppidNative(benchmark::State& state) {
  PinnedToCpu0 pinned;
  for (auto _ : state) {
    benchmark::DoNotOptimize(syscall(SYS_getppid));
  }
}

// The tracer: a child process that seizes the benchmark thread and resumes
// every seccomp stop with PTRACE_CONT until *stop is set.
[[noreturn]] void run_tracer(pid_t tracee, int cpu, int ready_fd, std::atomic<int>* stop) {
  pin_to(cpu);
  char ok = ptrace(PTRACE_SEIZE, tracee, nullptr, PTRACE_O_TRACESECCOMP) == 0 ? 1 : 0;
  if (write(ready_fd, &ok, 1) != 1 || !ok) {
    _exit(1);
  }
  for (;;) {
    int status = 0;
    if (waitpid(tracee, &status, __WALL) != tracee) {
      _exit(2);
    }
    if (!WIFSTOPPED(status)) {
      _exit(3);
    }
    bool seccomp_stop = (status >> 8) == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8));
    if (seccomp_stop && stop->load()) {
      ptrace(PTRACE_DETACH, tracee, nullptr, 0);
      _exit(0);
    }
    int signal_to_deliver = seccomp_stop ? 0 : WSTOPSIG(status);
    ptrace(PTRACE_CONT, tracee, nullptr, signal_to_deliver);
  }
}

void BM_PtraceSeccompStop(benchmark::State& state) {
  if (!ensure_filter(state)) {
    return;
  }
  PinnedToCpu0 pinned;
  auto* stop = static_cast<std::atomic<int>*>(mmap(nullptr, sizeof(std::atomic<int>),
                                                    PROT_READ | PROT_WRITE,
                                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (stop) std::atomic<int>(0);
  int ready[2];
  if (pipe(ready) != 0) {
    state.SkipWithError("pipe failed");
    return;
  }
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  pid_t me = static_cast<pid_t>(syscall(SYS_gettid));
  pid_t tracer = fork();
  if (tracer == 0) {
    run_tracer(me, other_side_cpu(state), ready[1], stop);
  }
  char ok = 0;
  if (read(ready[0], &ok, 1) != 1 || !ok) {
    state.SkipWithError("the tracer could not PTRACE_SEIZE the benchmark thread");
  } else if (syscall(SYS_getppid, kTraceMagic) != getppid()) {
    state.SkipWithError("getppid(kTraceMagic) did not reach the tracer");
  } else {
    for (auto _ : state) {
      benchmark::DoNotOptimize(syscall(SYS_getppid, kTraceMagic));
    }
  }
  stop->store(1);
  syscall(SYS_getppid, kTraceMagic);  // the stop at which the tracer detaches
  waitpid(tracer, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  munmap(stop, sizeof(std::atomic<int>));
}

// The supervisor's loop: answers every notification, as asked by `answer`,
// until *stop is set (then it lets the last one continue and returns).
void supervise(int listener, bool answer, std::atomic<int>* stop) {
  for (;;) {
    seccomp_notif request;
    std::memset(&request, 0, sizeof request);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &request) != 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    seccomp_notif_resp response;
    std::memset(&response, 0, sizeof response);
    response.id = request.id;
    bool last = stop->load();
    if (answer && !last) {
      response.val = kAnsweredValue;
    } else {
      response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    }
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
    if (last) {
      return;
    }
  }
}

// Args: cpus, answer (0: CONTINUE, 1: answered), supervisor (0: a thread of
// this process, 1: a child process).
void BM_UserNotification(benchmark::State& state) {
  if (!ensure_filter(state)) {
    return;
  }
  PinnedToCpu0 pinned;
  const bool answer = state.range(1) != 0;
  const bool as_process = state.range(2) != 0;
  const int cpu = other_side_cpu(state);
  auto* stop = static_cast<std::atomic<int>*>(mmap(nullptr, sizeof(std::atomic<int>),
                                                    PROT_READ | PROT_WRITE,
                                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (stop) std::atomic<int>(0);
  std::thread supervisor_thread;
  pid_t supervisor_process = -1;
  if (as_process) {
    supervisor_process = fork();
    if (supervisor_process == 0) {
      pin_to(cpu);
      supervise(g_listener, answer, stop);
      _exit(0);
    }
  } else {
    supervisor_thread = std::thread([&] {
      pin_to(cpu);
      supervise(g_listener, answer, stop);
    });
  }
  long expected = answer ? kAnsweredValue : getppid();
  if (syscall(SYS_getppid, kNotifyMagic) != expected) {
    state.SkipWithError("getppid(kNotifyMagic) did not get the supervisor's answer");
  } else {
    for (auto _ : state) {
      benchmark::DoNotOptimize(syscall(SYS_getppid, kNotifyMagic));
    }
  }
  stop->store(1);
  syscall(SYS_getppid, kNotifyMagic);  // the notification at which the supervisor returns
  if (as_process) {
    waitpid(supervisor_process, nullptr, 0);
  } else {
    supervisor_thread.join();
  }
  munmap(stop, sizeof(std::atomic<int>));
}

BENCHMARK(BM_GetppidNative);
BENCHMARK(BM_PtraceSeccompStop)->ArgName("cpus")->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK(BM_UserNotification)
    ->ArgNames({"cpus", "answer", "process"})
    ->ArgsProduct({{1, 2}, {0, 1}, {0, 1}})
    ->UseRealTime();

}  // namespace
