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
  std::optional<Run> caught;
  RunResult caught_result;

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

  while (!caught && (launched < options.runs || !active.empty())) {
    while (!caught && active.size() < std::max(options.jobs, 1u) && launched < options.runs) {
      REPRO_RETURN_IF_ERROR(launch());
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
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
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
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
    if (const Trigger* trigger = fired(triggers, result)) {
      caught = run;
      caught_result = result;
      outcome.trigger = trigger->text;
    } else {
      remove_run(run.dir);
    }
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    progress(fmt::format("{} runs, {:.1f} runs/s, {} failure{}, {:.0f} s", finished,
                         elapsed > 0 ? finished / elapsed : 0.0, caught ? 1 : 0,
                         caught ? "" : "s", elapsed),
             true);
  }
  // Stop the runs still going: only the failing one is kept.
  for (const auto& [pid, run] : active) {
    kill(pid, SIGKILL);
  }
  for (const auto& [pid, run] : active) {
    (void)wait_for(pid);
    remove_run(run.dir);
  }
  outcome.runs = finished;
  if (!caught) {
    return outcome;
  }
  outcome.caught = true;
  outcome.seed = caught->seed;
  outcome.trace = caught->dir;
  outcome.status = caught_result.shell_status;

  // Replay once: the trace must fail the same way.
  std::vector<std::string> args = {options.repro_path, "replay"};
  if (caught_result.timed_out) {
    args.push_back("--allow-incomplete");
  }
  args.push_back(caught->dir);
  std::string replay_out = caught->dir + ".replay.out";
  std::string replay_err = caught->dir + ".replay.err";
  REPRO_ASSIGN_OR_RETURN(pid_t replay, spawn(args, replay_out, replay_err));
  REPRO_ASSIGN_OR_RETURN(int replay_status, wait_for(replay));
  RunResult replayed;
  replayed.shell_status = shell_status(replay_status);
  replayed.timed_out = caught_result.timed_out;
  replayed.output = program_output(replay_out, replay_err);
  replayed.deadlocked = ended_in_deadlock(replay_err);
  const Trigger* again = fired(triggers, replayed);
  outcome.reproduced = again != nullptr && again->text == outcome.trigger &&
                       (caught_result.timed_out || replayed.shell_status == outcome.status);
  outcome.replay_summary =
      outcome.reproduced
          ? fmt::format("the replay fails the same way (status {})", replayed.shell_status)
          : fmt::format("the replay did not fail the same way (status {}; see {})",
                        replayed.shell_status, replay_err);
  return outcome;
}

}  // namespace repro::hunter
