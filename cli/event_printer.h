#pragma once
// One-line text form of trace events, shared by `repro dump` and
// `repro replay --events`.

#include <string>

#include "core/format/event.h"

namespace repro::cli {

/// "#12 t1 syscall read(3, 0x7ffe..., 4096) = 5 [writes 1: 5 bytes]".
std::string describe_event(uint64_t index, const format::Event& event);

}  // namespace repro::cli
