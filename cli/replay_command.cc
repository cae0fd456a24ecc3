// `repro replay [TRACE]`: re-executes a recorded trace exactly.

#include <fmt/core.h>

#include "cli/command.h"
#include "cli/event_printer.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"
#include "replayer/replay_session.h"

namespace repro::cli {

int shell_status(int wait_status);  // record_command.cc

namespace {

class ReplayCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("trace", trace_, "trace directory (default: the latest trace)");
    sub->add_flag("--events", print_events_, "print each event to stderr as it is replayed");
    sub->add_flag("--allow-incomplete", allow_incomplete_,
                  "replay the recorded part of a trace whose recording did not finish");
    sub->add_flag("--allow-cpu-mismatch", allow_cpu_mismatch_,
                  "replay a trace recorded on a different CPU (warns; may diverge)");
    sub->add_option("--stop-at", stop_at_,
                    "stop after event N (numbered as in `repro dump`), print where each thread "
                    "stands with its backtrace, and end the program");
    sub->footer(
        "The program's output is printed from the trace; nothing outside the replay is\n"
        "touched. repro exits with the program's recorded status, or 75 with a\n"
        "divergence report if the program stops following the trace.\n"
        "The program runs with no network and the file system read-only (but replay's\n"
        "scratch directory) where the host allows it (see 'repro doctor');\n"
        "REPRO_REPLAY_ISOLATION=auto|namespace|off in the environment chooses.");
  }

  int run() override {
    auto dir = resolve_trace_dir(trace_);
    if (!dir.is_ok()) {
      return report_error(dir.status());
    }
    replayer::ReplayOptions options;
    options.trace_dir = *dir;
    options.allow_incomplete = allow_incomplete_;
    options.allow_cpu_mismatch = allow_cpu_mismatch_;
    options.stop_after_event = stop_at_;
    options.on_warning = [](const std::string& text) {
      fmt::print(stderr, "repro: warning: {}\n", text);
    };
    if (print_events_) {
      options.on_event = [](uint64_t index, const format::Event& event) {
        fmt::print(stderr, "{}\n", describe_event(index, event));
      };
    }
    auto session = replayer::ReplaySession::open(options);
    if (!session.is_ok()) {
      return report_error(session.status().context(fmt::format("replaying '{}'", *dir)));
    }
    auto outcome = (*session)->run();
    if (!outcome.is_ok()) {
      int code = report_error(outcome.status());
      session->reset();
      return code;
    }
    session->reset();
    if (stop_at_) {
      if (outcome->stopped_at.empty()) {
        fmt::print(stderr, "repro: error: the trace has {} events, none numbered {}\n",
                   outcome->event_count, *stop_at_);
        return kExitUsage;
      }
      fmt::print(stderr, "{}", prefix_lines("repro: ", fmt::format("stopped after event #{}:\n{}",
                                                                   *stop_at_, outcome->stopped_at)));
      return kExitOk;
    }
    if (!outcome->deadlock.empty()) {
      fmt::print(stderr, "{}",
                 prefix_lines("repro: ", "deadlock, as recorded: " + outcome->deadlock));
      return kExitDeadlock;
    }
    return shell_status(outcome->wait_status);
  }

 private:
  std::string trace_;
  bool print_events_ = false;
  std::optional<uint64_t> stop_at_;
  bool allow_incomplete_ = false;
  bool allow_cpu_mismatch_ = false;
};

}  // namespace

std::unique_ptr<Command> make_replay_command() { return std::make_unique<ReplayCommand>(); }

}  // namespace repro::cli
