#pragma once
// The --effects part of `repro report`: what a recorded run touched outside
// itself, printed from analysis/effects.h as text or JSON.

#include <string>

#include "analysis/effects_report.h"

namespace repro::cli {

/// Help texts of --all and of --effects' footer.
extern const char* const kEffectsAllHelp;
extern const char* const kEffectsFooter;

/// Prints the effects of the trace in `dir` on stdout; returns the exit
/// status (errors reported on stderr).
int print_effects_report(const std::string& dir, bool json,
                         const analysis::EffectsReportOptions& options);

}  // namespace repro::cli
