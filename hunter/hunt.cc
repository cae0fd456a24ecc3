#include "hunter/hunt.h"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <thread>

#include "core/format/event.h"
#include "core/format/trace_reader.h"
#include "hunter/runs.h"

namespace repro::hunter {
namespace {

using Clock = std::chrono::steady_clock;

// Syscall exits in a trace made while another thread was alive: about the
// chaos policy's scheduling points, which are syscall exits while another
// thread is ready. (A single-threaded start-up would spread the change
// points over a stretch where they change nothing.)
Result<uint32_t> count_syscalls(const std::string& dir) {
  REPRO_ASSIGN_OR_RETURN(std::unique_ptr<format::TraceReader> reader,
                         format::TraceReader::open(dir));
  uint32_t count = 0;
  int64_t live = 0;
  format::Event event;
  while (true) {
    REPRO_ASSIGN_OR_RETURN(bool more, reader->next(&event));
    if (!more) {
      return count;
    }
    live += event.kind == format::EventKind::kThreadStart;
    live -= event.kind == format::EventKind::kThreadExit;
    count += event.kind == format::EventKind::kSyscall && live > 1;
  }
}

struct Run {
  uint64_t seed = 0;
  std::string dir;
  Clock::time_point started;
  int interrupts = 0;  // SIGINTs sent for a timeout
};

// Replays a failing run's trace once: it must fail the same way.
Result<CaughtFailure> confirm(const std::string& repro_path, const std::vector<Trigger>& triggers,
                              const Run& run, const RunResult& result) {
  CaughtFailure caught;
  caught.seed = run.seed;
  caught.trace = run.dir;
  caught.trigger = fired(triggers, result)->text;
  caught.status = result.shell_status;
  REPRO_ASSIGN_OR_RETURN(RunResult replayed, replay_once(repro_path, run.dir, result.timed_out));
  const Trigger* again = fired(triggers, replayed);
  caught.reproduced = again != nullptr && again->text == caught.trigger &&
                      (result.timed_out || replayed.shell_status == caught.status);
  caught.replay_summary =
      caught.reproduced
          ? fmt::format("the replay fails the same way (status {})", replayed.shell_status)
          : fmt::format("the replay did not fail the same way (status {}; see {}.replay.err)",
                        replayed.shell_status, run.dir);
  return caught;
}

}  // namespace

Result<HuntOutcome> hunt(const HuntOptions& options) {
  if (options.argv.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "no program to hunt");
  }
  std::error_code ec;
  if (std::filesystem::create_directories(options.out_dir, ec)) {
    // Made here: private, like the traces it will hold (an existing one is left as it is).
    std::filesystem::permissions(options.out_dir, std::filesystem::perms::owner_all, ec);
  }
  if (ec) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("creating {}: {}", options.out_dir, ec.message()));
  }
  std::vector<Trigger> triggers = options.triggers;
  if (triggers.empty()) {
    REPRO_ASSIGN_OR_RETURN(Trigger exit, parse_trigger("exit"));
    triggers.push_back(std::move(exit));
  }
  std::optional<double> timeout;
  for (const Trigger& trigger : triggers) {
    if (trigger.kind == Trigger::Kind::kTimeout) {
      timeout = timeout ? std::min(*timeout, trigger.seconds) : trigger.seconds;
    }
  }
  auto progress = [&](const std::string& line, bool live) {
    if (options.on_progress) {
      options.on_progress(line, live);
    }
  };

  HuntOutcome outcome;
  outcome.points = options.points;
  if (outcome.points == 0) {
    // One plain recording says how many scheduling points a run has.
    std::string dir = options.out_dir + "/measure";
    remove_run(dir);
    // Without the fast path, as the chaos runs record: its syscalls are
    // scheduling points there.
    std::vector<std::string> args = {options.repro_path, "record", "--no-fast-path", "-o", dir,
                                     "--"};
    args.insert(args.end(), options.argv.begin(), options.argv.end());
    REPRO_ASSIGN_OR_RETURN(pid_t pid, spawn(args, dir + ".out", dir + ".err"));
    REPRO_ASSIGN_OR_RETURN(int status, wait_for(pid));
    if (std::string error = repro_error(dir + ".err"); !error.empty()) {
      remove_run(dir);
      // Its own exit status says whose fault: 64 a bad command line, else
      // the environment.
      bool usage = WIFEXITED(status) && WEXITSTATUS(status) == 64;
      return Status::error(usage ? StatusCode::kInvalidArgument : StatusCode::kIoError,
                           "recording the program: " + error);
    }
    auto counted = count_syscalls(dir);
    remove_run(dir);
    REPRO_RETURN_IF_ERROR(counted.status());
    outcome.points = std::max<uint32_t>(*counted, 10);
    progress(fmt::format("a plain recording made {} syscalls beside other threads: change "
                         "points are spread over that many",
                         *counted),
             false);
  }

  std::map<pid_t, Run> active;
  uint64_t launched = 0;
  uint64_t finished = 0;
  const Clock::time_point start = Clock::now();
  std::vector<std::pair<Run, RunResult>> failing;
  auto done = [&] { return !options.keep_going && !failing.empty(); };

  auto launch = [&]() -> Status {
    Run run;
    run.seed = options.first_seed + options.shard + launched * options.shards;
    run.dir = fmt::format("{}/seed-{}", options.out_dir, run.seed);
    remove_run(run.dir);
    std::vector<std::string> args = record_args({.repro_path = options.repro_path,
                                                 .argv = options.argv,
                                                 .seed = run.seed,
                                                 .depth = options.depth,
                                                 .points = outcome.points,
                                                 .dir = run.dir});
    REPRO_ASSIGN_OR_RETURN(pid_t pid, spawn(args, run.dir + ".out", run.dir + ".err"));
    run.started = Clock::now();
    active[pid] = run;
    ++launched;
    return Status::ok();
  };

  while (!done() && (launched < options.runs || !active.empty())) {
    while (!done() && active.size() < std::max(options.jobs, 1u) && launched < options.runs) {
      REPRO_RETURN_IF_ERROR(launch());
    }
    int status = 0;
    // Without a timeout to watch, block until a run ends: polling would add
    // up to a poll period to every run.
    pid_t pid = waitpid(-1, &status, timeout ? WNOHANG : 0);
    if (pid < 0 && errno != EINTR && errno != ECHILD) {
      return Status::from_errno(errno, "waitpid");
    }
    if (pid <= 0) {
      if (timeout) {
        for (auto& [child, run] : active) {
          double ran = std::chrono::duration<double>(Clock::now() - run.started).count();
          if (ran >= *timeout + run.interrupts * 0.2 && run.interrupts < 2) {
            kill(child, SIGINT);  // twice: the second ends the recording, trace kept
            ++run.interrupts;
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      continue;
    }
    auto it = active.find(pid);
    if (it == active.end()) {
      continue;
    }
    Run run = it->second;
    active.erase(it);
    ++finished;
    RunResult result = read_result(run.dir, status, run.interrupts > 0);
    if (std::string error = repro_error(run.dir + ".err"); !error.empty() && !result.timed_out) {
      return Status::error(StatusCode::kIoError,
                           fmt::format("recording seed {}: {}", run.seed, error));
    }
    if (fired(triggers, result) != nullptr) {
      failing.emplace_back(run, result);
    } else {
      remove_run(run.dir);
    }
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    progress(fmt::format("{} runs, {:.1f} runs/s, {} failure{}, {:.0f} s", finished,
                         elapsed > 0 ? finished / elapsed : 0.0, failing.size(),
                         failing.size() == 1 ? "" : "s", elapsed),
             true);
  }
  // Stop the runs still going (a failure ended the hunt): only failing runs are kept.
  for (const auto& [pid, run] : active) {
    kill(pid, SIGKILL);
  }
  for (const auto& [pid, run] : active) {
    (void)wait_for(pid);
    remove_run(run.dir);
  }
  outcome.runs = finished;
  for (const auto& [run, result] : failing) {
    REPRO_ASSIGN_OR_RETURN(CaughtFailure caught,
                           confirm(options.repro_path, triggers, run, result));
    if (options.shrink && caught.reproduced && !result.timed_out) {
      progress(fmt::format("shrinking the schedule of seed {}", caught.seed), false);
      auto shrunk = shrink({.repro_path = options.repro_path,
                            .argv = options.argv,
                            .triggers = triggers,
                            .trigger = caught.trigger,
                            .status = caught.status,
                            .seed = caught.seed,
                            .depth = options.depth,
                            .points = outcome.points,
                            .trace = caught.trace});
      if (shrunk.is_ok()) {
        caught.shrunk = std::move(*shrunk);
      } else {
        caught.shrink_error = shrunk.status().message();
      }
    }
    outcome.catches.push_back(std::move(caught));
  }
  return outcome;
}

}  // namespace repro::hunter
