#include "analysis/trace_summary.h"

#include <catch2/catch.hpp>
#include <sched.h>
#include <sys/syscall.h>

#include <csignal>
#include <vector>

#include "analysis/failure_report.h"
#include "core/format/trace_writer.h"
#include "format_test_util.h"

namespace repro::analysis {
namespace {

using format::Event;
using format::EventKind;

Event thread_start(uint32_t thread, uint32_t parent, int32_t tid, uint64_t flags) {
  Event e;
  e.kind = EventKind::kThreadStart;
  e.thread = thread;
  e.parent_thread = parent;
  e.recorded_tid = tid;
  e.clone_flags = flags;
  return e;
}

Event syscall_event(uint32_t thread, int number, int64_t result) {
  Event e;
  e.kind = EventKind::kSyscall;
  e.thread = thread;
  e.syscall_number = number;
  e.args[0] = static_cast<uint64_t>(result);
  e.result = result;
  return e;
}

Event thread_exit(uint32_t thread, int32_t status) {
  Event e;
  e.kind = EventKind::kThreadExit;
  e.thread = thread;
  e.exit_status = status;
  return e;
}

constexpr uint64_t kThreadFlags = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;

// Writes `events` as a complete trace and summarizes it.
TraceSummary summarize(const std::vector<Event>& events) {
  format::testing::TempDir dir;
  std::string path = dir.sub("trace");
  {
    auto writer = format::TraceWriter::create(path, format::testing::make_header());
    REQUIRE(writer.is_ok());
    for (const Event& event : events) {
      REQUIRE((*writer)->append(event).is_ok());
    }
    REQUIRE((*writer)->finish().is_ok());
  }
  auto reader = format::TraceReader::open(path);
  REQUIRE(reader.is_ok());
  Result<TraceSummary> summary = summarize_trace(**reader, SummaryOptions{});
  REQUIRE(summary.is_ok());
  return std::move(*summary);
}

TEST_CASE("a run that exits 0 has threads and processes and no failure point", "[analysis]") {
  TraceSummary s = summarize({
      thread_start(0, 0, 100, 0),
      thread_start(1, 0, 101, kThreadFlags),
      thread_start(2, 0, 102, SIGCHLD),  // a forked child
      thread_exit(2, 0),
      thread_exit(1, 0),
      syscall_event(0, SYS_exit_group, 0),
      thread_exit(0, 0),
  });
  REQUIRE(s.processes.size() == 2);
  CHECK(s.processes[0].threads == std::vector<uint32_t>{0, 1});
  CHECK(s.processes[1].threads == std::vector<uint32_t>{2});
  CHECK(s.processes[1].parent_thread == 0);
  REQUIRE(s.threads.size() == 3);
  CHECK(s.threads[1].first_event == 1);
  CHECK(s.threads[1].last_event == 4);
  CHECK(s.threads[0].event_count == 3);
  CHECK(s.processes[0].exit_status == 0);
  CHECK(s.event_count == 7);
  CHECK_FALSE(s.failure.has_value());
}

TEST_CASE("a non-zero exit is the failure point, at the exit_group", "[analysis]") {
  TraceSummary s = summarize({
      thread_start(0, 0, 100, 0),
      syscall_event(0, SYS_getpid, 100),
      syscall_event(0, SYS_exit_group, 3),
      thread_exit(0, 3 << 8),
  });
  REQUIRE(s.failure.has_value());
  CHECK(s.failure->kind == FailurePoint::Kind::kExitStatus);
  CHECK(s.failure->event_index == 2);
  CHECK(describe_wait_status(s.failure->exit_status) == "exited with status 3");
  REQUIRE(s.failure->last_events.size() == 1);
  CHECK(s.failure->last_events[0].second.back().index == 2);
}

TEST_CASE("failure stacks make a fatal-signal failure point with the stacks", "[analysis]") {
  format::FailureStacks stacks;
  stacks.signal_number = SIGSEGV;
  stacks.signal_code = SEGV_MAPERR;
  stacks.instruction_address = 0x401000;
  stacks.instruction_bytes = "\x89\x38";
  stacks.instruction = "mov dword ptr [rax], edi";
  format::ThreadStack stack;
  stack.thread = 1;
  stack.recorded_tid = 101;
  stack.frames = {{0x401000, "store_reading", "/src/prog.c", 14, "/bin/prog"}};
  stacks.threads = {stack};
  Event signal;
  signal.kind = EventKind::kSignal;
  signal.thread = 1;
  signal.signal_number = SIGSEGV;
  Event failure;
  failure.kind = EventKind::kFailureStacks;
  failure.thread = 1;
  failure.data = format::encode_failure_stacks(stacks);
  TraceSummary s = summarize({
      thread_start(0, 0, 100, 0),
      thread_start(1, 0, 101, kThreadFlags),
      signal,
      failure,
      thread_exit(0, SIGSEGV),
      thread_exit(1, SIGSEGV),
  });
  REQUIRE(s.failure.has_value());
  CHECK(s.failure->kind == FailurePoint::Kind::kFatalSignal);
  CHECK(s.failure->event_index == 3);
  CHECK(s.failure->thread == 1);
  REQUIRE(s.failure->stacks.has_value());
  CHECK(*s.failure->stacks == stacks);
  CHECK(describe_signal_cause(stacks) == "SIGSEGV (address not mapped) at 0x0");
  CHECK(describe_frame(0, stacks.threads[0].frames[0]) ==
        "#0 0x401000 store_reading at /src/prog.c:14 (/bin/prog)");
  CHECK(failure_stacks_json(stacks)["threads"][0]["frames"][0]["line"] == 14);
  CHECK(describe_wait_status(*s.processes[0].exit_status) == "killed by SIGSEGV");
}

TEST_CASE("damaged failure stacks still make a failure point, with the error", "[analysis]") {
  Event failure;
  failure.kind = EventKind::kFailureStacks;
  failure.data = "\x0b";
  TraceSummary s = summarize({thread_start(0, 0, 100, 0), failure, thread_exit(0, SIGSEGV)});
  REQUIRE(s.failure.has_value());
  CHECK_FALSE(s.failure->stacks.has_value());
  CHECK_THAT(s.failure->stacks_error, Catch::Contains("event #1: failure stacks:"));
}

TEST_CASE("a deadlock is the failure point and its SIGKILLs are not", "[analysis]") {
  Event deadlock;
  deadlock.kind = EventKind::kDeadlock;
  deadlock.data = "every thread waits for another recorded thread:\n";
  TraceSummary s = summarize({
      thread_start(0, 0, 100, 0),
      deadlock,
      thread_exit(0, SIGKILL),
  });
  REQUIRE(s.failure.has_value());
  CHECK(s.failure->kind == FailurePoint::Kind::kDeadlock);
  CHECK(s.failure->deadlock_report == deadlock.data);
}

TEST_CASE("the program killed without stacks is a failure, a leftover child is not", "[analysis]") {
  TraceSummary killed = summarize({thread_start(0, 0, 100, 0), thread_exit(0, SIGKILL)});
  REQUIRE(killed.failure.has_value());
  CHECK(killed.failure->kind == FailurePoint::Kind::kFatalSignal);
  CHECK(killed.failure->signal_number == SIGKILL);
  CHECK_FALSE(killed.failure->stacks.has_value());

  TraceSummary leftover = summarize({
      thread_start(0, 0, 100, 0),
      thread_start(1, 0, 101, SIGCHLD),
      syscall_event(0, SYS_exit_group, 0),
      thread_exit(0, 0),
      thread_exit(1, SIGKILL),  // repro ends what the program left running
  });
  CHECK_FALSE(leftover.failure.has_value());
}

TEST_CASE("a trace with no thread start is refused", "[analysis][corruption]") {
  format::testing::TempDir dir;
  std::string path = dir.sub("trace");
  {
    auto writer = format::TraceWriter::create(path, format::testing::make_header());
    REQUIRE(writer.is_ok());
    REQUIRE((*writer)->finish().is_ok());
  }
  auto reader = format::TraceReader::open(path);
  REQUIRE(reader.is_ok());
  Result<TraceSummary> summary = summarize_trace(**reader, SummaryOptions{});
  REQUIRE_FALSE(summary.is_ok());
  CHECK(summary.status().code() == StatusCode::kCorruption);
}

}  // namespace
}  // namespace repro::analysis
