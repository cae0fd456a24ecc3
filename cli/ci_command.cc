// `repro ci [-n RUNS] [-j JOBS] [--until TRIGGER]... [-o DIR] -- CMD [ARGS...]`:
// runs CMD natively; only when it fails, hunts for the same failure under
// chaos recording and keeps its trace. Exits with CMD's own status.

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/hunt_setup.h"
#include "hunter/escalate.h"
#include "hunter/hunt.h"

namespace repro::cli {
namespace {

// The status a shell gives a command it cannot find or start.
constexpr int kExitNotStarted = 127;

class CiCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("-n,--runs", runs_, "when CMD fails: record at most this many times")
        ->capture_default_str()
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
    sub->add_option("-j,--jobs", jobs_, "recordings at once (default: the number of CPUs)")
        ->check(CLI::Range(1u, 1024u));
    sub->add_option("--until", until_,
                    "what counts as the failure when hunting, repeatable (default: the status "
                    "CMD failed with, exit:N or signal:N); as for hunt");
    sub->add_option("--seed", seed_, "the hunt's first seed (default: a random one)");
    sub->add_option("-o,--output", output_, "directory for the traces, created only when CMD fails")
        ->capture_default_str();
    sub->add_option("command", argv_, "the command and its arguments (after --)")->required();
    sub->footer(
        "Runs CMD natively, untraced. If it succeeds, that is all. If it fails, records it\n"
        "again and again under chaos scheduling (as `repro hunt`) until it fails the same\n"
        "way, keeps that trace in DIR and replays it once to confirm.\n"
        "On GitHub Actions (GITHUB_ACTIONS=true) it also prints a ::notice (trace kept) or\n"
        "::warning workflow command and appends a line to $GITHUB_STEP_SUMMARY.\n"
        "Exit status: CMD's own (128+N if it died of signal N), whatever the hunt found;\n"
        "127 if CMD cannot be started, 64 for a bad command line.");
  }

  int run() override {
    std::vector<std::string> triggers = until_;
    std::vector<hunter::Trigger> parsed;
    for (const std::string& word : triggers) {
      auto trigger = hunter::parse_trigger(word);
      if (!trigger.is_ok()) {
        return report_error(trigger.status());
      }
      parsed.push_back(std::move(*trigger));
    }
    auto native = hunter::run_native(argv_);
    if (!native.is_ok()) {
      report_error(native.status());
      return kExitNotStarted;
    }
    const hunter::ProcessEnd end = native->end;
    if (!end.failed()) {
      return kExitOk;
    }
    const std::string command = hunter::command_line(argv_);
    if (native->interrupted_by != 0) {
      fmt::print(stderr, "repro: ci: interrupted: not hunting the failure of `{}` ({})\n", command,
                 end.text());
      return end.shell_status();
    }
    if (triggers.empty()) {
      triggers.push_back(hunter::failure_trigger(end));
      auto trigger = hunter::parse_trigger(triggers.back());
      if (!trigger.is_ok()) {
        return report_error(trigger.status());
      }
      parsed.push_back(std::move(*trigger));
    }

    hunter::HuntOptions options;
    options.repro_path = own_path();
    options.argv = argv_;
    options.runs = runs_;
    options.jobs = jobs_ ? *jobs_ : std::max(1u, std::thread::hardware_concurrency());
    options.out_dir = output_;
    options.triggers = std::move(parsed);
    options.first_seed = first_seed(seed_);
    ProgressLines progress("ci");
    options.on_progress = progress.callback();
    std::string wanted;
    for (const std::string& word : triggers) {
      wanted += (wanted.empty() ? "" : ", ") + word;
    }
    fmt::print(stderr,
               "repro: ci: `{}` failed ({}): recording it under chaos scheduling until `{}` "
               "(up to {} runs, {} at once, seeds from {}) in {}\n",
               command, end.text(), wanted, options.runs, options.jobs, options.first_seed,
               output_);

    hunter::Escalation escalation;
    escalation.command = command;
    escalation.native = end;
    escalation.triggers = triggers;
    escalation.runs_allowed = runs_;
    auto outcome = hunter::hunt(options);
    progress.finish();
    if (outcome.is_ok()) {
      escalation.outcome = *outcome;
    } else {
      escalation.hunt_error = outcome.status().message();
    }
    hunter::EscalationReport report = hunter::describe(escalation);
    for (const std::string& line : report.lines) {
      fmt::print(stderr, "repro: ci: {}\n", line);
    }
    publish_on_github(report);
    return end.shell_status();
  }

 private:
  // On GitHub Actions: the workflow command on stdout (the runner reads it
  // there), and the summary line appended to the step's summary file.
  static void publish_on_github(const hunter::EscalationReport& report) {
    const char* actions = std::getenv("GITHUB_ACTIONS");
    if (actions == nullptr || std::string(actions) != "true") {
      return;
    }
    fmt::print(stdout, "{}\n", report.workflow_command);
    std::fflush(stdout);
    const char* summary = std::getenv("GITHUB_STEP_SUMMARY");
    if (summary == nullptr || *summary == '\0') {
      return;
    }
    std::ofstream file(summary, std::ios::app);
    file << report.summary_line << "\n";
    if (!file.flush()) {
      fmt::print(stderr, "repro: ci: cannot append to $GITHUB_STEP_SUMMARY ({})\n", summary);
    }
  }

  uint64_t runs_ = 100;
  std::optional<unsigned> jobs_;
  std::vector<std::string> until_;
  std::optional<uint64_t> seed_;
  std::string output_ = "repro-ci";
  std::vector<std::string> argv_;
};

}  // namespace

std::unique_ptr<Command> make_ci_command() { return std::make_unique<CiCommand>(); }

}  // namespace repro::cli
