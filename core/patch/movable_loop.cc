#include "core/patch/movable_loop.h"

#include <cstring>

namespace repro::patch {
namespace {

// A direct jmp or jcc at `address`, and its length.
std::optional<DirectJump> decode_direct_jump(const uint8_t* code, size_t size, uint64_t address,
                                             size_t* length) {
  auto rel32 = [&](size_t at) {
    int32_t displacement;
    std::memcpy(&displacement, code + at, sizeof displacement);
    return static_cast<int64_t>(displacement);
  };
  if (size >= 2 && (code[0] == 0xeb || (code[0] & 0xf0) == 0x70)) {
    *length = 2;
    return DirectJump{.condition = code[0] == 0xeb ? DirectJump::kAlways : code[0] & 0x0f,
                      .destination = address + 2 + static_cast<int8_t>(code[1])};
  }
  if (size >= 5 && code[0] == 0xe9) {
    *length = 5;
    return DirectJump{.condition = DirectJump::kAlways, .destination = address + 5 + rel32(1)};
  }
  if (size >= 6 && code[0] == 0x0f && (code[1] & 0xf0) == 0x80) {
    *length = 6;
    return DirectJump{.condition = code[1] & 0x0f, .destination = address + 6 + rel32(2)};
  }
  return std::nullopt;
}

// A loop instruction at code[0] (at `address`), at most `size` bytes: a
// movable instruction or a direct jump; nullopt for anything else.
std::optional<LoopInstruction> decode_loop_instruction(const uint8_t* code, size_t size,
                                                       uint64_t address) {
  LoopInstruction result;
  result.instruction = decode_instruction(code, size, address);
  if (result.instruction.kind == InstructionKind::kMovable) {
    return result;
  }
  size_t length = 0;
  result.jump = decode_direct_jump(code, size, address, &length);
  if (!result.jump || result.instruction.length != length) {
    return std::nullopt;
  }
  return result;
}

}  // namespace

std::optional<MovableLoop> movable_loop_at(const CodeReader& read, uint64_t target) {
  // The code from kMaxLoopBytes before target to kMaxLoopBytes after it
  // (less where that crosses into a page that cannot be read).
  uint64_t from = target - kMaxLoopBytes;
  std::vector<uint8_t> code(2 * kMaxLoopBytes + 16);
  if (!read(from, code.data(), code.size())) {
    from = target & ~uint64_t{4095};
    code.resize(target + kMaxLoopBytes - from);
    if (!read(from, code.data(), code.size())) {
      return std::nullopt;
    }
  }
  auto decode_at = [&](uint64_t at, uint64_t end) {
    return decode_loop_instruction(code.data() + (at - from), end - at, at);
  };
  // Forward from target, up to the first jump back to target or before.
  const uint64_t code_end = from + code.size();
  MovableLoop loop;
  std::vector<LoopInstruction> from_target;
  uint64_t at = target;
  while (true) {
    std::optional<LoopInstruction> next = decode_at(at, code_end);
    if (!next || at + next->instruction.length - target > kMaxLoopBytes) {
      return std::nullopt;
    }
    from_target.push_back(*next);
    at += next->instruction.length;
    if (next->jump && next->jump->destination <= target) {
      loop.head = next->jump->destination;
      break;
    }
  }
  if (loop.head < from || at - loop.head > kMaxLoopBytes) {
    return std::nullopt;
  }
  // From the head to target: the same kinds of instruction, ending exactly
  // at target.
  for (uint64_t before = loop.head; before < target;) {
    std::optional<LoopInstruction> next = decode_at(before, target);
    if (!next) {
      return std::nullopt;
    }
    loop.instructions.push_back(*next);
    before += next->instruction.length;
  }
  loop.instructions.insert(loop.instructions.end(), from_target.begin(), from_target.end());
  loop.code.assign(reinterpret_cast<const char*>(code.data() + (loop.head - from)), at - loop.head);
  return loop;
}

}  // namespace repro::patch
