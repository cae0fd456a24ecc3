#pragma once
// One-line text form of trace events, shared by `repro dump` and
// `repro replay --events`.

#include <string>

#include "core/format/event.h"

namespace repro::cli {

/// "#12 t1 syscall read(3, \"hello\", 4096) = 5 [writes 1: 5 bytes]": the
/// event number, the thread, the kind, and what happened, syscalls and
/// signals decoded strace-style (analysis/syscall_decoder.h).
/// A kDeadlock event takes one more line per line of its report, a
/// kFailureStacks event one per frame.
std::string describe_event(uint64_t index, const format::Event& event);

/// `text` with `prefix` before each of its lines (a deadlock report as
/// repro's own stderr lines, or indented under its event).
std::string prefix_lines(const std::string& prefix, const std::string& text);

}  // namespace repro::cli
