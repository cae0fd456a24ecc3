// `repro record [-o DIR] -- PROG [ARGS...]`: records PROG into a trace.

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/random.h>
#include <sys/wait.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>

#include "cli/command.h"
#include "cli/event_printer.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"
#include "core/format/env_redaction.h"
#include "tracer/record_session.h"

extern char** environ;

namespace repro::cli {

/// The shell-style exit status for a raw wait status: the exit code, or
/// 128+N for death by signal N.
int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return WEXITSTATUS(wait_status);
  }
  if (WIFSIGNALED(wait_status)) {
    return 128 + WTERMSIG(wait_status);
  }
  return kExitFailure;
}

namespace {

/// --linger's value: seconds (fractions allowed), or "inf" for no limit
/// (an empty optional inside). nullopt if it is neither.
std::optional<std::optional<std::chrono::milliseconds>> parse_linger(const std::string& text) {
  if (text == "inf") {
    return std::optional<std::chrono::milliseconds>();
  }
  try {
    size_t used = 0;
    double seconds = std::stod(text, &used);
    if (used != text.size() || !(seconds >= 0) || seconds > 1e6) {
      return std::nullopt;
    }
    return std::optional(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// A seed for a run whose user gave none (from the kernel's generator).
uint64_t random_seed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed) {
    seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  return seed;
}

/// Tells the user which variables --redact-env keeps out of the trace, so
/// that a pattern that matches nothing (a typo) does not go unnoticed.
void say_what_is_redacted(const std::vector<std::regex>& patterns) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  std::vector<format::RedactedVariable> redacted;
  (void)format::redact_environment(env, patterns, &redacted);
  if (redacted.empty()) {
    fmt::print(stderr, "repro: warning: --redact-env matches no environment variable\n");
    return;
  }
  std::vector<std::string> names;
  for (const format::RedactedVariable& variable : redacted) {
    names.push_back(variable.name);
  }
  fmt::print(stderr, "repro: leaving the values of {} out of the trace (--redact-env)\n",
             fmt::join(names, ", "));
}

class RecordCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("-o,--output", output_,
                    "trace directory to create (default: $REPRO_TRACE_DIR or "
                    "~/.local/share/repro, as <prog>-<n>, with a 'latest' link)");
    sub->add_option("--time-slice-ms", slice_ms_,
                    "how long a thread may run without a syscall while others wait")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    sub->add_flag("--no-pin", no_pin_, "do not bind repro and the program to one CPU");
    sub->add_flag("--no-fast-path", no_fast_path_,
                  "do not preload librepro_preload.so: every syscall stops at repro "
                  "(the fast path is off with --chaos anyway)");
    sub->add_option("--snapshot-budget-mib", snapshot_budget_mib_,
                    "MiB of memory page copies the trace may hold, so that a replay that "
                    "diverges in memory can show the recorded bytes (0: none)")
        ->capture_default_str()
        ->check(CLI::Range(0, 65536));
    sub->add_flag("--chaos", chaos_,
                  "schedule threads with seeded random priorities (PCT-style) instead of round "
                  "robin, to bring out orderings plain recording never shows");
    sub->add_option("--seed", seed_, "the chaos policy's seed (default: a random one, printed)")
        ->needs("--chaos");
    sub->add_option("--depth", depth_,
                    "the chaos policy's depth d: d - 1 priority change points per run")
        ->capture_default_str()
        ->check(CLI::Range(1, 100))
        ->needs("--chaos");
    sub->add_option("--points", points_,
                    "over how many scheduling points (syscall exits) the chaos policy spreads "
                    "its change points: about as many as a run of the program makes")
        ->capture_default_str()
        ->check(CLI::Range(1u, 100000000u))
        ->needs("--chaos");
    sub->add_option("--skip-changes", skipped_changes_,
                    "leave out these change points (0 is the first to come; comma-separated): "
                    "what a hunt's shrinking does")
        ->delimiter(',')
        ->needs("--chaos");
    sub->add_option("--skip-starvations", skipped_starvations_,
                    "leave out these starvation windows (0 is the first; comma-separated)")
        ->delimiter(',')
        ->needs("--chaos");
    sub->add_option("--linger", linger_,
                    "seconds to go on recording the processes the program leaves running "
                    "(daemons, background jobs) after its first process exits, before stopping "
                    "them with SIGKILL; 'inf' waits for them to exit")
        ->capture_default_str()
        ->check([](const std::string& value) { return parse_linger(value) ? "" : "expected seconds >= 0 or 'inf'"; });
    sub->add_option("--redact-env", redact_env_,
                    "leave the value of every environment variable whose NAME this ECMAScript "
                    "regex matches (anywhere, unless anchored: '^AWS_') out of the trace; "
                    "repeatable. The program still gets the real value; replay gives it filler "
                    "of the same length")
        ->check([](const std::string& value) -> std::string {
          try {
            std::regex pattern(value);
            return "";
          } catch (const std::regex_error& error) {
            return fmt::format("'{}' is not a valid regex: {}", value, error.what());
          }
        })
        ->allow_extra_args(false);  // one regex per --redact-env: the program follows
    sub->add_option("program", argv_, "the program and its arguments (after --)")->required();
    sub->footer(
        "repro prints the trace path on stderr and exits with the program's status\n"
        "(128+N if it died of signal N). The first SIGINT/SIGTERM goes to the program;\n"
        "a second one stops recording and leaves an incomplete but readable trace.\n"
        "REPRO_TSC=patch records rdtsc by patching it in the program's code even where\n"
        "the host could trap it (REPRO_TSC=trap insists on trapping; auto is the default).");
  }

