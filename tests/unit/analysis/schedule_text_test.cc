#include "analysis/schedule_text.h"

#include <sys/syscall.h>

#include <catch2/catch.hpp>

namespace repro::analysis {
namespace {

format::Event event(format::EventKind kind, uint32_t thread, int syscall_number = 0) {
  format::Event e;
  e.kind = kind;
  e.thread = thread;
  e.syscall_number = syscall_number;
  return e;
}

TEST_CASE("a switch of the running thread says why the last one stopped", "[analysis]") {
  using format::EventKind;
  ScheduleTracker tracker;
  CHECK_FALSE(tracker.observe(event(EventKind::kSyscall, 0, SYS_getpid)));
  CHECK_FALSE(tracker.observe(event(EventKind::kThreadStart, 1)));  // t1 appears, t0 runs on
  CHECK_FALSE(tracker.observe(event(EventKind::kPreempt, 0)));
  auto change = tracker.observe(event(EventKind::kSyscall, 1, SYS_getpid));
  REQUIRE(change);
  CHECK(change->text() == "--- t0 -> t1 (t0 preempted) ---");
  CHECK_FALSE(tracker.observe(event(EventKind::kSyscallEntered, 1, SYS_futex)));
  change = tracker.observe(event(EventKind::kSyscall, 0, SYS_sched_yield));
  REQUIRE(change);
  CHECK(change->text() == "--- t1 -> t0 (t1 blocked in futex) ---");
  change = tracker.observe(event(EventKind::kSyscall, 1, SYS_futex));
  REQUIRE(change);
  CHECK(change->text() == "--- t0 -> t1 (t0 yielded) ---");
  CHECK_FALSE(tracker.observe(event(EventKind::kThreadExit, 1)));
  change = tracker.observe(event(EventKind::kSyscall, 0, SYS_exit_group));
  REQUIRE(change);
  CHECK(change->text() == "--- t1 -> t0 (t1 exited) ---");
  CHECK((ThreadSwitch{2, 3, ""}.text() == "--- t2 -> t3 ---"));
}

}  // namespace
}  // namespace repro::analysis
