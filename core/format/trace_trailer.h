#pragma once
// TraceTrailer: the `trailer` file finish() writes (JSON; see
// docs/trace-format.md), and the reader's version-checking header parser. Its presence, with the
// `complete` marker, tells a reader how many events and bytes of `events` a whole trace has, so a
// truncated or extended `events` file is caught. Internal to core/format.

#include <cstdint>
#include <string>

#include "core/base/status.h"
#include "core/format/trace_header.h"

namespace repro::format {

struct TraceTrailer {
  uint64_t event_count = 0;
  /// Size of `events` in bytes: the end of its last frame.
  uint64_t events_bytes = 0;
  bool operator==(const TraceTrailer&) const = default;
};

/// Parses header JSON text once, checking its format_version first:
/// version_mismatch (naming both versions, saying too old or too new) if it
/// is not kTraceFormatVersion, else the header or corruption. This is what
/// TraceReader uses; header_from_json() does not judge the version.
Result<TraceHeader> header_from_json_checked(const std::string& text);

/// Serialises to JSON text (with magic and format_version).
std::string trailer_to_json(const TraceTrailer& trailer);
/// Parses JSON text; corruption on malformed input or a format_version
/// other than kTraceFormatVersion. Never throws.
Result<TraceTrailer> trailer_from_json(const std::string& text);

}  // namespace repro::format
