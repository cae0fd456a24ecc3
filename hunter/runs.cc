#include "hunter/runs.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

extern char** environ;

namespace repro::hunter {
namespace {

// The first line of a run's stderr file that starts with `prefix`, or "".
std::string line_starting(const std::string& err_file, const std::string& prefix) {
  std::istringstream lines(read_file(err_file));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix)) {
      return line;
    }
  }
  return "";
}

// The program's output in a run's files: repro's own lines left out.
std::string program_output(const std::string& out, const std::string& err) {
  std::string output = read_file(out);
  std::istringstream lines(read_file(err));
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("repro: ")) {
      output += line + "\n";
    }
  }
  return output;
}

std::string join_numbers(const std::set<uint32_t>& numbers) {
  std::string text;
  for (uint32_t number : numbers) {
    text += fmt::format("{}{}", text.empty() ? "" : ",", number);
  }
  return text;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return WEXITSTATUS(wait_status);
  }
  return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : 1;
}

Result<pid_t> spawn(const std::vector<std::string>& args, const std::string& out,
                    const std::string& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // The program's output is as private as its trace.
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
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

Result<int> wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return Status::from_errno(errno, "waitpid");
    }
  }
  return status;
}

std::vector<std::string> record_args(const ChaosRun& run) {
  std::vector<std::string> args = {run.repro_path, "record", "--chaos", "--seed",
                                   std::to_string(run.seed), "--depth", std::to_string(run.depth),
                                   "--points", std::to_string(run.points),
                                   // Processes left running are not what a hunt is after.
                                   "--linger", "1", "-o", run.dir};
  if (!run.skipped_changes.empty()) {
    args.insert(args.end(), {"--skip-changes", join_numbers(run.skipped_changes)});
  }
  if (!run.skipped_starvations.empty()) {
    args.insert(args.end(), {"--skip-starvations", join_numbers(run.skipped_starvations)});
  }
  args.push_back("--");
  args.insert(args.end(), run.argv.begin(), run.argv.end());
  return args;
}

RunResult read_result(const std::string& dir, int wait_status, bool timed_out) {
  RunResult result;
  result.timed_out = timed_out;
  result.shell_status = shell_status(wait_status);
  result.output = program_output(dir + ".out", dir + ".err");
  // record's "repro: deadlock: ...", replay's "repro: deadlock, as recorded: ...".
  result.deadlocked = !line_starting(dir + ".err", "repro: deadlock").empty();
  return result;
}

std::string repro_error(const std::string& err_file) {
  constexpr std::string_view kPrefix = "repro: error: ";
  std::string line = line_starting(err_file, std::string(kPrefix));
  return line.empty() ? line : line.substr(kPrefix.size());
}

bool chaos_decisions(const std::string& err_file, uint32_t* changes, uint32_t* starvations) {
  std::string line = line_starting(err_file, "repro: chaos: ");
  return !line.empty() && std::sscanf(line.c_str(), "repro: chaos: %u change point%*s %u", changes,
                                      starvations) == 2;
}

void remove_run(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::remove(dir + ".out", ec);
  std::filesystem::remove(dir + ".err", ec);
}

Status move_run(const std::string& dir, const std::string& to) {
  remove_run(to);
  for (const char* suffix : {"", ".out", ".err"}) {
    std::error_code ec;
    std::filesystem::rename(dir + suffix, to + suffix, ec);
    if (ec) {
      return Status::error(StatusCode::kIoError,
                           fmt::format("renaming {}{}: {}", dir, suffix, ec.message()));
    }
  }
  return Status::ok();
}

Result<RunResult> replay_once(const std::string& repro_path, const std::string& trace,
                              bool timed_out) {
  std::vector<std::string> args = {repro_path, "replay"};
  if (timed_out) {
    args.push_back("--allow-incomplete");
  }
  args.push_back(trace);
  std::string files = trace + ".replay";
  REPRO_ASSIGN_OR_RETURN(pid_t replay, spawn(args, files + ".out", files + ".err"));
  REPRO_ASSIGN_OR_RETURN(int status, wait_for(replay));
  return read_result(files, status, timed_out);
}

}  // namespace repro::hunter
