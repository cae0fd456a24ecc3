// `repro effects [--json] [--all] [TRACE]`: what the recorded run touched
// outside itself (files, endpoints, programs, signals), from the trace
// alone. A thin wrapper over analysis/effects.h.

#include <fmt/core.h>

#include <string>

#include "analysis/effects.h"
#include "analysis/effects_report.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"

namespace repro::cli {
namespace {

class EffectsCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("trace", trace_, "trace directory (default: the latest trace)");
    sub->add_flag("--json", json_, "one JSON object instead of text");
    sub->add_flag("--all", options_.all,
                  "list everything; without it, files under /proc, /sys and /dev that were "
                  "only read (and /dev/null, /dev/zero, /dev/urandom written), what the loader "
                  "and runtimes read (shared objects, /lib, /usr/lib, locale, zoneinfo and ld.so "
                  "files, Python modules) and netlink sockets are "
                  "counted by group");
    sub->footer(
        "Paths are resolved against the working directory of the "
        "process (chdir, fchdir) "
        "or the directory descriptor given, lexically (symbolic links "
        "are not followed); "
        "one relative to a directory the trace does not name shows as "
        "?/NAME. Whether a "
        "file opened with O_CREAT existed before is known only if the "
        "run looked first.");
  }

  int run() override {
    auto dir = resolve_trace_dir(trace_);
    if (!dir.is_ok()) {
      return report_error(dir.status());
    }
    auto effects = analysis::collect_effects(*dir);
    if (!effects.is_ok()) {
      return report_error(effects.status());
    }
    if (json_) {
      fmt::print("{}\n", analysis::effects_json(*effects, options_).dump(2));
    } else {
      fmt::print("{}", analysis::effects_text(*effects, options_));
    }
    return kExitOk;
  }

 private:
  std::string trace_;
  bool json_ = false;
  analysis::EffectsReportOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_effects_command() { return std::make_unique<EffectsCommand>(); }

}  // namespace repro::cli
