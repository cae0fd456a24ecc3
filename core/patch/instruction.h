#pragma once
// What the tracer and replay may do with instructions, decided from their
// bytes alone so that record and replay always agree:
// - step over one with PTRACE_SINGLESTEP while moving a thread to a good
//   preemption point (not syscalls, traps, pushf or anything repro
//   emulates);
// - move one into a trampoline, where it runs at another address (nothing
//   that branches, calls or reads rip other than through a rip-relative
//   operand, whose displacement the trampoline fixes);
// - replace a run of such instructions, five bytes or more, by a jump.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace repro::patch {

enum class InstructionKind {
  kMovable,    // steppable, and runs the same at any address
  kSteppable,  // may be single-stepped, must stay where it is (branches, calls)
  kStop,       // a syscall, trap, rdtsc, cpuid, pushf or undecodable bytes
};

struct Instruction {
  InstructionKind kind = InstructionKind::kStop;
  uint8_t length = 0;
  /// Offset of a rip-relative 32-bit displacement within the instruction,
  /// or -1; only for kMovable.
  int rip_displacement_offset = -1;
};

/// Decodes the instruction at the start of `code` (up to `size` bytes),
/// which lives at `address`. Thread-safe.
Instruction decode_instruction(const uint8_t* code, size_t size, uint64_t address);

/// The shortest run of movable instructions at the start of `code` that
/// is at least kJumpLength bytes long, or an empty vector. A run of one
/// instruction can always be replaced by a jump; a longer one only if no
/// branch lands inside it, which the caller must have made sure of.
inline constexpr size_t kJumpLength = 5;
std::vector<Instruction> displaceable_run(const uint8_t* code, size_t size, uint64_t address);

/// Bytes to read at an address to decide on a run there.
inline constexpr size_t kRunCodeBytes = 32;

}  // namespace repro::patch
