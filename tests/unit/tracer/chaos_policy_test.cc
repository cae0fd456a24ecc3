#include <catch2/catch.hpp>
#include <sys/syscall.h>

#include <algorithm>
#include <vector>

#include "tracer/scheduling_policy.h"

using repro::tracer::ChaosOptions;
using repro::tracer::make_chaos_policy;
using repro::tracer::make_round_robin_policy;

namespace {

// The decisions a policy makes over a fixed sequence of scheduling
// questions: picks among three ready threads, then syscall exits.
std::vector<long> decisions(uint64_t seed) {
  auto policy = make_chaos_policy({.seed = seed, .depth = 3, .expected_points = 50});
  std::vector<uint32_t> ready = {0, 1, 2};
  std::vector<long> made;
  for (int round = 0; round < 100; ++round) {
    size_t chosen = policy->pick(ready);
    made.push_back(static_cast<long>(ready[chosen]));
    made.push_back(policy->time_slice().count());
    uint32_t running = ready[chosen];
    std::vector<uint32_t> others;
    for (uint32_t t : ready) {
      if (t != running) others.push_back(t);
    }
    made.push_back(policy->switch_at_syscall(running, SYS_write, others) ? 1 : 0);
  }
  return made;
}

}  // namespace

TEST_CASE("chaos: the same seed makes the same decisions, another seed others",
          "[tracer][chaos]") {
  CHECK(decisions(7) == decisions(7));
  CHECK(decisions(7) != decisions(8));
}

TEST_CASE("chaos: the highest-priority ready thread runs, and keeps running", "[tracer][chaos]") {
  auto policy = make_chaos_policy({.seed = 1, .depth = 1});  // no change points
  std::vector<uint32_t> ready = {0, 1};
  uint32_t first = ready[policy->pick(ready)];
  uint32_t other = first == 0 ? 1 : 0;
  // The other thread has a lower priority: no reason to switch at a syscall.
  for (int i = 0; i < 100; ++i) {
    CHECK_FALSE(policy->switch_at_syscall(first, SYS_write, std::vector<uint32_t>{other}));
  }
  CHECK(ready[policy->pick(ready)] == first);
}

TEST_CASE("chaos: sched_yield and a preemption drop the thread below the others",
          "[tracer][chaos]") {
  auto policy = make_chaos_policy({.seed = 3, .depth = 1});
  std::vector<uint32_t> ready = {0, 1, 2};
  uint32_t first = ready[policy->pick(ready)];
  CHECK(policy->switch_at_syscall(first, SYS_sched_yield, std::vector<uint32_t>{}));
  std::vector<uint32_t> all = {0, 1, 2};
  uint32_t second = all[policy->pick(all)];
  CHECK(second != first);
  policy->on_preempted(second);
  uint32_t third = all[policy->pick(all)];
  CHECK(third != first);
  CHECK(third != second);
}

TEST_CASE("chaos: a thread preempted in user code is dropped", "[tracer][chaos]") {
  auto policy = make_chaos_policy({.seed = 3, .depth = 1});
  std::vector<uint32_t> ready = {0, 1};
  uint32_t first = ready[policy->pick(ready)];
  policy->on_preempted(first);  // the end of its slice, or caught spinning
  CHECK(ready[policy->pick(ready)] != first);
}

namespace {

// Two threads that yield at every step, as the policy sees them: each
// round, pick one, and it yields at its next syscall exit. Returns the
// longest run of rounds the same thread was picked.
int longest_run_of_yielders(uint64_t seed, int rounds) {
  auto policy = make_chaos_policy({.seed = seed, .depth = 3, .expected_points = 100});
  std::vector<uint32_t> ready = {0, 1};
  int longest = 0;
  int run = 0;
  uint32_t previous = 2;
  for (int round = 0; round < rounds; ++round) {
    uint32_t running = ready[policy->pick(ready)];
    run = running == previous ? run + 1 : 1;
    longest = std::max(longest, run);
    previous = running;
    CHECK(policy->switch_at_syscall(running, SYS_sched_yield,
                                    std::vector<uint32_t>{running == 0 ? 1u : 0u}));
  }
  return longest;
}

}  // namespace

TEST_CASE("chaos: a starved thread stays starved while the other yields", "[tracer][chaos]") {
  // Yields alone alternate the two; over 20000 points starvation windows
  // (one point in 500 opens one, 50 points or more) hold one back.
  int starved_runs = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    starved_runs += longest_run_of_yielders(seed, 20000) >= 25;
  }
  CHECK(starved_runs == 5);
}

TEST_CASE("chaos: starvation ends when the others only run user code", "[tracer][chaos]") {
  // Find a starvation window with two yielding threads, then let the one
  // running be preempted in user code again and again (a spin on the
  // starved one, which makes no syscall exits): the starved one must get
  // the CPU after at most kStarveMaxPoints / kPreemptionPoints such picks.
  auto policy = make_chaos_policy({.seed = 11, .depth = 1});
  std::vector<uint32_t> ready = {0, 1};
  uint32_t previous = 2;
  int run = 0;
  uint32_t running = 0;
  for (int round = 0; round < 100000 && run < 3; ++round) {
    running = ready[policy->pick(ready)];
    run = running == previous ? run + 1 : 1;
    previous = running;
    policy->switch_at_syscall(running, SYS_sched_yield,
                              std::vector<uint32_t>{running == 0 ? 1u : 0u});
  }
  REQUIRE(run == 3);  // the other thread is starved
  int picks = 0;
  while (ready[policy->pick(ready)] == running) {
    policy->on_preempted(running);
    ++picks;
    REQUIRE(picks <= 25);
  }
  CHECK(picks >= 1);
}

TEST_CASE("chaos: slices are drawn from 1 ms up to twice the base", "[tracer][chaos]") {
  auto policy = make_chaos_policy({.seed = 5, .base_slice = std::chrono::milliseconds(10)});
  std::vector<uint32_t> ready = {0};
  bool varied = false;
  auto previous = policy->time_slice();
  for (int i = 0; i < 200; ++i) {
    policy->pick(ready);
    auto slice = policy->time_slice();
    CHECK(slice.count() >= 1);
    CHECK(slice.count() < 20);
    varied |= slice != previous;
    previous = slice;
  }
  CHECK(varied);
}

TEST_CASE("round robin switches at sched_yield only", "[tracer][policy]") {
  auto policy = make_round_robin_policy(std::chrono::milliseconds(50));
  std::vector<uint32_t> ready = {4, 5};
  CHECK(policy->pick(ready) == 0);
  CHECK(policy->switch_at_syscall(1, SYS_sched_yield, ready));
  CHECK_FALSE(policy->switch_at_syscall(1, SYS_write, ready));
  CHECK(policy->time_slice() == std::chrono::milliseconds(50));
}
