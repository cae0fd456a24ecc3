#pragma once
// A hash of a process's writable memory, used to name a preemption point
// without hardware counters: between two events only the scheduled thread
// runs, so (registers, writable memory) at the preemption identifies the
// point; replay stops at the first state that matches both.

#include <sys/types.h>

#include <cstdint>

#include "core/base/status.h"

namespace repro::os {

/// XXH3-64 over the contents of every writable mapping of `pid` (in address
/// order, addresses included), leaving out a mapping that starts at
/// `skipped_mapping` (replay's own trampoline page; 0 for none).
/// Requires: all threads of `pid` are stopped.
Result<uint64_t> hash_writable_memory(pid_t pid, uint64_t skipped_mapping = 0);

/// XXH3-64 of a stopped thread's FPU/SSE registers: the legacy FXSAVE part
/// of the XSAVE area (x87, MXCSR, XMM0-15, 416 bytes); the rest holds
/// bookkeeping that need not match across runs.
Result<uint64_t> hash_extended_registers(pid_t tid);

}  // namespace repro::os
