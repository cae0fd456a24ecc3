#include <catch2/catch.hpp>
#include <sys/syscall.h>

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
