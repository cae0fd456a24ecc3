#pragma once
// The JSON form of trace events for `repro dump --json`: one object per
// event, every field its kind uses (docs/trace-format.md), numbers as
// numbers, memory written as its address and length (and the first bytes
// in hex). Built with nlohmann-json.

#include <nlohmann/json.hpp>

#include "core/format/event.h"
#include "core/format/trace_header.h"

namespace repro::cli {

nlohmann::ordered_json event_json(uint64_t index, const format::Event& event);
nlohmann::ordered_json header_json(const format::TraceHeader& header, bool complete);
/// `json` on one line; bytes that are not UTF-8 (paths, argv) become U+FFFD.
std::string json_line(const nlohmann::ordered_json& json);

}  // namespace repro::cli
