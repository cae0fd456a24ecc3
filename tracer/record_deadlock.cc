// RecordSession: deadlock detection (see deadlock.h). When nothing has
// stopped for a while and every thread sleeps in a wait only another
// recorded thread could end, the recording ends: each thread's wait and
// backtrace go into a kDeadlock event and the report, and the program is
// killed, so replay reaches the same point and says the same.

#include <fmt/core.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "core/diag/backtrace.h"
#include "core/os/tracee.h"
#include "tracer/deadlock.h"
#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {
namespace {

// How long every thread must have slept with no stop at all before the
// waits are examined: long enough that a wait about to be ended by a
// wake-up already on its way is not taken for a deadlock, short enough
// that a hunt for deadlocks loses little time per caught run.
constexpr auto kDeadlockQuiet = std::chrono::milliseconds(500);
// How long a backtrace waits for a thread interrupted in its syscall to stop.
constexpr auto kInterruptLimit = std::chrono::seconds(1);

}  // namespace

void RecordSession::note_signal_timers(Thread& t, int64_t result) {
  switch (t.syscall_number) {
    case SYS_alarm:
      signal_timers_.note_alarm(t.pid, static_cast<unsigned>(t.args[0]));
      break;
    case SYS_setitimer: {
      itimerval value{};
      if (result == 0 && t.args[0] == ITIMER_REAL && t.args[1] != 0 &&
          os::read_memory(t.tid, t.args[1], &value, sizeof value).is_ok()) {
        signal_timers_.note_real_timer(t.pid, value);
      }
      break;
    }
    case SYS_timer_create:
    case SYS_timer_delete:
      if (result == 0) {
        signal_timers_.note_posix_timer(t.pid, t.syscall_number == SYS_timer_create);
      }
      break;
    default:
      break;
  }
}

std::string RecordSession::stop_for_backtrace(Thread& t) {
  if (t.state != Thread::State::kInSyscall) {
    return "";
  }
  // Asleep in the kernel: bring it to a ptrace-stop to read its stack.
  if (ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr) != 0) {
    return "the thread is gone";
  }
  std::optional<int> status =
      os::wait_for_stop_until(t.tid, std::chrono::steady_clock::now() + kInterruptLimit);
  if (!status || !WIFSTOPPED(*status)) {
    return "the thread did not stop";
  }
  return "";
}

std::string RecordSession::backtrace_of(Thread& t) {
  std::string why_not = stop_for_backtrace(t);
  if (!why_not.empty()) {
    return fmt::format("  (no backtrace: {})\n", why_not);
  }
  return diag::backtrace(t.pid, t.tid, {});
}

Result<bool> RecordSession::end_if_deadlocked() {
  auto now = std::chrono::steady_clock::now();
  if (deadlock_checked_ || threads_.empty() || !ready_.empty() || !deferred_stops_.empty() ||
      now - last_stop_at_ < kDeadlockQuiet) {
    return false;
  }
  // Examined once per quiet spell: only a stop can change the answer.
  deadlock_checked_ = true;
  std::set<pid_t> processes = live_processes();
  std::vector<std::pair<Thread*, std::string>> waits;
  for (const auto& [tid, t] : threads_) {
    if (t->state == Thread::State::kEmulatedStop) {
      Thread* tracer = find(t->emulated_tracer);
      waits.emplace_back(t.get(), fmt::format("stopped for its tracer t{}",
                                              tracer != nullptr ? tracer->index : 0));
      continue;
    }
    if (t->state != Thread::State::kInSyscall || t->restarting ||
        os::scheduler_state(tid) != 'S' || signal_timers_.may_fire(t->pid)) {
      return false;
    }
    std::optional<std::string> what = wait_only_recorded_threads_end(
        WaitingThread{tid, t->pid, t->syscall_number, t->args}, processes);
    if (!what) {
      return false;
    }
    waits.emplace_back(t.get(), *what);
  }

  std::string report = "every thread waits for another recorded thread:\n";
  for (auto& [t, what] : waits) {
    if (t->state == Thread::State::kInSyscall && !t->entered_logged) {
      REPRO_RETURN_IF_ERROR(log_entered(*t));  // replay takes it to this syscall
    }
    report += fmt::format("t{} (tid {}) in {}\n", t->index, t->tid, what);
    report += backtrace_of(*t);
  }
  event_.clear();
  event_.kind = format::EventKind::kDeadlock;
  event_.thread = waits.front().first->index;
  event_.data = report;
  REPRO_RETURN_IF_ERROR(log(event_));
  deadlock_report_ = report;
  kill_all();
  return true;
}

}  // namespace repro::tracer
