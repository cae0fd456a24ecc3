#include "tracer/deadlock.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>

#include "core/os/open_files.h"
#include "core/os/proc_maps.h"

namespace repro::tracer {
namespace {

// Whether a futex at `address` of process `pid` is out of reach of other
// processes: private futex ops name the address space, and a private
// mapping is this process's alone (copy-on-write after fork).
bool futex_is_private(pid_t pid, uint64_t address, uint64_t op) {
  if ((op & FUTEX_PRIVATE_FLAG) != 0) {
    return true;
  }
  auto mappings = os::read_mappings(pid);
  if (!mappings.is_ok()) {
    return false;
  }
  for (const os::Mapping& mapping : *mappings) {
    if (address >= mapping.start && address < mapping.end) {
      return mapping.is_private();
    }
  }
  return false;
}

std::optional<std::string> futex_wait(const WaitingThread& t) {
  uint64_t op = t.args[1];
  switch (static_cast<int>(op) & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
    case FUTEX_LOCK_PI:
    case FUTEX_LOCK_PI2:
    case FUTEX_WAIT_REQUEUE_PI:
      break;
    default:
      return std::nullopt;
  }
  if (t.args[3] != 0 || !futex_is_private(t.pid, t.args[0], op)) {
    return std::nullopt;  // a timeout ends it, or another process may wake it
  }
  bool lock = (static_cast<int>(op) & FUTEX_CMD_MASK) == FUTEX_LOCK_PI ||
              (static_cast<int>(op) & FUTEX_CMD_MASK) == FUTEX_LOCK_PI2;
  return fmt::format("futex {} on {:#x} (no timeout)", lock ? "lock" : "wait", t.args[0]);
}

// A read of a pipe whose writers are all recorded (`reading`), or a write to
// one whose readers all are.
std::optional<std::string> pipe_wait(const WaitingThread& t, bool reading,
                                     const std::set<pid_t>& recorded) {
  int fd = static_cast<int>(t.args[0]);
  auto file = os::descriptor_file(t.pid, fd);
  if (!file.is_ok() || !file->is_fifo) {
    return std::nullopt;
  }
  os::FileHolders holders = os::holders_of(*file);
  if (holders.incomplete) {
    return std::nullopt;
  }
  for (const os::FileHolder& holder : holders.holders) {
    bool other_end = reading ? holder.can_write : holder.can_read;
    if (other_end && recorded.count(holder.pid) == 0) {
      return std::nullopt;  // a process outside the recording may end it
    }
  }
  return fmt::format("{} pipe (fd {}, inode {}) whose {} all recorded",
                     reading ? "read from a" : "write to a full", fd, file->inode,
                     reading ? "writers are" : "readers are");
}

std::optional<std::string> child_wait(const WaitingThread& t) {
  uint64_t options = t.syscall_number == SYS_wait4 ? t.args[2] : t.args[3];
  if ((options & WNOHANG) != 0) {
    return std::nullopt;
  }
  if (t.syscall_number == SYS_wait4) {
    return fmt::format("wait4 for {}", static_cast<int>(t.args[0]) == -1
                                           ? std::string("any child")
                                           : fmt::format("pid {}", static_cast<int>(t.args[0])));
  }
  return std::string("waitid for a child");
}

}  // namespace

std::optional<std::string> wait_only_recorded_threads_end(
    const WaitingThread& thread, const std::set<pid_t>& recorded_processes) {
  switch (thread.syscall_number) {
    case SYS_futex:
      return futex_wait(thread);
    case SYS_read:
    case SYS_readv:
      return pipe_wait(thread, /*reading=*/true, recorded_processes);
    case SYS_write:
    case SYS_writev:
      return pipe_wait(thread, /*reading=*/false, recorded_processes);
    case SYS_wait4:
    case SYS_waitid:
      return child_wait(thread);
    default:
      return std::nullopt;
  }
}

void SignalTimers::note_alarm(pid_t pid, unsigned seconds) {
  if (seconds == 0) {
    real_timer_expiry_.erase(pid);
  } else {
    real_timer_expiry_[pid] = Clock::now() + std::chrono::seconds(seconds);
  }
}

void SignalTimers::note_real_timer(pid_t pid, const itimerval& value) {
  auto span = [](const timeval& tv) {
    return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
  };
  if (span(value.it_value).count() == 0) {
    real_timer_expiry_.erase(pid);
  } else if (span(value.it_interval).count() != 0) {
    real_timer_expiry_[pid] = Clock::time_point::max();
  } else {
    real_timer_expiry_[pid] = Clock::now() + span(value.it_value);
  }
}

void SignalTimers::note_posix_timer(pid_t pid, bool created) {
  int& count = posix_timers_[pid];
  count = created ? count + 1 : std::max(0, count - 1);
}

void SignalTimers::note_exec(pid_t pid) { posix_timers_.erase(pid); }

void SignalTimers::forget(pid_t pid) {
  real_timer_expiry_.erase(pid);
  posix_timers_.erase(pid);
}

bool SignalTimers::may_fire(pid_t pid) const {
  auto it = real_timer_expiry_.find(pid);
  if (it != real_timer_expiry_.end() && it->second > Clock::now()) {
    return true;
  }
  auto timers = posix_timers_.find(pid);
  return timers != posix_timers_.end() && timers->second > 0;
}

}  // namespace repro::tracer
