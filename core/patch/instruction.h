#pragma once
// What the tracer and replay may do with one instruction, decided from its
// bytes alone so that record and replay always agree:
// - step over it with PTRACE_SINGLESTEP while moving a thread to a good
//   preemption point (not syscalls, traps or anything repro emulates);
// - move it into a trampoline, where it runs at another address (at least
//   five bytes long, so a jump can replace it whole, and nothing that
//   branches or reads rip other than through a rip-relative operand).

#include <cstddef>
#include <cstdint>

namespace repro::patch {

enum class InstructionKind {
  kRelocatable,  // steppable, and can run inside a trampoline
  kSteppable,    // may be single-stepped, must stay where it is
  kStop,         // a syscall, trap, rdtsc, cpuid or undecodable bytes
};

struct Instruction {
  InstructionKind kind = InstructionKind::kStop;
  uint8_t length = 0;
  /// Offset of a rip-relative 32-bit displacement within the instruction,
  /// or -1; only for kRelocatable.
  int rip_displacement_offset = -1;
};

/// Decodes the instruction at the start of `code` (up to `size` bytes),
/// which lives at `address`. Thread-safe.
Instruction decode_instruction(const uint8_t* code, size_t size, uint64_t address);

}  // namespace repro::patch
