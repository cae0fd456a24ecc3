#include "analysis/perfetto_export.h"

#include <sched.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace repro::analysis {
namespace {

using Json = nlohmann::json;
using format::Event;
using format::EventKind;

constexpr uint64_t kThreadFlags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;

Event thread_start(uint32_t thread, uint32_t parent, int32_t tid, uint64_t flags) {
  Event e;
  e.kind = EventKind::kThreadStart;
  e.thread = thread;
  e.parent_thread = parent;
  e.recorded_tid = tid;
  e.clone_flags = flags;
  return e;
}

Event syscall(uint32_t thread, int number, int64_t result, EventKind kind = EventKind::kSyscall) {
  Event e;
  e.kind = kind;
  e.thread = thread;
  e.syscall_number = number;
  e.args = {3, 0x7ffff7dcee90, 16, 0, 0, 0};
  e.result = result;
  return e;
}

Event of_kind(EventKind kind, uint32_t thread) {
  Event e;
  e.kind = kind;
  e.thread = thread;
  return e;
}

// Exports `events` (numbered from 0) and parses the JSON back.
Json export_events(const std::vector<Event>& events, bool complete = true) {
  format::TraceHeader header;
  header.argv = {"/bin/racy", "--fast"};
  std::ostringstream out;
  TimelineExporter exporter(header, &out);
  for (size_t i = 0; i < events.size(); ++i) {
    exporter.add(i, events[i]);
  }
  auto summary = exporter.finish(complete);
  REQUIRE(summary.is_ok());
  CHECK(summary->events == events.size());
  return Json::parse(out.str());
}

std::vector<Json> on_track(const Json& json, int64_t tid) {
  std::vector<Json> found;
  for (const Json& e : json["traceEvents"]) {
    if (e["ph"] != "M" && e["tid"] == tid) {
      found.push_back(e);
    }
  }
  return found;
}

// The program of the examples below: t0 starts t1 and t2 in one process,
// and a child process t3; t0 blocks in futex while t1 runs, t1 is preempted
// and t2 gets a signal.
std::vector<Event> example() {
  std::vector<Event> events;
  events.push_back(thread_start(0, 0, 100, 0));                            // 0
  events.push_back(syscall(0, SYS_brk, 0x555555559000));                   // 1
  events.push_back(thread_start(1, 0, 101, kThreadFlags));                 // 2
  events.push_back(syscall(0, SYS_clone, 101));                            // 3
  events.push_back(thread_start(2, 0, 102, kThreadFlags));                 // 4
  events.push_back(syscall(0, SYS_clone, 102));                            // 5
  events.push_back(syscall(0, SYS_futex, 0, EventKind::kSyscallEntered));  // 6
  events.push_back(syscall(1, SYS_clock_gettime, 0));                      // 7
  events.push_back(of_kind(EventKind::kPreempt, 1));                       // 8
  Event signal = of_kind(EventKind::kSignal, 2);
  signal.signal_number = SIGUSR1;
  events.push_back(signal);                      // 9
  events.push_back(syscall(2, SYS_openat, -2));  // 10
  events.back().inputs.push_back({1, std::string("/etc/\xff\\x", 8)});
  events.push_back(syscall(1, SYS_exit, 0));  // 11
  Event exit = of_kind(EventKind::kThreadExit, 1);
  events.push_back(exit);                              // 12
  events.push_back(syscall(0, SYS_futex, 0));          // 13: completes 6
  events.push_back(thread_start(3, 0, 103, SIGCHLD));  // 14
  events.push_back(syscall(0, SYS_clone, 103));        // 15
  events.push_back(syscall(3, SYS_getpid, 103));       // 16
  return events;
}

TEST_CASE("each thread gets one named track, grouped by its process", "[analysis][perfetto]") {
  Json json = export_events(example());
  std::map<int64_t, std::string> thread_names;
  std::map<int64_t, std::string> process_names;
  std::map<int64_t, int64_t> pid_of_tid;
  for (const Json& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e.value("name", "") == "thread_name") {
      CHECK(thread_names.count(e["tid"]) == 0);
      thread_names[e["tid"]] = e["args"]["name"];
      pid_of_tid[e["tid"]] = e["pid"];
    }
    if (e["ph"] == "M" && e.value("name", "") == "process_name") {
      process_names[e["pid"]] = e["args"]["name"];
    }
  }
  CHECK(thread_names ==
        std::map<int64_t, std::string>{{100, "t0"}, {101, "t1"}, {102, "t2"}, {103, "t3"}});
  CHECK(pid_of_tid == std::map<int64_t, int64_t>{{100, 100}, {101, 100}, {102, 100}, {103, 103}});
  CHECK(process_names == std::map<int64_t, std::string>{{100, "racy"}, {103, "racy"}});
}

