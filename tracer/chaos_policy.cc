// The chaos policy: seeded random priorities in the manner of PCT
// (probabilistic concurrency testing, Burckhardt et al., ASPLOS 2010).
//
// Round robin switches threads at a few syscalls and at the end of long
// slices, so threads stay in step and a bug that needs one thread held at
// a particular syscall while another runs on never shows. Here the
// highest-priority ready thread always runs: at every syscall exit a
// running thread gives way to a ready thread of higher priority. Each new
// thread draws a random priority; d - 1 change points, drawn over the
// expected number of scheduling points (syscall exits), each drop the running thread
// below every other; sched_yield and a preemption drop it too, so spinning
// threads let the others on. Now and then a thread is starved for a long
// stretch (dropped, and put back after a few hundred points). Everything
// comes from one seeded generator, so the same seed on the same program
// and input makes the same choices wherever the program itself is
// deterministic.

#include <sys/syscall.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "tracer/scheduling_policy.h"

namespace repro::tracer {
namespace {

// One scheduling point in this many starts a starvation window.
constexpr uint64_t kStarveOneIn = 500;
constexpr uint64_t kStarveMinPoints = 50;
constexpr uint64_t kStarveMaxPoints = 1000;

class ChaosPolicy : public SchedulingPolicy {
 public:
  explicit ChaosPolicy(const ChaosOptions& options)
      : options_(options), random_(options.seed), slice_(draw_slice()) {
    uint32_t changes = options.depth > 0 ? options.depth - 1 : 0;
    for (uint32_t i = 0; i < changes; ++i) {
      change_points_.push_back(1 + below(std::max<uint32_t>(options.expected_points, 1)));
    }
    std::sort(change_points_.begin(), change_points_.end());
  }

  size_t pick(std::span<const uint32_t> ready) override {
    slice_ = draw_slice();
    size_t best = 0;
    for (size_t i = 1; i < ready.size(); ++i) {
      if (priority(ready[i]) > priority(ready[best])) {
        best = i;
      }
    }
    return best;
  }

  bool switch_at_syscall(uint32_t running, int syscall_number,
                         std::span<const uint32_t> ready) override {
    scheduling_point(running);
    if (syscall_number == SYS_sched_yield) {
      drop(running);
      return true;
    }
    int64_t mine = priority(running);
    return std::any_of(ready.begin(), ready.end(),
                       [&](uint32_t other) { return priority(other) > mine; });
  }

  void on_preempted(uint32_t thread) override { drop(thread); }

  std::chrono::milliseconds time_slice() const override { return slice_; }

 private:
  uint64_t below(uint64_t bound) { return random_() % bound; }

  std::chrono::milliseconds draw_slice() {
    // [1, 2 * base): 1 + [0, 2 * base - 1).
    auto base = std::max<int64_t>(options_.base_slice.count(), 1);
    return std::chrono::milliseconds(1 + static_cast<int64_t>(below(2 * base - 1)));
  }

  // A new thread's priority: above every dropped one, at random among the
  // others (ties go to the thread that has waited longest).
  int64_t priority(uint32_t thread) {
    auto [entry, added] = priorities_.try_emplace(thread, 0);
    if (added) {
      entry->second = kFirstInitial + static_cast<int64_t>(below(kInitialRange));
    }
    return entry->second;
  }

  void drop(uint32_t thread) {
    priority(thread);
    priorities_[thread] = --lowest_;
  }

  // Counts a scheduling point (a syscall exit): a change point drops the
  // running thread; starvation windows open and close.
  void scheduling_point(uint32_t running) {
    ++points_;
    while (next_change_ < change_points_.size() && change_points_[next_change_] <= points_) {
      ++next_change_;
      drop(running);
    }
    for (auto it = starved_until_.begin(); it != starved_until_.end();) {
      if (points_ >= it->second.until) {
        priorities_[it->first] = it->second.restored;
        it = starved_until_.erase(it);
      } else {
        ++it;
      }
    }
    if (!priorities_.empty() && below(kStarveOneIn) == 0) {
      auto victim = std::next(priorities_.begin(), static_cast<long>(below(priorities_.size())));
      if (!starved_until_.contains(victim->first)) {
        uint64_t length = kStarveMinPoints + below(kStarveMaxPoints - kStarveMinPoints);
        starved_until_[victim->first] = {points_ + length, victim->second};
        drop(victim->first);
      }
    }
  }

  static constexpr int64_t kFirstInitial = int64_t{1} << 32;
  static constexpr uint64_t kInitialRange = uint64_t{1} << 30;

  struct Starvation {
    uint64_t until = 0;
    int64_t restored = 0;
  };

  ChaosOptions options_;
  std::mt19937_64 random_;
  std::chrono::milliseconds slice_;
  std::map<uint32_t, int64_t> priorities_;  // thread index -> priority
  std::vector<uint64_t> change_points_;
  size_t next_change_ = 0;
  uint64_t points_ = 0;
  int64_t lowest_ = kFirstInitial;  // dropped threads go below this, each lower
  std::map<uint32_t, Starvation> starved_until_;
};

}  // namespace

std::unique_ptr<SchedulingPolicy> make_chaos_policy(const ChaosOptions& options) {
  return std::make_unique<ChaosPolicy>(options);
}

}  // namespace repro::tracer
