#pragma once
// The text and JSON forms of a FailureStacks (core/format/failure_stacks.h),
// shared by `repro report` and `repro dump`.

#include <nlohmann/json.hpp>

#include <string>

#include "core/format/failure_stacks.h"

namespace repro::analysis {

/// "SIGSEGV (address not mapped) at 0x0", from the signal, its si_code and
/// the fault address.
std::string describe_signal_cause(const format::FailureStacks& stacks);

/// "0x555555555189: mov dword ptr [rax], 0x2a  (c7 00 2a 00 00 00)", or
/// why there is none.
std::string describe_instruction(const format::FailureStacks& stacks);

/// "faulting instruction" for a fault the instruction caused (si_code > 0),
/// else "stopped at" (a signal sent by kill or raise arrives after the
/// syscall that sent it).
const char* instruction_label(const format::FailureStacks& stacks);

/// "#0 0x555555555189 store_reading at prog.c:14 (/path/prog)"; names
/// left out where unknown.
std::string describe_frame(size_t number, const format::StackFrame& frame);

/// Several lines: the cause, the instruction, then each thread's frames,
/// every line starting with `indent`, each ending in a newline.
std::string describe_failure_stacks(const format::FailureStacks& stacks, const std::string& indent);

/// Every field, numbers as numbers, names as strings ("" where unknown).
nlohmann::ordered_json failure_stacks_json(const format::FailureStacks& stacks);

}  // namespace repro::analysis
