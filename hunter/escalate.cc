#include "hunter/escalate.h"

#include <fmt/core.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include <cerrno>

extern char** environ;

namespace repro::hunter {
namespace {

// The running command, for the signal handler; 0 when none.
volatile sig_atomic_t native_pid = 0;
volatile sig_atomic_t interrupted_by = 0;

void pass_on(int signal, siginfo_t* info, void* /*context*/) {
  interrupted_by = signal;
  // A terminal's ^C went to the whole foreground process group, the command
  // included: sending it again would make it a second ^C.
  if (native_pid > 0 && info->si_code != SI_KERNEL) {
    kill(native_pid, signal);
  }
}

// Sets the pass-on handler for `signal` unless it is ignored (a command
// started under nohup keeps ignoring it). Returns the old action.
struct sigaction catch_signal(int signal) {
  struct sigaction old = {};
  sigaction(signal, nullptr, &old);
  if (old.sa_handler != SIG_IGN) {
    struct sigaction action = {};
    action.sa_sigaction = pass_on;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
  }
  return old;
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

// Text for a GitHub Actions workflow command's message: %, CR and LF escaped.
std::string workflow_escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '%':
        escaped += "%25";
        break;
      case '\r':
        escaped += "%0D";
        break;
      case '\n':
        escaped += "%0A";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

std::string join(const std::vector<std::string>& words, const char* separator) {
  std::string joined;
  for (const std::string& word : words) {
    joined += (joined.empty() ? "" : separator) + word;
  }
  return joined;
}

}  // namespace

ProcessEnd ProcessEnd::from_wait_status(int wait_status) {
  ProcessEnd end;
  if (WIFSIGNALED(wait_status)) {
    end.signal = WTERMSIG(wait_status);
  } else {
    end.exit_code = WEXITSTATUS(wait_status);
  }
  return end;
}

std::string ProcessEnd::text() const {
  return signal != 0 ? fmt::format("killed by {}", signal_name(signal))
                     : fmt::format("exit status {}", exit_code);
}

Result<NativeRun> run_native(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "no command to run");
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  interrupted_by = 0;
  struct sigaction old_int = catch_signal(SIGINT);
  struct sigaction old_term = catch_signal(SIGTERM);
  auto restore = [&] {
    native_pid = 0;
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  };
  // exec() puts caught signals back to their default action in the child.
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (rc != 0) {
    restore();
    return Status::error(rc == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
                         fmt::format("starting {}: {}", argv[0], strerror(rc)));
  }
  native_pid = pid;
  if (interrupted_by != 0) {
    kill(pid, interrupted_by);  // it came before the handler knew the pid
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      int error = errno;
      restore();
      return Status::from_errno(error, "waiting for " + argv[0]);
    }
  }
  restore();
  NativeRun run;
  run.end = ProcessEnd::from_wait_status(status);
  run.interrupted_by = interrupted_by;
  return run;
}

std::string failure_trigger(const ProcessEnd& end) {
  return end.signal != 0 ? fmt::format("signal:{}", end.signal)
                         : fmt::format("exit:{}", end.exit_code);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& arg : argv) {
    bool plain = !arg.empty() && arg.find_first_not_of(
                                     "abcdefghijklmnopqrstuvwxyz"
                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      words.push_back(arg);
      continue;
    }
    std::string quoted = "'";
    for (char c : arg) {
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    words.push_back(quoted + "'");
  }
  return join(words, " ");
}

EscalationReport describe(const Escalation& escalation) {
  EscalationReport report;
  const std::string failed =
      fmt::format("`{}` failed ({})", escalation.command, escalation.native.text());
  const std::string wanted = join(escalation.triggers, ", ");
  if (!escalation.outcome) {
    std::string text = fmt::format("{}; hunting for `{}` under recording failed: {}", failed,
                                   wanted, escalation.hunt_error);
    report.lines.push_back(text);
    report.workflow_command = "::warning title=repro::" + workflow_escape(text);
    report.summary_line = "- repro ci: " + text;
    return report;
  }
  const HuntOutcome& outcome = *escalation.outcome;
  if (!outcome.caught()) {
    std::string text =
        fmt::format("{}; `{}` did not show in {} recordings under chaos scheduling, nothing kept",
                    failed, wanted, outcome.runs);
    report.lines.push_back(text);
    report.workflow_command = "::warning title=repro::" + workflow_escape(text);
    report.summary_line = "- repro ci: " + text;
    return report;
  }
  const CaughtFailure& caught = outcome.catches.front();
  report.captured = true;
  std::string text = fmt::format("{}; caught `{}` after {} recording{} (seed {}): trace {}", failed,
                                 caught.trigger, outcome.runs, outcome.runs == 1 ? "" : "s",
                                 caught.seed, caught.trace);
  report.lines.push_back(text);
  report.lines.push_back(caught.replay_summary);
  report.lines.push_back(fmt::format("replay it with: repro replay {}", caught.trace));
  report.workflow_command = "::notice title=repro::" +
                            workflow_escape(fmt::format("{}; {}; replay it with: repro replay {}",
                                                        text, caught.replay_summary, caught.trace));
  report.summary_line = fmt::format("- repro ci: {}; {}; replay it with `repro replay {}`", text,
                                    caught.replay_summary, caught.trace);
  return report;
}

}  // namespace repro::hunter
