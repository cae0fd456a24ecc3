// RecordSession: wake-ups made part of the schedule (chaos mode), and pipe
// reads logged after the write that fed them.
//
// A thread asleep in the kernel that another thread wakes (a futex wake, a
// pipe write, a thread's or child's exit) reports its syscall exit a moment
// later, and that moment decides at which of the waker's scheduling points
// it is ready to run. Left to chance, one seed would give another schedule
// on every run. So with the chaos policy, the recorder waits at the
// waker's syscall exit (or the exit of the thread or process that woke
// it) for the threads that were woken, bounded, and handles their stops
// right there: they are ready at the same point of every run of one seed.

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>

#include "core/os/open_files.h"
#include "core/os/tracee.h"
#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {
namespace {

// How long to wait for a woken thread's stop. It needs only the CPU the
// recorder gives up while waiting (microseconds); the limit covers a
// guess of who was woken that was wrong (another child exited than the
// one waited for), at the cost of that much time.
constexpr auto kWakeLimit = std::chrono::milliseconds(50);
// Outside chaos, how long a pipe read that a write woke waits for the
// writer's syscall exit, and how often it checks whether the writer fell
// asleep instead.
constexpr auto kPipeWriteLimit = std::chrono::milliseconds(2);
constexpr auto kPipeWriteProbe = std::chrono::microseconds(100);

bool is_futex_wait(const std::array<uint64_t, 6>& args) {
  switch (static_cast<int>(args[1]) & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
      return true;
    default:
      return false;
  }
}

// How many threads a futex op that returned `result` woke, and on which
// futex words; 0 if it is no wake (PI ops have their own order, pi_futex.h).
size_t futex_woken(const std::array<uint64_t, 6>& args, int64_t result,
                   std::vector<uint64_t>* words) {
  if (result <= 0) {
    return 0;
  }
  switch (static_cast<int>(args[1]) & FUTEX_CMD_MASK) {
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
      words->push_back(args[0]);
      return static_cast<size_t>(result);
    case FUTEX_WAKE_OP:
      words->push_back(args[0]);
      words->push_back(args[4]);
      return static_cast<size_t>(result);
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE:
      // The result counts requeued waiters too; at most nr_wake woke.
      words->push_back(args[0]);
      return std::min(static_cast<size_t>(result), static_cast<size_t>(args[2]));
    default:
      return 0;
  }
}

// The stop of `writer` at the end of its pipe write, unless it goes to
// sleep first (the pipe filled up again) or takes longer than a grace
// period: the read is then logged first, with its bytes.
std::optional<int> wait_for_write_to_finish(pid_t writer) {
  auto deadline = std::chrono::steady_clock::now() + kPipeWriteLimit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<int> status =
        os::wait_for_stop_until(writer, std::chrono::steady_clock::now() + kPipeWriteProbe);
    if (status) {
      return status;
    }
    char state = os::scheduler_state(writer);
    if (state == 'S' || state == 'D') {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

Status RecordSession::collect_woken(const std::vector<pid_t>& candidates, size_t expected) {
  if (candidates.empty() || expected == 0) {
    return Status::ok();
  }
  expected = std::min(expected, candidates.size());
  std::vector<pid_t> stopped;
  std::vector<std::pair<pid_t, int>> stops;
  auto deadline = std::chrono::steady_clock::now() + kWakeLimit;
  while (stopped.size() < expected && std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (pid_t tid : candidates) {
      if (std::find(stopped.begin(), stopped.end(), tid) != stopped.end()) {
        continue;
      }
      int status = 0;
      auto deferred = std::find_if(deferred_stops_.begin(), deferred_stops_.end(),
                                   [tid](const auto& stop) { return stop.first == tid; });
      if (deferred != deferred_stops_.end()) {
        status = deferred->second;  // seen already, by hold_back_wakeup
        deferred_stops_.erase(deferred);
        stopped.push_back(tid);
        stops.emplace_back(tid, status);
        any = true;
      } else if (waitpid(tid, &status, __WALL | WNOHANG) == tid) {
        stopped.push_back(tid);
        stops.emplace_back(tid, status);
        any = true;
      }
    }
    if (!any) {
      timespec pause{0, 20 * 1000};  // let them run (they share our CPU when pinned)
      nanosleep(&pause, nullptr);
    }
  }
  for (const auto& [tid, status] : stops) {
    Thread* woken = find(tid);
    if (woken != nullptr && WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80)) {
      Status handled = on_syscall_exit(*woken);
      if (!handled.is_ok() && handled.code() != StatusCode::kTraceeDied) {
        return handled;
      }
    } else {
      deferred_stops_.emplace_back(tid, status);  // anything else: the main loop's
    }
  }
  return Status::ok();
}

bool RecordSession::is_pipe_handoff(const Thread& writer, pid_t reader_tid) {
  Thread* reader = find(reader_tid);
  if ((writer.syscall_number != SYS_write && writer.syscall_number != SYS_writev) ||
      reader == nullptr ||
      (reader->syscall_number != SYS_read && reader->syscall_number != SYS_readv)) {
    return false;
  }
  auto written = os::descriptor_file(writer.pid, static_cast<int>(writer.args[0]));
  if (!written.is_ok() || !written->is_fifo) {
    return false;
  }
  auto read = os::descriptor_file(reader->pid, static_cast<int>(reader->args[0]));
  return read.is_ok() && *read == *written;
}

bool RecordSession::hold_back_wakeup(pid_t tid, int status) {
  Thread* current = current_ != 0 ? find(current_) : nullptr;
  if (current == nullptr || tid == current_ ||
      current->state != Thread::State::kInSyscall || current->entered_logged ||
      !WIFSTOPPED(status) || WSTOPSIG(status) != (SIGTRAP | 0x80)) {
    return false;
  }
  // Outside chaos, only a read woken by a write into its pipe waits for
  // that write: logged after it, the read's bytes are the write's, which
  // the trace then stores once (pipe_data_references.h).
  if (!options_.chaos && !is_pipe_handoff(*current, tid)) {
    return false;
  }
  // The running thread is in a syscall (the wake, perhaps): its exit comes
  // first in the trace, as it did in the kernel. Unless it sleeps there
  // (a wait with no other thread ready to run, so still the running one).
  char state = os::scheduler_state(current_);
  if (state == 'S' || state == 'D') {
    return false;
  }
  std::optional<int> current_status = options_.chaos ? os::wait_for_stop_until(
                                                          current_, std::chrono::steady_clock::now() + kWakeLimit)
                                                    : wait_for_write_to_finish(current_);
  if (current_status) {
    deferred_stops_.emplace_back(current_, *current_status);
  }
  deferred_stops_.emplace_back(tid, status);
  return true;
}

Status RecordSession::settle_wakeups(Thread& t, int64_t result) {
  if (!options_.chaos) {
    return Status::ok();
  }
  std::vector<pid_t> candidates;
  size_t expected = 0;
  if (t.syscall_number == SYS_futex) {
    std::vector<uint64_t> words;
    expected = futex_woken(t.args, result, &words);
    for (const auto& [tid, other] : threads_) {
      if (other.get() != &t && other->state == Thread::State::kInSyscall &&
          other->syscall_number == SYS_futex && is_futex_wait(other->args) &&
          std::find(words.begin(), words.end(), other->args[0]) != words.end()) {
        candidates.push_back(tid);
      }
    }
  } else if ((t.syscall_number == SYS_write || t.syscall_number == SYS_writev) && result > 0) {
    // A pipe write wakes a reader of that pipe.
    auto written = os::descriptor_file(t.pid, static_cast<int>(t.args[0]));
    if (!written.is_ok() || !written->is_fifo) {
      return Status::ok();
    }
    for (const auto& [tid, other] : threads_) {
      if (other.get() == &t || other->state != Thread::State::kInSyscall ||
          (other->syscall_number != SYS_read && other->syscall_number != SYS_readv)) {
        continue;
      }
      auto read = os::descriptor_file(other->pid, static_cast<int>(other->args[0]));
      if (read.is_ok() && *read == *written) {
        candidates.push_back(tid);
      }
    }
    expected = 1;
  }
  return collect_woken(candidates, expected);
}

Status RecordSession::settle_exit_wakeups(pid_t pid, uint64_t clear_child_tid, bool process_gone) {
  if (!options_.chaos) {
    return Status::ok();
  }
  std::vector<pid_t> candidates;
  for (const auto& [other_tid, other] : threads_) {
    if (other->state != Thread::State::kInSyscall) {
      continue;
    }
    // A joiner waits on the exited thread's clear-tid word, which the
    // kernel clears and wakes; a parent waits for its child in wait4.
    bool joiner = clear_child_tid != 0 && other->pid == pid && other->syscall_number == SYS_futex &&
                  is_futex_wait(other->args) && other->args[0] == clear_child_tid;
    bool parent = process_gone && (other->syscall_number == SYS_wait4 ||
                                   other->syscall_number == SYS_waitid);
    if (joiner || parent) {
      candidates.push_back(other_tid);
    }
  }
  return collect_woken(candidates, 1);
}

}  // namespace repro::tracer
