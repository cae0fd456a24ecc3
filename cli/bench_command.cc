// `repro bench [-n RUNS] [--json] -- CMD [ARGS...]`: what recording costs
// CMD: native, recorded and replayed runs side by side, medians and ratios.

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/hunt_setup.h"
#include "hunter/cost.h"

namespace repro::cli {
namespace {

class BenchCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("-n,--runs", runs_, "native, recorded and replayed runs of each")
        ->capture_default_str()
        ->check(CLI::Range(1u, 10000u));
    sub->add_flag("--json", json_, "print the figures as one JSON object on stdout");
    sub->add_option("command", argv_, "the command and its arguments (after --)")->required();
    sub->footer(
        "Runs CMD natively, under `repro record` and under `repro replay`, RUNS times each,\n"
        "alternating, its output thrown away; prints the medians, their ratios to native,\n"
        "and the trace's size (MB, and MB per second of native run time). A recording or\n"
        "replay that ends otherwise than the native run did is an error (status 1).");
  }

  int run() override {
    hunter::CostOptions options;
    options.repro_path = own_path();
    options.argv = argv_;
    options.runs = runs_;
    std::error_code ec;
    std::string scratch = (std::filesystem::temp_directory_path(ec) / "repro-bench-XXXXXX").string();
    if (mkdtemp(scratch.data()) == nullptr) {
      return report_error(Status::from_errno(errno, "making a scratch directory"));
    }
    options.work_dir = scratch;
    ProgressLines progress("bench");
    auto live = progress.callback();
    options.on_progress = [&](const std::string& line) { live(line, true); };
    auto outcome = hunter::measure_cost(options);
    progress.finish();
    std::filesystem::remove_all(scratch, ec);
    if (!outcome.is_ok()) {
      return report_error(outcome.status());
    }
    const hunter::CostOutcome& o = *outcome;
    if (json_) {
      nlohmann::ordered_json figures = {
          {"runs", runs_},
          {"native_seconds", o.native_seconds},
          {"record_seconds", o.record_seconds},
          {"replay_seconds", o.replay_seconds},
          {"trace_bytes", o.trace_bytes},
          {"median", {{"native_seconds", o.native},
                      {"record_seconds", o.record},
                      {"replay_seconds", o.replay},
                      {"trace_bytes", o.trace}}},
          {"record_ratio", o.record_ratio()},
          {"replay_ratio", o.replay_ratio()},
          {"trace_mb_per_second", o.trace_mb_per_second()}};
      fmt::print("{}\n", figures.dump(2));
      return kExitOk;
    }
    fmt::print("medians of {} runs each:\n", runs_);
    fmt::print("  native  {:9.3f} s\n", o.native);
    fmt::print("  record  {:9.3f} s  {:6.2f}x native\n", o.record, o.record_ratio());
    fmt::print("  replay  {:9.3f} s  {:6.2f}x native\n", o.replay, o.replay_ratio());
    fmt::print("  trace   {:9.2f} MB  {:.2f} MB per second of native run time\n", o.trace / 1e6,
               o.trace_mb_per_second());
    return kExitOk;
  }

 private:
  uint32_t runs_ = 5;
  bool json_ = false;
  std::vector<std::string> argv_;
};

}  // namespace

std::unique_ptr<Command> make_bench_command() { return std::make_unique<BenchCommand>(); }

}  // namespace repro::cli
