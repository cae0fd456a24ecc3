// `repro hunt [-n RUNS] [-j JOBS] [--until TRIGGER]... [--keep-going] -- PROG [ARGS...]`:
// records PROG under the chaos scheduler, a new seed each run, until a
// trigger fires; keeps and confirms that trace (with --keep-going: every
// failing trace in RUNS).

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/hunt_setup.h"
#include "core/os/spawn.h"
#include "hunter/hunt.h"

namespace repro::cli {
namespace {

class HuntCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("-n,--runs", runs_, "record at most this many times")
        ->capture_default_str()
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
    sub->add_option("-j,--jobs", jobs_, "recordings at once (default: the number of CPUs)")
        ->check(CLI::Range(1u, 1024u));
    sub->add_option("--until", until_,
                    "what counts as the failure, repeatable: exit (non-zero status, the "
                    "default), exit:N, signal[:NAME], output:REGEX, deadlock, timeout:SECS");
    sub->add_option("--depth", depth_, "the chaos policy's depth (see record --depth)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    sub->add_option("--points", points_,
                    "spread change points over this many syscall exits (default: as many as a "
                    "first plain recording makes)")
        ->check(CLI::Range(1u, 100000000u));
    sub->add_option("--seed", seed_, "the first seed (default: a random one)");
    sub->add_option("--shard", shard_,
                    "K/N: take every N-th seed starting at the K-th, so N machines share a hunt");
    sub->add_flag("--keep-going", keep_going_,
                  "do not stop at the first failure: make all RUNS recordings and keep every "
                  "failing trace");
    sub->add_flag("--no-shrink", no_shrink_,
                  "keep the caught schedule as it is: do not look for a smaller one that still "
                  "fails, nor name the racing pair");
    sub->add_option("-o,--output", output_, "directory for the traces")->capture_default_str();
    sub->add_option("program", argv_, "the program and its arguments (after --)")->required();
    sub->footer(
        "Exit status: 0 when a failure was caught (its trace is kept and replayed once to\n"
        "confirm it; with --keep-going, at least one), 1 when none was in RUNS recordings,\n"
        "64 for a bad command line.");
  }

  int run() override {
    hunter::HuntOptions options;
    options.repro_path = own_path();
    options.argv = argv_;
    options.runs = runs_;
    options.jobs = jobs_ ? *jobs_ : std::max(1u, std::thread::hardware_concurrency());
    options.depth = depth_;
    options.points = points_.value_or(0);
    options.out_dir = output_;
    options.keep_going = keep_going_;
    options.shrink = !no_shrink_;
    for (const std::string& word : until_) {
      auto trigger = hunter::parse_trigger(word);
      if (!trigger.is_ok()) {
        return report_error(trigger.status());
      }
      options.triggers.push_back(std::move(*trigger));
    }
    if (!shard_.empty()) {
      unsigned k = 0, n = 0;
      char extra = 0;
      if (std::sscanf(shard_.c_str(), "%u/%u%c", &k, &n, &extra) != 2 || n == 0 || k >= n) {
        return report_error(Status::error(StatusCode::kInvalidArgument,
                                          "--shard: expected K/N with 0 <= K < N"));
      }
      options.shard = k;
      options.shards = n;
    }
    // A program that cannot be started would fail every run alike: say so
    // once, as `record` would, before the hunt begins.
    if (auto found = os::find_program(argv_[0]); !found.is_ok()) {
      return report_error(found.status());
    }
    options.first_seed = first_seed(seed_);
    ProgressLines progress("hunt");
    options.on_progress = progress.callback();
    fmt::print(stderr, "repro: hunting with seeds from {} (up to {} runs, {} at once) in {}\n",
               options.first_seed + options.shard, options.runs, options.jobs, output_);
    auto outcome = hunter::hunt(options);
    progress.finish();
    if (!outcome.is_ok()) {
      return report_error(outcome.status());
    }
    if (!outcome->caught()) {
      fmt::print(stderr, "repro: hunt: no failure in {} runs (change points over {} syscalls)\n",
                 outcome->runs, outcome->points);
      return 1;
    }
    if (keep_going_) {
      size_t failures = outcome->catches.size();
      fmt::print(stderr, "repro: hunt: {} failure{} in {} runs\n", failures,
                 failures == 1 ? "" : "s", outcome->runs);
      for (const hunter::CaughtFailure& caught : outcome->catches) {
        fmt::print(stderr, "repro: hunt: seed {}: `{}` (status {}), trace {}: {}\n", caught.seed,
                   caught.trigger, caught.status, caught.trace, caught.replay_summary);
      }
      return 0;
    }
    const hunter::CaughtFailure& caught = outcome->catches.front();
    fmt::print(stderr,
               "repro: hunt: caught `{}` (status {}) after {} runs, seed {}\n"
               "repro: hunt: trace {}\n"
               "repro: hunt: {}\n",
               caught.trigger, caught.status, outcome->runs, caught.seed, caught.trace,
               caught.replay_summary);
    fmt::print(stderr,
               "repro: hunt: again: repro record --chaos --seed {} --depth {} --points {} -- ...\n",
               caught.seed, depth_, outcome->points);
    if (caught.shrunk) {
      print_shrunk(*caught.shrunk);
    } else if (!caught.shrink_error.empty()) {
      fmt::print(stderr, "repro: hunt: warning: shrinking failed: {}\n", caught.shrink_error);
    }
    return 0;
  }

 private:
  static void print_shrunk(const hunter::ShrinkOutcome& shrunk) {
    // "no starvation window" / "none of its 2 change points" / "change point 1 of 2".
    auto listed = [](const std::vector<uint32_t>& needed, uint32_t of, const char* what) {
      if (of == 0) {
        return fmt::format("no {} (none came)", what);
      }
      if (needed.empty()) {
        return fmt::format("none of its {} {}{}", of, what, of == 1 ? "" : "s");
      }
      return fmt::format("{}{} {} of {}", what, needed.size() == 1 ? "" : "s",
                         fmt::join(needed, ", "), of);
    };
    fmt::print(stderr, "repro: hunt: shrinking ({} recording{}): the failure needs {} and {}\n",
               shrunk.recordings, shrunk.recordings == 1 ? "" : "s",
               listed(shrunk.needed_changes, shrunk.changes, "change point"),
               listed(shrunk.needed_starvations, shrunk.starvations, "starvation window"));
    if (!shrunk.smaller_trace.empty()) {
      fmt::print(stderr, "repro: hunt: smaller trace {}\n", shrunk.smaller_trace);
    }
    std::istringstream lines(shrunk.racing_pair);
    for (std::string line; std::getline(lines, line);) {
      fmt::print(stderr, "repro: hunt: {}\n", line);
    }
  }

  uint64_t runs_ = 1000;
  std::optional<unsigned> jobs_;
  std::vector<std::string> until_;
  uint32_t depth_ = 3;
  std::optional<uint32_t> points_;
  std::optional<uint64_t> seed_;
  std::string shard_;
  bool keep_going_ = false;
  bool no_shrink_ = false;
  std::string output_ = "repro-hunt";
  std::vector<std::string> argv_;
};

}  // namespace

std::unique_ptr<Command> make_hunt_command() { return std::make_unique<HuntCommand>(); }

}  // namespace repro::cli
