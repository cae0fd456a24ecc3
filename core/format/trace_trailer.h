#pragma once
// TraceTrailer: the `trailer` file finish() writes (JSON; see
// docs/trace-format.md). Its presence, with the `complete` marker, tells a
// reader how many events and bytes of `events` a whole trace has, so a
// truncated or extended `events` file is caught. Internal to core/format.

#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace repro::format {

struct TraceTrailer {
  uint64_t event_count = 0;
  /// Size of `events` in bytes: the end of its last frame.
  uint64_t events_bytes = 0;
  bool operator==(const TraceTrailer&) const = default;
};

/// Serialises to JSON text (with magic and format_version).
std::string trailer_to_json(const TraceTrailer& trailer);
/// Parses JSON text; corruption on malformed input or a format_version
/// other than kTraceFormatVersion. Never throws.
Result<TraceTrailer> trailer_from_json(const std::string& text);

}  // namespace repro::format
