#include "tracer/scheduling_policy.h"

#include <sys/syscall.h>

namespace repro::tracer {
namespace {

class RoundRobinPolicy : public SchedulingPolicy {
 public:
  explicit RoundRobinPolicy(std::chrono::milliseconds slice) : slice_(slice) {}
  size_t pick(std::span<const uint32_t>) override { return 0; }
  bool switch_at_syscall(uint32_t, int syscall_number, std::span<const uint32_t>) override {
    return syscall_number == SYS_sched_yield;
  }
  std::chrono::milliseconds time_slice() const override { return slice_; }

 private:
  std::chrono::milliseconds slice_;
};

}  // namespace

std::unique_ptr<SchedulingPolicy> make_round_robin_policy(std::chrono::milliseconds slice) {
  return std::make_unique<RoundRobinPolicy>(slice);
}

}  // namespace repro::tracer
