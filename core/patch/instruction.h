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
#include <functional>
#include <optional>
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

/// A rep-prefixed string instruction that repeats a fixed count of times
/// (movs, stos, lods: no compare ends it early). It runs in iterations,
/// each leaving rip on it with rcx counting down and rsi/rdi moved on, so a
/// thread can stand in its middle.
struct RepeatedString {
  uint8_t length = 0;         // of the instruction
  uint8_t element_bytes = 0;  // moved per iteration: 1, 2, 4 or 8
  bool uses_rsi = false;      // movs, lods
  bool uses_rdi = false;      // movs, stos
};

/// The rep movs/stos/lods instruction at the start of `code`, with 64-bit
/// addressing; nullopt for anything else. Thread-safe.
std::optional<RepeatedString> repeated_string_at(const uint8_t* code, size_t size);

/// The shortest run of movable instructions at the start of `code` that
/// is at least kJumpLength bytes long, or an empty vector. A run of one
/// instruction can always be replaced by a jump; a longer one only if no
/// branch lands inside it, which the caller must have made sure of.
inline constexpr size_t kJumpLength = 5;
std::vector<Instruction> displaceable_run(const uint8_t* code, size_t size, uint64_t address);

/// Bytes to read at an address to decide on a run there.
inline constexpr size_t kRunCodeBytes = 32;

/// True if a direct jump or call decoded in `code` (which lives at
/// `code_address`; a linear sweep, from each of the first four offsets so
/// that a sweep that starts inside an instruction gets back in step) lands
/// strictly inside [start, end). Replacing a run of several instructions
/// is only safe where nothing can jump into its middle; one turn of a loop
/// shows the jumps taken in it, this shows those that enter it from around.
bool direct_branch_lands_inside(const uint8_t* code, size_t size, uint64_t code_address,
                                uint64_t start, uint64_t end);

/// The status flags (CF, PF, AF, ZF, SF, OF) as bits of eflags.
inline constexpr uint64_t kArithmeticFlags = 0x8d5;

/// True if the arithmetic flags at `address` are all overwritten before
/// any of them is read, in the straight-line code at the start of `code`:
/// code inserted there may then change them. Only instructions whose
/// effect on the flags is certain are followed (moves, lea, add, sub, cmp,
/// the logic operations, inc, dec, imul); anything else, a flag the
/// manual calls undefined after an instruction included, counts as read.
bool arithmetic_flags_dead(const uint8_t* code, size_t size, uint64_t address);

/// An rdtsc or rdtscp instruction met by find_rdtsc_instructions.
struct TscInstruction {
  uint64_t address = 0;
  uint8_t length = 0;
  bool rdtscp = false;
};

/// Decodes `code` (which lives at `address`) forward from its first byte,
/// which must be an instruction boundary, and returns the rdtsc and rdtscp
/// instructions met, until the bytes end or stop decoding. Thread-safe.
std::vector<TscInstruction> find_rdtsc_instructions(const uint8_t* code, size_t size,
                                                    uint64_t address);

/// Reads `size` bytes of code at an address into `out`; false if it cannot.
using CodeReader = std::function<bool(uint64_t address, uint8_t* out, size_t size)>;


/// direct_branch_lands_inside over the code around [start, end): up to 2 KiB
/// before it (from the page it starts in, if more cannot be read) and 512
/// bytes after. True (unsafe) when nothing can be read.
bool may_be_entered_inside(const CodeReader& read, uint64_t start, uint64_t end);

}  // namespace repro::patch