  int run() override {
    std::string dir = output_;
    if (dir.empty()) {
      auto fresh = new_trace_dir(argv_[0]);
      if (!fresh.is_ok()) {
        return report_error(fresh.status());
      }
      dir = *fresh;
    }
    tracer::RecordOptions options;
    options.trace_dir = dir;
    options.argv = argv_;
    options.time_slice = std::chrono::milliseconds(slice_ms_);
    options.pin_to_one_cpu = !no_pin_;
    options.fast_path = !no_fast_path_;
    options.on_warning = [](const std::string& warning) {
      fmt::print(stderr, "repro: warning: {}\n", warning);
    };
    options.snapshot_budget_bytes = snapshot_budget_mib_ << 20;
    options.linger = *parse_linger(linger_);
    for (const std::string& pattern : redact_env_) {
      options.redact_env.emplace_back(pattern);  // valid: the option's check compiled it
    }
    if (!options.redact_env.empty()) {
      say_what_is_redacted(options.redact_env);
    }
    if (chaos_) {
      options.chaos = true;
      options.chaos_depth = depth_;
      options.chaos_points = points_;
      options.seed = seed_ ? *seed_ : random_seed();
      options.chaos_skipped_changes = {skipped_changes_.begin(), skipped_changes_.end()};
      options.chaos_skipped_starvations = {skipped_starvations_.begin(),
                                           skipped_starvations_.end()};
      fmt::print(stderr, "repro: chaos scheduling, seed {} (depth {})\n", options.seed, depth_);
    }
    options.on_notice = [](const std::string& notice) {
      fmt::print(stderr, "repro: {}\n", notice);
    };
    auto session = tracer::RecordSession::start(options);
    if (!session.is_ok()) {
      return report_error(session.status());
    }
    if (output_.empty()) {
      Status linked = update_latest_link(dir);
      if (!linked.is_ok()) {
        fmt::print(stderr, "repro: warning: {}\n", linked.message());
      }
    }
    fmt::print(stderr, "repro: recording to {}\n", dir);
    auto outcome = (*session)->run();
    session->reset();
    if (!outcome.is_ok()) {
      fmt::print(stderr, "repro: the trace in {} is incomplete\n", dir);
      return report_error(outcome.status());
    }
    if (chaos_ && !outcome->scheduler_decisions.empty()) {
      fmt::print(stderr, "repro: chaos: {}\n", outcome->scheduler_decisions);
    }
    if (outcome->interrupted) {
      fmt::print(stderr, "repro: interrupted; {} events kept in {} (incomplete)\n",
                 outcome->event_count, dir);
      return 130;
    }
    if (!outcome->deadlock.empty()) {
      fmt::print(stderr, "{}", prefix_lines("repro: ", "deadlock: " + outcome->deadlock));
      fmt::print(stderr, "repro: the program was ended; {} events recorded to {}\n",
                 outcome->event_count, dir);
      return kExitDeadlock;
    }
    std::string patched;
    if (outcome->tsc_mode == format::TscMode::kPatch) {
      patched = fmt::format(" (patching mode: {} rdtsc sites patched)", outcome->rdtsc_sites_patched);
    }
    fmt::print(stderr, "repro: recorded {} events to {}{}\n", outcome->event_count, dir, patched);
    return shell_status(outcome->wait_status);
  }

 private:
  std::string output_;
  int slice_ms_ = 50;
  bool no_pin_ = false;
  bool no_fast_path_ = false;
  uint64_t snapshot_budget_mib_ = tracer::kDefaultSnapshotBudgetBytes >> 20;
  std::string linger_ = "10";
  bool chaos_ = false;
  std::optional<uint64_t> seed_;
  uint32_t depth_ = 3;
  uint32_t points_ = tracer::ChaosOptions{}.expected_points;
  std::vector<uint32_t> skipped_changes_;
  std::vector<uint32_t> skipped_starvations_;
  std::vector<std::string> redact_env_;
  std::vector<std::string> argv_;
};

}  // namespace

std::unique_ptr<Command> make_record_command() { return std::make_unique<RecordCommand>(); }

}  // namespace repro::cli
