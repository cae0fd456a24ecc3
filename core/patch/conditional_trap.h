#pragma once
// A breakpoint that costs no ptrace stop when it does not match.
//
// Replay finds a preemption point by stopping at the recorded instruction
// until the registers match. Inside a hot loop that is one stop per turn,
// a million stops a second of recorded run time. Instead, the instruction
// is replaced by a jump to a trampoline that compares the general
// registers with the recorded ones inside the program, traps only when all
// match, and otherwise runs the displaced instruction and jumps back.
//
// The trampoline keeps the program's view intact: it writes no memory of
// the program (not even the stack) and runs the instruction with every
// register as the program left it. Where the flags are dead (overwritten
// before they are read, see arithmetic_flags_dead) it compares with cmp
// against values kept in its own page; elsewhere it compares without
// touching the flags (lea and jrcxz), keeping rax and rcx, which that
// uses, in its page. The page must be writable: the data sits at
// kTrampolineDataOffset.

#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/patch/instruction.h"
#include "core/patch/movable_loop.h"

namespace repro::patch {

/// A word of memory a visit must also hold to trap, compared after the
/// registers. At a point whose registers repeat at every visit (a helper
/// called in a loop on the same buffer) only memory tells the visits
/// apart; one word that differed at a rejected visit spares the stops at
/// most of the others. Requires: `address` is readable at every visit.
struct WatchedWord {
  uint64_t address = 0;
  uint64_t want = 0;
  bool operator==(const WatchedWord&) const = default;
};

struct TrampolineCode {
  std::string bytes;
  /// rip of a thread stopped by the trampoline's trap (just past its
  /// int3); every other register is as it was at the target.
  uint64_t trap_rip = 0;
  /// Where each moved instruction runs after the trap, in run order: a
  /// thread found at the i-th instruction of the run continues there.
  std::vector<uint64_t> moved_addresses;
  /// True if a thread at trap_rip has the arithmetic flags of the compares
  /// rather than the program's (dead ones, which the tracer may set).
  bool changes_flags = false;
  /// Where the compares keep the program's rax and rcx while they use them
  /// (0: they do not use that register). A thread that faults on the
  /// watched word's load gets them back from there.
  uint64_t saved_rax = 0;
  uint64_t saved_rcx = 0;
  /// The instruction that loads the watched word (0: none).
  uint64_t word_load = 0;
};

/// What a trampoline is built from.
struct TrampolineRequest {
  uint64_t trampoline = 0;  // where it will be
  uint64_t target = 0;      // the instruction whose visits it checks
  /// The registers (general ones and rsp) a visit must have to trap.
  user_regs_struct want{};
  /// The registers at a visit that did not match: they only order the
  /// compares (those that differed first).
  user_regs_struct now{};
  /// The run of movable instructions at `target` the jump replaces (see
  /// displaceable_run), and its bytes.
  std::vector<Instruction> run;
  std::string_view original;
  /// The compares may change the arithmetic flags, which is faster.
  bool flags_dead = false;
  /// The small loop around `target`, if it can be moved whole: a turn of
  /// it then stays in the trampoline instead of jumping there and back.
  std::optional<MovableLoop> loop;
  /// Memory to compare too, once the registers match.
  std::optional<WatchedWord> word;
};

/// Machine code for a trampoline that traps when a thread arrives from
/// `target` with the wanted registers, and otherwise runs the moved
/// instructions (the run, or the whole loop) and goes back to the original
/// code after them. Errors: invalid_argument when the trampoline is out of
/// a rel32's reach of `target` or of a rip-relative operand.
Result<TrampolineCode> conditional_trap_code(const TrampolineRequest& request);

/// The bytes that replace the run at `target` (`length` >= 5 bytes): a
/// jump to `trampoline`, padded with int3.
Result<std::string> jump_to_trampoline(uint64_t target, uint64_t trampoline, size_t length);

/// Where the trampoline's data starts in its page (an upper bound of its
/// code size): up to eighteen 8-byte words (a register's wanted value or
/// a saved one each, then the watched word's and a saved rax). The whole
/// needs one page.
inline constexpr size_t kTrampolineDataOffset = 1024;
inline constexpr size_t kTrampolinePageBytes = kTrampolineDataOffset + 18 * 8;

}  // namespace repro::patch