TEST_CASE("running slices cover each thread's consecutive events, one thread at a time",
          "[analysis][perfetto]") {
  Json json = export_events(example());
  // (tid, begin, end) of every running slice.
  std::vector<std::tuple<int64_t, uint64_t, uint64_t>> runs;
  std::map<int64_t, std::vector<Json>> open;
  for (const Json& e : json["traceEvents"]) {
    if (e["ph"] == "B") {
      open[e["tid"]].push_back(e);
    } else if (e["ph"] == "E") {
      REQUIRE(!open[e["tid"]].empty());
      Json begin = open[e["tid"]].back();
      open[e["tid"]].pop_back();
      if (begin["name"] == "running") {
        runs.emplace_back(e["tid"], begin["ts"], e["ts"]);
      }
    }
  }
  for (const auto& [tid, stack] : open) {
    CHECK(stack.empty());
  }
  std::vector<std::tuple<int64_t, uint64_t, uint64_t>> expected = {
      {100, 1, 6},    // brk, clone, clone (the thread starts at 2 and 4 are t1's and t2's)
      {101, 7, 9},    // clock_gettime, then preempted
      {102, 9, 11},   // the signal, openat
      {101, 11, 13},  // exit, and its thread-exit
      {100, 15, 16},  // after futex returned: clone
      {103, 16, 17},  // the child, until the end of the trace
  };
  CHECK(runs == expected);
}

TEST_CASE("a blocking syscall is a slice from entry to completion, with its result",
          "[analysis][perfetto]") {
  Json json = export_events(example());
  std::vector<Json> t0 = on_track(json, 100);
  auto begin = std::find_if(t0.begin(), t0.end(),
                            [](const Json& e) { return e["ph"] == "B" && e.value("name", "") == "futex"; });
  REQUIRE(begin != t0.end());
  CHECK((*begin)["ts"] == 6);
  CHECK((*begin)["cat"] == "syscall,blocking");
  CHECK((*begin)["args"]["event"] == 6);
  CHECK((*begin)["args"]["arguments"] == "3, 0x7ffff7dcee90, 16, 0, 0, 0");
  const Json& end = *(begin + 1);
  CHECK(end["ph"] == "E");
  CHECK(end["ts"] == 14);
  CHECK(end["args"]["result"] == "0");
  CHECK(end["args"]["completed_at_event"] == 13);
}

