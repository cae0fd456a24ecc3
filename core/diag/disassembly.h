#pragma once
// Disassembly of a few tracee instructions (capstone), for error reports.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace repro::diag {

/// Up to `count` instructions at `address`, one per line; best effort.
std::string disassemble(pid_t tid, uint64_t address, int count = 4);

}  // namespace repro::diag
