#pragma once
// A small loop that replay may move into a trampoline whole, so that a
// turn of it runs there instead of jumping there and back (see
// conditional_trap.h).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/patch/instruction.h"

namespace repro::patch {

/// A direct jump (jmp or jcc, 8- or 32-bit displacement, no prefix).
struct DirectJump {
  static constexpr int kAlways = 16;  // jmp; else the low nibble of the jcc opcode
  int condition = kAlways;
  uint64_t destination = 0;
};

/// One instruction of a MovableLoop: movable, or a direct jump.
struct LoopInstruction {
  Instruction instruction;
  std::optional<DirectJump> jump;
};

/// A small loop that can be moved whole: from `head` on, movable
/// instructions and direct jumps, up to the first jump back to `head`
/// (which closes it), with the target instruction among them. Moved, a
/// turn of the loop runs without leaving its new place.
struct MovableLoop {
  uint64_t head = 0;
  std::string code;  // from head to the end of the closing jump
  std::vector<LoopInstruction> instructions;  // the closing jump last
};

/// The loop, at most kMaxLoopBytes long, whose body holds `target` (at an
/// instruction boundary), if the code there is such a loop.
inline constexpr size_t kMaxLoopBytes = 128;
std::optional<MovableLoop> movable_loop_at(const CodeReader& read, uint64_t target);

}  // namespace repro::patch
