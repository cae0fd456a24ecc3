#pragma once
// SchedulingPolicy: which ready thread the recorder runs next, and for how
// long a thread may run user code while others wait. One replaceable
// object: the default is round robin; a seeded chaos policy (random
// priorities with change points) plugs in here without touching the record
// loop. Decisions are logged as the order of events, so replay needs no
// policy at all. Not thread-safe; owned by the RecordSession.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

namespace repro::tracer {

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  /// Index into `ready` (thread indices, longest waiting first) of the
  /// thread to run next. Requires: !ready.empty().
  virtual size_t pick(std::span<const uint32_t> ready) = 0;
  /// True if `running` should give way at this syscall exit although its
  /// time slice has not run out (e.g. it called sched_yield).
  virtual bool switch_at_syscall(uint32_t running, int syscall_number) = 0;
  /// How long a thread may run while others are ready.
  virtual std::chrono::milliseconds time_slice() const = 0;
};

/// Round robin with a fixed slice; yields switch.
std::unique_ptr<SchedulingPolicy> make_round_robin_policy(std::chrono::milliseconds slice);

}  // namespace repro::tracer
