#include "hunter/hunt.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/format/event.h"
#include "core/format/trace_reader.h"

extern char** environ;

namespace repro::hunter {
namespace {

using Clock = std::chrono::steady_clock;

// The shell-style status of a raw wait status.
int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return WEXITSTATUS(wait_status);
  }
  return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : 1;
}

// Starts `args` with stdin from /dev/null and stdout, stderr to the files.
Result<pid_t> spawn(const std::vector<std::string>& args, const std::string& out,
                    const std::string& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const std::string& arg : args) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return Status::from_errno(rc, "starting " + args[0]);
  }
  return pid;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The program's output in a run's files: repro's own lines left out.
std::string program_output(const std::string& out, const std::string& err) {
  std::string output = read_all(out);
  std::istringstream lines(read_all(err));
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("repro: ")) {
      output += line + "\n";
    }
  }
  return output;
}

// Whether a run's stderr has repro's deadlock report (record's
// "repro: deadlock: ...", replay's "repro: deadlock, as recorded: ...").
bool ended_in_deadlock(const std::string& err) {
  std::istringstream lines(read_all(err));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("repro: deadlock")) {
      return true;
    }
  }
  return false;
}

// A line `repro: error: ...` in a run's stderr: repro itself failed.
std::string repro_error(const std::string& err) {
  std::istringstream lines(read_all(err));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("repro: error: ")) {
      return line;
    }
  }
  return "";
}

void remove_run(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::remove(dir + ".out", ec);
  std::filesystem::remove(dir + ".err", ec);
}

Result<int> wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return Status::from_errno(errno, "waitpid");
    }
  }
  return status;
}

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
  std::vector<std::string> args = {repro_path, "replay"};
  if (result.timed_out) {
    args.push_back("--allow-incomplete");
  }
  args.push_back(run.dir);
  std::string replay_out = run.dir + ".replay.out";
  std::string replay_err = run.dir + ".replay.err";
  REPRO_ASSIGN_OR_RETURN(pid_t replay, spawn(args, replay_out, replay_err));
  REPRO_ASSIGN_OR_RETURN(int replay_status, wait_for(replay));
  RunResult replayed;
  replayed.shell_status = shell_status(replay_status);
  replayed.timed_out = result.timed_out;
  replayed.output = program_output(replay_out, replay_err);
  replayed.deadlocked = ended_in_deadlock(replay_err);
  const Trigger* again = fired(triggers, replayed);
  caught.reproduced = again != nullptr && again->text == caught.trigger &&
                      (result.timed_out || replayed.shell_status == caught.status);
  caught.replay_summary =
      caught.reproduced
          ? fmt::format("the replay fails the same way (status {})", replayed.shell_status)
          : fmt::format("the replay did not fail the same way (status {}; see {})",
                        replayed.shell_status, replay_err);
  return caught;
}

}  // namespace

Result<HuntOutcome> hunt(const HuntOptions& options) {
  if (options.argv.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "no program to hunt");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
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
    std::vector<std::string> args = {options.repro_path, "record", "-o", dir, "--"};
    args.insert(args.end(), options.argv.begin(), options.argv.end());
    REPRO_ASSIGN_OR_RETURN(pid_t pid, spawn(args, dir + ".out", dir + ".err"));
    REPRO_ASSIGN_OR_RETURN(int status, wait_for(pid));
    (void)status;
    if (std::string error = repro_error(dir + ".err"); !error.empty()) {
      remove_run(dir);
      return Status::error(StatusCode::kInvalidArgument, "recording the program: " + error);
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
    std::vector<std::string> args = {options.repro_path,
                                     "record",
                                     "--chaos",
                                     "--seed",
                                     std::to_string(run.seed),
                                     "--depth",
                                     std::to_string(options.depth),
                                     "--points",
                                     std::to_string(outcome.points),
                                     "--linger",
                                     "1",
                                     "-o",
                                     run.dir,
                                     "--"};
    args.insert(args.end(), options.argv.begin(), options.argv.end());
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
    RunResult result;
    result.timed_out = run.interrupts > 0;
    result.shell_status = shell_status(status);
    if (std::string error = repro_error(run.dir + ".err"); !error.empty() && !result.timed_out) {
      return Status::error(StatusCode::kIoError,
                           fmt::format("recording seed {}: {}", run.seed, error));
    }
    result.output = program_output(run.dir + ".out", run.dir + ".err");
    result.deadlocked = ended_in_deadlock(run.dir + ".err");
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
    outcome.catches.push_back(std::move(caught));
  }
  return outcome;
}

}  // namespace repro::hunter
