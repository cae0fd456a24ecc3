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
// threads let the others on. Everything comes from one seeded generator,
// so the same seed on the same program and input makes the same choices
// wherever the program itself is deterministic.
//
// Now and then a thread is starved for a long stretch, as when the OS
// leaves it off the CPU while the others run on: a bug that needs one
// thread to fall many steps behind another. Three rules make that work
// against threads that are polite to each other:
// - The victim is drawn among the threads that compete at that point (the
//   running one and the ready ones); a thread asleep in the kernel or gone
//   would not be held back by it.
// - A starved thread stays below every thread that is not, whatever drops
//   they take meanwhile. Otherwise the first sched_yield of the thread
//   running instead puts that one lowest and hands the CPU straight back,
//   and two threads that yield at every step never drift apart.
// - The window is counted in scheduling points, and a thread preempted in
//   user code (the end of its slice, or caught spinning) counts for
//   kPreemptionPoints: it ran for a millisecond or more, possibly waiting
//   for the starved thread, and without syscall exits the window would
//   never end.

#include <fmt/core.h>
#include <sys/syscall.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "tracer/scheduling_policy.h"

namespace repro::tracer {
namespace {

// One scheduling point in this many starts a starvation window.
constexpr uint64_t kStarveOneIn = 500;
constexpr uint64_t kStarveMinPoints = 50;
constexpr uint64_t kStarveMaxPoints = 1000;

// What a preemption in user code counts for in a starvation window: a slice
// lasts 1 ms or more, and the spin probe comes after 2 ms, about the time
// 50 syscall exits take under the recorder (10 to 30 us each). Too small,
// and a thread spinning on a starved one waits up to kStarveMaxPoints
// preemptions (seconds) for it; too large, and a CPU-bound thread ends a
// window after a slice, before the starved one fell behind.
constexpr uint64_t kPreemptionPoints = 50;

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
    Rank best_rank = rank(ready[0]);
    for (size_t i = 1; i < ready.size(); ++i) {
      Rank r = rank(ready[i]);
      if (r > best_rank) {
        best = i;
        best_rank = r;
      }
    }
    return best;
  }

  bool switch_at_syscall(uint32_t running, int syscall_number,
                         std::span<const uint32_t> ready) override {
    scheduling_point(running, ready);
    if (syscall_number == SYS_sched_yield) {
      drop(running);
      return true;
    }
    Rank mine = rank(running);
    return std::any_of(ready.begin(), ready.end(),
                       [&](uint32_t other) { return rank(other) > mine; });
  }

  void on_preempted(uint32_t thread) override {
    drop(thread);
    advance_starvation(kPreemptionPoints);
  }

  std::chrono::milliseconds time_slice() const override { return slice_; }

  // Machine-read by a hunt's shrinking (hunter/shrink.cc): keep the words.
  std::string decisions() const override {
    return fmt::format("{} change point{}, {} starvation window{}", next_change_,
                       next_change_ == 1 ? "" : "s", starvations_, starvations_ == 1 ? "" : "s");
  }

 private:
  // Higher runs first: any thread not starved before any starved one, then
  // by priority.
  using Rank = std::pair<bool, int64_t>;

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

  Rank rank(uint32_t thread) {
    int64_t p = priority(thread);
    return {!starved_.contains(thread), p};
  }

  void drop(uint32_t thread) {
    priority(thread);
    priorities_[thread] = --lowest_;
  }

  // Counts a scheduling point (a syscall exit of `running`, `ready`
  // waiting): a change point drops the running thread; starvation windows
  // open and close.
  void scheduling_point(uint32_t running, std::span<const uint32_t> ready) {
    ++points_;
    while (next_change_ < change_points_.size() && change_points_[next_change_] <= points_) {
      if (!options_.skipped_changes.contains(static_cast<uint32_t>(next_change_))) {
        drop(running);
      }
      ++next_change_;
    }
    advance_starvation(1);
    if (below(kStarveOneIn) == 0) {
      size_t pick = below(ready.size() + 1);
      uint32_t victim = pick == ready.size() ? running : ready[pick];
      if (!starved_.contains(victim)) {
        uint64_t length = kStarveMinPoints + below(kStarveMaxPoints - kStarveMinPoints);
        if (!options_.skipped_starvations.contains(starvations_++)) {
          starved_[victim] = {starve_clock_ + length, priority(victim)};
          drop(victim);
        }
      }
    }
  }

  // Moves the starvation clock on; a window that ran out gives its thread
  // its priority back.
  void advance_starvation(uint64_t points) {
    starve_clock_ += points;
    for (auto it = starved_.begin(); it != starved_.end();) {
      if (starve_clock_ >= it->second.until) {
        priorities_[it->first] = it->second.restored;
        it = starved_.erase(it);
      } else {
        ++it;
      }
    }
  }

  static constexpr int64_t kFirstInitial = int64_t{1} << 32;
  static constexpr uint64_t kInitialRange = uint64_t{1} << 30;

  struct Starvation {
    uint64_t until = 0;  // on the starvation clock
    int64_t restored = 0;
  };

  ChaosOptions options_;
  std::mt19937_64 random_;
  std::chrono::milliseconds slice_;
  std::map<uint32_t, int64_t> priorities_;  // thread index -> priority
  std::vector<uint64_t> change_points_;
  size_t next_change_ = 0;
  uint64_t points_ = 0;  // syscall exits seen
  int64_t lowest_ = kFirstInitial;  // dropped threads go below this, each lower
  // Starvation windows: the clock counts points and preemptions.
  std::map<uint32_t, Starvation> starved_;
  uint64_t starve_clock_ = 0;
  uint32_t starvations_ = 0;  // windows drawn so far, skipped ones included
};

}  // namespace

std::unique_ptr<SchedulingPolicy> make_chaos_policy(const ChaosOptions& options) {
  return std::make_unique<ChaosPolicy>(options);
}

}  // namespace repro::tracer
