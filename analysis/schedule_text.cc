#include "analysis/schedule_text.h"

#include <fmt/core.h>
#include <sys/syscall.h>

#include "core/syscalls/syscall_table.h"

namespace repro::analysis {

std::string ThreadSwitch::text() const {
  if (why.empty()) {
    return fmt::format("--- t{} -> t{} ---", from, to);
  }
  return fmt::format("--- t{} -> t{} (t{} {}) ---", from, to, from, why);
}

std::optional<ThreadSwitch> ScheduleTracker::observe(const format::Event& event) {
  if (event.kind == format::EventKind::kThreadStart) {
    return std::nullopt;
  }
  if (event.kind == format::EventKind::kThreadExit) {
    if (running_ == event.thread) {
      why_ = "exited";
    }
    return std::nullopt;
  }
  std::optional<ThreadSwitch> change;
  if (running_ && *running_ != event.thread) {
    change = ThreadSwitch{*running_, event.thread, why_};
  }
  running_ = event.thread;
  switch (event.kind) {
    case format::EventKind::kPreempt:
      why_ = "preempted";
      break;
    case format::EventKind::kSyscallEntered:
      why_ = fmt::format("blocked in {}", syscalls::syscall_name(event.syscall_number));
      break;
    case format::EventKind::kSyscall:
      why_ = event.syscall_number == SYS_sched_yield ? "yielded" : "";
      break;
    case format::EventKind::kDeadlock:
      why_ = "deadlocked";
      break;
    default:
      why_.clear();
      break;
  }
  return change;
}

}  // namespace repro::analysis
