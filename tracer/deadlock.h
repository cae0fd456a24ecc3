#pragma once
// Deadlock detection: when every live thread of a recording sleeps in a
// wait that only another recorded thread could end, nothing will ever run
// again; the recorder says so (with what each thread waits for) instead of
// hanging. docs/recording.md, "Deadlocks", has the long form.
//
// The waits that count:
// - a futex wait with no timeout, on a futex no process outside the
//   recording can wake (FUTEX_PRIVATE_FLAG, or a private mapping);
// - a read of a pipe or FIFO whose writers are all recorded processes, a
//   write to one whose readers all are;
// - wait4/waitid without WNOHANG: every child of a recorded process is
//   recorded too.
// Anything else (a sleep, a timeout, a socket, poll, pause) may be ended by
// time or the outside world. So may any wait of a process with a timer
// armed that may send it a signal: alarm, setitimer(ITIMER_REAL) and POSIX
// timers, which SignalTimers follows from the syscalls (the kernel shows
// the first two nowhere). Not thread-safe.

#include <sys/time.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace repro::tracer {

/// A thread asleep in a syscall.
struct WaitingThread {
  pid_t tid = 0;
  pid_t pid = 0;
  int syscall_number = -1;
  std::array<uint64_t, 6> args{};
};

/// If only a thread of `recorded_processes` could end `thread`'s wait
/// (timers aside): what it waits for, e.g. "futex wait on 0x7f3a2c000b40
/// (no timeout)"; nullopt otherwise.
std::optional<std::string> wait_only_recorded_threads_end(
    const WaitingThread& thread, const std::set<pid_t>& recorded_processes);

/// The timers that may send a recorded process a signal while all its
/// threads sleep.
class SignalTimers {
 public:
  using Clock = std::chrono::steady_clock;
  /// alarm(seconds) of process `pid` returned.
  void note_alarm(pid_t pid, unsigned seconds);
  /// setitimer(ITIMER_REAL, value) of process `pid` succeeded.
  void note_real_timer(pid_t pid, const itimerval& value);
  /// timer_create (`created`) or timer_delete of process `pid` succeeded.
  /// Any POSIX timer counts, whatever it notifies.
  void note_posix_timer(pid_t pid, bool created);
  /// Process `pid` finished an exec, which deletes its POSIX timers.
  void note_exec(pid_t pid);
  /// Process `pid` is gone.
  void forget(pid_t pid);
  /// Whether a timer of process `pid` may still send it a signal.
  bool may_fire(pid_t pid) const;

 private:
  // Per process: when its real-time timer expires (Clock::time_point::max()
  // for a periodic one). Absent: none armed.
  std::map<pid_t, Clock::time_point> real_timer_expiry_;
  std::map<pid_t, int> posix_timers_;  // per process: how many exist
};

}  // namespace repro::tracer
