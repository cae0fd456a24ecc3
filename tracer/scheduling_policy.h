#pragma once
// SchedulingPolicy: which ready thread the recorder runs next, and for how
// long a thread may run user code while others wait. One replaceable
// object: round robin by default, or the seeded chaos policy (random
// priorities with change points) that hunting uses. Decisions are logged
// as the order of events, so replay needs no policy at all. Not
// thread-safe; owned by the RecordSession.

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>

namespace repro::tracer {

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  /// Index into `ready` (thread indices, longest waiting first) of the
  /// thread to run next. Requires: !ready.empty().
  virtual size_t pick(std::span<const uint32_t> ready) = 0;
  /// True if `running` should give way at this syscall exit, to one of
  /// `ready` (not empty), although its time slice has not run out (it
  /// called sched_yield, or a thread the policy prefers is ready).
  virtual bool switch_at_syscall(uint32_t running, int syscall_number,
                                 std::span<const uint32_t> ready) = 0;
  /// `thread` was preempted, spinning or at the end of its slice.
  virtual void on_preempted(uint32_t thread) { (void)thread; }
  /// How long a thread may run while others are ready.
  virtual std::chrono::milliseconds time_slice() const = 0;
  /// What the policy did of its own accord, for the recording's last line
  /// ("" if nothing to say).
  virtual std::string decisions() const { return ""; }
};

/// Round robin with a fixed slice; yields switch.
std::unique_ptr<SchedulingPolicy> make_round_robin_policy(std::chrono::milliseconds slice);

/// The chaos policy's knobs; all of them go into the trace header.
struct ChaosOptions {
  uint64_t seed = 0;
  /// PCT's depth: d - 1 priority change points, so a bug that needs d
  /// ordering constraints is found with probability >= 1 / (n * k^(d-1)).
  uint32_t depth = 3;
  /// Over how many scheduling points (syscall exits) the change points
  /// are spread: an estimate of a run's length.
  uint32_t expected_points = 2000;
  /// Slices are drawn from [1 ms, 2 * base).
  std::chrono::milliseconds base_slice{50};
  /// Change points and starvation windows to leave out, by their number in
  /// the order they come (0 first). Every random draw is made all the same,
  /// so the rest of the schedule stays as it was.
  std::set<uint32_t> skipped_changes;
  std::set<uint32_t> skipped_starvations;
};

/// PCT-style random priorities (seeded): the highest-priority ready thread
/// runs, at every syscall exit too; at each change point the running
/// thread drops below every other; sched_yield and a preemption drop the
/// thread as well; new threads get a random priority; now and then a
/// thread is starved for a long stretch; slice lengths are random.
std::unique_ptr<SchedulingPolicy> make_chaos_policy(const ChaosOptions& options);

}  // namespace repro::tracer
