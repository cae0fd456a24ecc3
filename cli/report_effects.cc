// `repro report --effects [--json] [--all] [TRACE]`: what the recorded run
// touched outside itself (files, endpoints, programs, signals), from the
// trace alone. A thin wrapper over analysis/effects.h.

#include "cli/report_effects.h"

#include <fmt/core.h>

#include "analysis/effects.h"
#include "cli/exit_codes.h"

namespace repro::cli {

const char* const kEffectsAllHelp =
    "with --effects, list everything; without it, files under /proc, /sys and /dev that were "
    "only read (and /dev/null, /dev/zero, /dev/urandom written), what the loader and runtimes "
    "read (shared objects, /lib, /usr/lib, locale, zoneinfo and ld.so files, Python modules) "
    "and netlink sockets are counted by group";

const char* const kEffectsFooter =
    "--effects: paths are resolved against the working directory of the process (chdir,\n"
    "fchdir) or the directory descriptor given, lexically (symbolic links are not followed);\n"
    "one relative to a directory the trace does not name shows as ?/NAME. Whether a file\n"
    "opened with O_CREAT existed before is known only if the run looked first.";

int print_effects_report(const std::string& dir, bool json,
                         const analysis::EffectsReportOptions& options) {
  auto effects = analysis::collect_effects(dir);
  if (!effects.is_ok()) {
    return report_error(effects.status());
  }
  if (json) {
    fmt::print("{}\n", analysis::effects_json(*effects, options).dump(2));
  } else {
    fmt::print("{}", analysis::effects_text(*effects, options));
  }
  return kExitOk;
}

}  // namespace repro::cli
