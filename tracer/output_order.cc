#include "tracer/output_order.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <sys/syscall.h>

namespace repro::tracer {

namespace {

// Which argument holds the fd written to, for the syscalls whose effect is
// bytes going out through an open object; -1 for every other syscall.
int output_fd_argument(int number) {
  switch (number) {
    case SYS_write:
    case SYS_writev:
    case SYS_pwrite64:
    case SYS_pwritev:
    case SYS_pwritev2:
    case SYS_sendto:
    case SYS_sendmsg:
    case SYS_sendmmsg:
    case SYS_sendfile:
    case SYS_vmsplice:
      return 0;
    case SYS_tee:
      return 1;
    case SYS_splice:
    case SYS_copy_file_range:
      return 2;
    default:
      return -1;
  }
}

}  // namespace

std::optional<OutputTarget> output_target(pid_t pid, int number,
                                          const std::array<uint64_t, 6>& args) {
  int arg = output_fd_argument(number);
  if (arg < 0) {
    return std::nullopt;
  }
  int fd = static_cast<int>(args[static_cast<size_t>(arg)]);
  struct stat st;
  if (fd < 0 || stat(fmt::format("/proc/{}/fd/{}", pid, fd).c_str(), &st) != 0) {
    return std::nullopt;
  }
  OutputTarget target;
  target.device = st.st_dev;
  target.inode = st.st_ino;
  target.completes_alone = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
  return target;
}

bool OutputOrder::busy(const OutputTarget& target, pid_t tid) const {
  for (const auto& [other, flight] : in_flight_) {
    if (other != tid && flight.target == target) {
      return true;
    }
  }
  return false;
}

bool OutputOrder::process_busy(pid_t pid, pid_t tid) const {
  for (const auto& [other, flight] : in_flight_) {
    if (other != tid && flight.pid == pid) {
      return true;
    }
  }
  return false;
}

void OutputOrder::begin(pid_t tid, pid_t pid, const OutputTarget& target) {
  in_flight_[tid] = {pid, target};
}

void OutputOrder::hold(pid_t tid, pid_t pid, std::optional<OutputTarget> target) {
  held_[tid] = {pid, target};
}

std::vector<pid_t> OutputOrder::end(pid_t tid) {
  held_.erase(tid);
  auto it = in_flight_.find(tid);
  if (it == in_flight_.end()) {
    return {};
  }
  InFlight done = it->second;
  in_flight_.erase(it);
  std::vector<pid_t> woken;
  for (auto held = held_.begin(); held != held_.end();) {
    bool waited_for_this = held->second.target ? *held->second.target == done.target
                                               : held->second.pid == done.pid;
    if (waited_for_this) {
      woken.push_back(held->first);
      held = held_.erase(held);
    } else {
      ++held;
    }
  }
  return woken;
}

}  // namespace repro::tracer
