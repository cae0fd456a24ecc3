#pragma once
// Disassembly of a few tracee instructions (capstone), for error reports.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace repro::diag {

/// Up to `count` instructions at `address`, one per line; best effort.
std::string disassemble(pid_t tid, uint64_t address, int count = 4);

/// One decoded instruction: its bytes and capstone's text
/// ("mov dword ptr [rax], 0x2a").
struct Instruction {
  std::string bytes;
  std::string text;
};

/// The instruction at `address` of stopped thread `tid`. Both fields are
/// empty if the memory cannot be read; text is empty if the bytes do not
/// decode (bytes then holds the 16 bytes read, an x86 instruction's most).
Instruction disassemble_one(pid_t tid, uint64_t address);

}  // namespace repro::diag
