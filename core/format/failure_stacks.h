#pragma once
// FailureStacks: what the recorder saw when a thread was about to die of a
// fatal signal, stored as the data of a kFailureStacks event so that
// `repro report` can say where the program failed without replaying it.
//
// The recorder fills it at the signal-delivery stop of a signal whose
// action terminates the process (the default action of SIGSEGV, SIGABRT,
// ...): the faulting instruction of the thread that got the signal, and a
// symbolised backtrace of every thread of its process, taken while they
// all still existed. docs/trace-format.md ("failure-stacks") has the
// byte-level encoding; encode and decode are its only implementation.
//
// Plain values; not thread-safe to share mutably, like any struct.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace repro::format {

/// One frame of a backtrace, innermost first. Names are empty where the
/// recorder could not find them (no symbol, no debug information).
struct StackFrame {
  uint64_t pc = 0;        // the frame's instruction pointer (return address for callers)
  std::string function;   // demangled, e.g. "crash_in_worker" or "std::thread::_M_run()"
  std::string file;       // source file from the debug information
  uint32_t line = 0;      // 0 when file is empty
  std::string module;     // the mapped file the code comes from
  bool operator==(const StackFrame&) const = default;
};

/// The backtrace of one thread of the failing process.
struct ThreadStack {
  uint32_t thread = 0;        // thread index in the trace (t1 is 1)
  int32_t recorded_tid = 0;   // its kernel tid during recording
  std::vector<StackFrame> frames;
  /// Why the backtrace is missing or stops early ("unwinding stopped: ..."),
  /// else empty.
  std::string note;
  bool operator==(const ThreadStack&) const = default;
};

struct FailureStacks {
  int32_t signal_number = 0;
  int32_t signal_code = 0;          // si_code (SEGV_MAPERR, SI_TKILL, ...)
  uint64_t fault_address = 0;       // si_addr for faults, else 0
  uint64_t instruction_address = 0; // rip of the thread that got the signal
  std::string instruction_bytes;    // the bytes there (up to 16), empty if unreadable
  std::string instruction;          // capstone's text, "mov dword ptr [rax], 0x2a"
  std::vector<ThreadStack> threads; // the failing thread first
  bool operator==(const FailureStacks&) const = default;
};

/// The bytes of a kFailureStacks event's data.
std::string encode_failure_stacks(const FailureStacks& stacks);

/// Parses a kFailureStacks event's data. Never reads past `data` and never
/// allocates more than its size allows. Errors: corruption naming the
/// field and byte offset ("failure stacks: bad frame count at byte 12").
Result<FailureStacks> decode_failure_stacks(std::string_view data);

}  // namespace repro::format
