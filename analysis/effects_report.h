#pragma once
// The text and JSON forms of Effects (analysis/effects.h), for `repro
// effects`. Stateless; thread-safe.

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/effects.h"

namespace repro::analysis {

struct EffectsReportOptions {
  /// List everything. Without it, files under /proc, /sys and /dev that the
  /// run only read (and /dev/null, /dev/zero written), the loader's and
  /// runtimes' reads (shared libraries, /usr/lib, locale and ld.so files)
  /// and netlink sockets are counted by group instead of listed.
  bool all = false;
};

/// The report as text: one section per kind of effect, one line per item.
std::string effects_text(const Effects& effects, const EffectsReportOptions& options);
/// The same as one JSON object: files_changed, files_read, left_out,
/// endpoints, programs, signals_outside, totals (docs/debugging.md).
nlohmann::json effects_json(const Effects& effects, const EffectsReportOptions& options);

}  // namespace repro::analysis
