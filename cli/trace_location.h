#pragma once
// Where traces live by default: $REPRO_TRACE_DIR if set, else
// ~/.local/share/repro. New traces are named <prog>-<n>; a `latest` symlink
// beside them names the newest, which commands use when given no trace.

#include <string>

#include "core/base/status.h"

namespace repro::cli {

/// The directory holding traces by default (not created).
std::string trace_root();
/// A fresh directory name <root>/<prog basename>-<n> (creates the root).
Result<std::string> new_trace_dir(const std::string& program);
/// Points <root>/latest at `trace_dir`. Failure is only worth a warning.
Status update_latest_link(const std::string& trace_dir);
/// `given` if not empty, else the target of the latest link; not_found if
/// there is none.
Result<std::string> resolve_trace_dir(const std::string& given);

}  // namespace repro::cli