TEST_CASE(
    "syscalls are one-event slices with arguments and named errors, signals and "
    "preemptions are instants",
    "[analysis][perfetto]") {
  Json json = export_events(example());
  std::vector<Json> t2 = on_track(json, 102);
  auto openat =
      std::find_if(t2.begin(), t2.end(), [](const Json& e) { return e.value("name", "") == "openat"; });
  REQUIRE(openat != t2.end());
  CHECK((*openat)["ph"] == "X");
  CHECK((*openat)["ts"] == 10);
  CHECK((*openat)["dur"] == 1);
  CHECK((*openat)["args"]["result"] == "-2 ENOENT");
  CHECK((*openat)["args"]["arguments"] == "3, 0x7ffff7dcee90, 16, 0");
  CHECK((*openat)["args"]["input_arg1"] == "/etc/\\xff\\x5cx");
  auto signal =
      std::find_if(t2.begin(), t2.end(), [](const Json& e) { return e.value("name", "") == "SIGUSR1"; });
  REQUIRE(signal != t2.end());
  CHECK((*signal)["ph"] == "i");
  CHECK((*signal)["cat"] == "signal");
  CHECK((*signal)["ts"] == 9);
  std::vector<Json> t1 = on_track(json, 101);
  CHECK(std::count_if(t1.begin(), t1.end(), [](const Json& e) {
          return e["ph"] == "i" && e.value("name", "") == "preempted" && e["ts"] == 8;
        }) == 1);
  std::vector<Json> t0 = on_track(json, 100);
  auto brk = std::find_if(t0.begin(), t0.end(), [](const Json& e) { return e.value("name", "") == "brk"; });
  REQUIRE(brk != t0.end());
  CHECK((*brk)["args"]["result"] == "0x555555559000");
}

TEST_CASE("timestamps never go back on a track", "[analysis][perfetto]") {
  Json json = export_events(example());
  std::map<int64_t, uint64_t> last;
  for (const Json& e : json["traceEvents"]) {
    if (e["ph"] == "M") {
      continue;
    }
    uint64_t ts = e["ts"];
    CHECK(ts >= last[e["tid"]]);
    last[e["tid"]] = ts;
  }
}

TEST_CASE("the clock is named logical and the trace's facts are in otherData",
          "[analysis][perfetto]") {
  Json json = export_events(example(), false);
  CHECK(json["otherData"]["clock"].get<std::string>().rfind("logical", 0) == 0);
  CHECK(json["otherData"]["events"] == 17);
  CHECK(json["otherData"]["complete"] == false);
  CHECK(json["otherData"]["argv"] == Json::array({"/bin/racy", "--fast"}));
}

TEST_CASE("a reused tid and a thread without a start get tracks of their own",
          "[analysis][perfetto]") {
  std::vector<Event> events;
  events.push_back(thread_start(0, 0, 100, 0));
  events.push_back(thread_start(1, 0, 101, kThreadFlags));
  events.push_back(of_kind(EventKind::kThreadExit, 1));
  events.push_back(thread_start(2, 0, 101, kThreadFlags));  // the kernel reused 101
  events.push_back(syscall(2, SYS_getpid, 100));
  events.push_back(syscall(7, SYS_getpid, 7));  // no thread-start: a damaged trace
  Json json = export_events(events);
  std::map<std::string, std::pair<int64_t, int64_t>> ids;  // name -> (pid, tid)
  for (const Json& e : json["traceEvents"]) {
    if (e.value("name", "") == "thread_name") {
      ids[e["args"]["name"]] = {e["pid"], e["tid"]};
    }
  }
  REQUIRE(ids.size() == 4);
  CHECK(ids["t1"] == std::pair<int64_t, int64_t>{100, 101});
  CHECK(ids["t2"].first == 100);
  CHECK(ids["t2"].second > 4194304);
  CHECK(ids["t7"].first == ids["t7"].second);
  CHECK(ids["t7"].second > 4194304);
}

TEST_CASE("what is still open at the end of an incomplete trace is closed there",
          "[analysis][perfetto]") {
  std::vector<Event> events;
  events.push_back(thread_start(0, 0, 100, 0));
  events.push_back(thread_start(1, 0, 101, kThreadFlags));
  events.push_back(syscall(0, SYS_wait4, 0, EventKind::kSyscallEntered));
  events.push_back(syscall(1, SYS_getpid, 100));
  Json json = export_events(events, false);
  int begins = 0;
  int ends = 0;
  for (const Json& e : json["traceEvents"]) {
    begins += e["ph"] == "B";
    if (e["ph"] == "E") {
      ++ends;
      CHECK(e["ts"] <= 4);
    }
  }
  CHECK(begins == 2);
  CHECK(ends == 2);
}

}  // namespace
}  // namespace repro::analysis
