#include "core/patch/conditional_trap.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace repro::patch {
namespace {

constexpr int kEqual = 0x4;  // conditions, as in DirectJump
constexpr int kNotEqual = 0x5;

// Hand-assembled x86-64: each helper appends one instruction.
class Assembler {
 public:
  explicit Assembler(uint64_t address) : start_(address) {}

  uint64_t here() const { return start_ + bytes_.size(); }
  std::string& bytes() { return bytes_; }

  void raw(std::initializer_list<uint8_t> code) {
    for (uint8_t b : code) bytes_.push_back(static_cast<char>(b));
  }
  void u32(uint32_t v) { append(&v, sizeof v); }
  void u64(uint64_t v) { append(&v, sizeof v); }

  void int3() { raw({0xcc}); }
  void mov_rax_imm64(uint64_t v) {
    raw({0x48, 0xb8});
    u64(v);
  }
  // mov [rip + disp32], reg and mov reg, [rip + disp32] for rax/rcx, the
  // slot at absolute address `at`.
  void mov_to_rip_relative(int reg, uint64_t at) {
    rip_relative({0x48, 0x89, static_cast<uint8_t>(0x05 | (reg << 3))}, at);
  }
  void mov_from_rip_relative(int reg, uint64_t at) {
    rip_relative({0x48, 0x8b, static_cast<uint8_t>(0x05 | (reg << 3))}, at);
  }
  // mov reg, [rax] for rax/rcx.
  void load_from_rax(int reg) { raw({0x48, 0x8b, static_cast<uint8_t>(reg << 3)}); }
  // lea rcx, [reg + rax]: a sum without touching the flags.
  void lea_rcx_sum_with_rax(int reg) {
    bool needs_disp8 = (reg & 7) == 5;  // rbp/r13 as a base need a displacement
    raw({static_cast<uint8_t>(reg >= 8 ? 0x49 : 0x48), 0x8d,
         static_cast<uint8_t>(needs_disp8 ? 0x4c : 0x0c), static_cast<uint8_t>(reg & 7)});
    if (needs_disp8) {
      raw({0x00});
    }
  }
  // cmp reg, [rip + disp32], the word at absolute address `at`.
  // cmp reg, imm32 (sign-extended).
  void cmp_with_imm32(int reg, int32_t value) {
    raw({static_cast<uint8_t>(reg >= 8 ? 0x49 : 0x48), 0x81,
         static_cast<uint8_t>(0xf8 | (reg & 7))});
    u32(static_cast<uint32_t>(value));
  }
  void cmp_with_rip_relative(int reg, uint64_t at) {
    rip_relative({static_cast<uint8_t>(reg >= 8 ? 0x4c : 0x48), 0x3b,
                  static_cast<uint8_t>(0x05 | ((reg & 7) << 3))},
                 at);
  }
  // Labels are offsets into the code. jmp or jcc rel32, with a condition
  // as in DirectJump, to a placeholder (returns where to patch, see bind)
  // or to a label.
  size_t jump_forward(int condition) {
    if (condition == DirectJump::kAlways) {
      raw({0xe9});
    } else {
      raw({0x0f, static_cast<uint8_t>(0x80 | condition)});
    }
    return placeholder();
  }
  void jump_to(int condition, size_t label) { bind(jump_forward(condition), label); }
  // Points the rel32 at `rel32_at` to `label`, or sets it to `rel`.
  void bind(size_t rel32_at, size_t label) {
    set_rel32(rel32_at, static_cast<int32_t>(static_cast<int64_t>(label) -
                                             static_cast<int64_t>(rel32_at + 4)));
  }
  void bind_here(size_t rel32_at) { bind(rel32_at, bytes_.size()); }
  void set_rel32(size_t rel32_at, int32_t rel) {
    std::memcpy(bytes_.data() + rel32_at, &rel, sizeof rel);
  }
  size_t size() const { return bytes_.size(); }
  // jrcxz over the five-byte jmp that follows.
  void jrcxz_over_jmp() { raw({0xe3, 0x05}); }

 private:
  size_t placeholder() {
    size_t at = bytes_.size();
    u32(0);
    return at;
  }
  void rip_relative(std::initializer_list<uint8_t> opcode, uint64_t at) {
    raw(opcode);
    u32(static_cast<uint32_t>(static_cast<int32_t>(at - (here() + 4))));
  }
  void append(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  uint64_t start_;
  std::string bytes_;
};

bool fits_rel32(int64_t delta) {
  return delta >= std::numeric_limits<int32_t>::min() &&
         delta <= std::numeric_limits<int32_t>::max();
}

// ModRM register numbers.
enum Reg { kRax = 0, kRcx = 1, kRdx = 2, kRbx = 3, kRsp = 4, kRbp = 5, kRsi = 6, kRdi = 7 };

// The data words after the sixteen registers' (see kTrampolineDataOffset).
constexpr size_t kWordWantSlot = 16;
constexpr size_t kWordSavedRaxSlot = 17;
uint64_t data_slot(const TrampolineRequest& r, size_t slot) {
  return r.trampoline + kTrampolineDataOffset + 8 * slot;
}

struct Check {
  int reg;
  uint64_t want;
  bool differs_now;
};

// The registers to compare, those that differ at the visit seen so far
// first: they are likely to differ at most visits (a loop's counter, its
// pointer), so a visit usually leaves after one compare.
std::vector<Check> ordered_checks(const user_regs_struct& want, const user_regs_struct& now) {
  std::vector<Check> checks = {
      {kRcx, want.rcx, now.rcx != want.rcx}, {kRdx, want.rdx, now.rdx != want.rdx},
      {kRsi, want.rsi, now.rsi != want.rsi}, {kRdi, want.rdi, now.rdi != want.rdi},
      {kRbx, want.rbx, now.rbx != want.rbx}, {kRbp, want.rbp, now.rbp != want.rbp},
      {8, want.r8, now.r8 != want.r8},       {9, want.r9, now.r9 != want.r9},
      {10, want.r10, now.r10 != want.r10},   {11, want.r11, now.r11 != want.r11},
      {12, want.r12, now.r12 != want.r12},   {13, want.r13, now.r13 != want.r13},
      {14, want.r14, now.r14 != want.r14},   {15, want.r15, now.r15 != want.r15},
      {kRsp, want.rsp, now.rsp != want.rsp}, {kRax, want.rax, now.rax != want.rax},
  };
  std::stable_partition(checks.begin(), checks.end(),
                        [](const Check& check) { return check.differs_now; });
  return checks;
}

// Copies one instruction, originally at `from`, to where the assembler
// stands, fixing its rip-relative operand.
Status emit_moved(Assembler& a, const TrampolineRequest& r, std::string_view bytes,
                  const Instruction& instruction, uint64_t from) {
  std::string moved(bytes.substr(0, instruction.length));
  if (instruction.rip_displacement_offset >= 0) {
    int32_t displacement;
    std::memcpy(&displacement, moved.data() + instruction.rip_displacement_offset,
                sizeof displacement);
    int64_t fixed = int64_t{displacement} + static_cast<int64_t>(from - a.here());
    if (!fits_rel32(fixed)) {
      return Status::error(StatusCode::kInvalidArgument,
                           fmt::format("trampoline at {:#x} is out of reach of the operand of "
                                       "the instruction at {:#x}",
                                       r.trampoline, from));
    }
    displacement = static_cast<int32_t>(fixed);
    std::memcpy(moved.data() + instruction.rip_displacement_offset, &displacement,
                sizeof displacement);
  }
  a.bytes() += moved;
  return Status::ok();
}

// jmp (or jcc) rel32 to an address outside the trampoline.
Status emit_jump_to(Assembler& a, const TrampolineRequest& r, uint64_t destination,
                    int condition = DirectJump::kAlways) {
  const size_t length = condition == DirectJump::kAlways ? 5 : 6;
  int64_t rel = static_cast<int64_t>(destination) - static_cast<int64_t>(a.here() + length);
  if (!fits_rel32(rel)) {
    return Status::error(
        StatusCode::kInvalidArgument,
        fmt::format("trampoline at {:#x} is out of reach of {:#x}", r.trampoline, destination));
  }
  a.set_rel32(a.jump_forward(condition), static_cast<int32_t>(rel));
  return Status::ok();
}

// The code that runs in place of the original from `target` on, appending
// the new address of each instruction of the run to `moved_addresses`:
// - the run, then a jump back to the instruction after it; or
// - the whole loop, turned to start at `target`: the instructions from
//   there to the closing jump, which now goes to `check` (the compares,
//   at the trampoline's start) when the loop starts at `target`, else to a
//   copy of the instructions from the head to `target`, followed by a jump
//   to `check`. When the loop ends, a jump back to the code after it.
Status emit_body(Assembler& a, const TrampolineRequest& r, size_t check,
                 std::vector<uint64_t>* moved_addresses) {
  if (!r.loop) {
    uint64_t at = r.target;
    for (const Instruction& instruction : r.run) {
      moved_addresses->push_back(a.here());
      REPRO_RETURN_IF_ERROR(emit_moved(a, r, r.original.substr(at - r.target), instruction, at));
      at += instruction.length;
    }
    return emit_jump_to(a, r, at);
  }
  const MovableLoop& loop = *r.loop;
  const uint64_t loop_end = loop.head + loop.code.size();
  std::map<uint64_t, size_t> copy_of;               // original address -> label
  std::vector<std::pair<size_t, uint64_t>> inside;  // jumps to copies: rel32 at, destination
  auto emit_range = [&](uint64_t begin, uint64_t end) -> Status {
    uint64_t at = loop.head;
    for (const LoopInstruction& one : loop.instructions) {
      const uint64_t length = one.instruction.length;
      if (at >= begin && at < end) {
        copy_of[at] = a.size();
        if (at - r.target < r.original.size()) {
          moved_addresses->push_back(a.here());
        }
        if (!one.jump) {
          REPRO_RETURN_IF_ERROR(emit_moved(a, r, std::string_view(loop.code).substr(at - loop.head),
                                           one.instruction, at));
        } else if (one.jump->destination == r.target) {
          a.jump_to(one.jump->condition, check);  // the next visit: check it
        } else if (one.jump->destination >= loop.head && one.jump->destination < loop_end) {
          inside.emplace_back(a.jump_forward(one.jump->condition), one.jump->destination);
        } else {
          REPRO_RETURN_IF_ERROR(emit_jump_to(a, r, one.jump->destination, one.jump->condition));
        }
      }
      at += length;
    }
    return Status::ok();
  };
  // From target to the closing jump; past it, back to the code after the
  // loop; then the instructions from the head to target, and the check.
  REPRO_RETURN_IF_ERROR(emit_range(r.target, loop_end));
  if (loop.instructions.back().jump->condition != DirectJump::kAlways) {
    REPRO_RETURN_IF_ERROR(emit_jump_to(a, r, loop_end));
  }
  if (loop.head != r.target) {
    REPRO_RETURN_IF_ERROR(emit_range(loop.head, r.target));
    a.jump_to(DirectJump::kAlways, check);
  }
  for (const auto& [rel32_at, destination] : inside) {
    auto label = copy_of.find(destination);
    if (label == copy_of.end()) {
      return Status::error(
          StatusCode::kInvalidArgument,
          fmt::format("a jump in the loop at {:#x} lands inside an instruction", loop.head));
    }
    a.bind(rel32_at, label->second);
  }
  return Status::ok();
}

// The compares when the flags must survive: rax and rcx are kept in two
// slots of the trampoline's page (the program's memory stays untouched,
// replay compares a hash of it), and each register is tested with lea and
// jrcxz, which leave the flags alone.
Status emit_flag_preserving_trampoline(Assembler& a, const TrampolineRequest& r,
                                       const std::vector<Check>& checks, TrampolineCode* code) {
  const uint64_t saved_rax = r.trampoline + kTrampolineDataOffset;
  const uint64_t saved_rcx = saved_rax + 8;
  code->saved_rax = saved_rax;
  code->saved_rcx = saved_rcx;
  const size_t check = a.size();
  a.mov_to_rip_relative(kRax, saved_rax);
  a.mov_to_rip_relative(kRcx, saved_rcx);
  std::vector<size_t> misses;
  for (const Check& one : checks) {
    // rcx = register - want, then jrcxz past the jump to "miss".
    a.mov_rax_imm64(uint64_t{0} - one.want);
    int reg = one.reg;
    if (reg == kRax || reg == kRcx) {
      a.mov_from_rip_relative(kRcx, reg == kRax ? saved_rax : saved_rcx);
      reg = kRcx;
    }
    a.lea_rcx_sum_with_rax(reg);
    a.jrcxz_over_jmp();
    misses.push_back(a.jump_forward(DirectJump::kAlways));
  }
  if (r.word) {  // rcx = the word - want, the same way
    a.mov_rax_imm64(r.word->address);
    code->word_load = a.here();
    a.load_from_rax(kRcx);
    a.mov_rax_imm64(uint64_t{0} - r.word->want);
    a.lea_rcx_sum_with_rax(kRcx);
    a.jrcxz_over_jmp();
    misses.push_back(a.jump_forward(DirectJump::kAlways));
  }
  // All equal: restore everything and stop for the tracer, which resumes
  // the thread after the trap when the rest of the state (FPU registers,
  // memory) did not match either.
  auto restore = [&] {
    a.mov_from_rip_relative(kRax, saved_rax);
    a.mov_from_rip_relative(kRcx, saved_rcx);
  };
  restore();
  a.int3();
  code->trap_rip = a.here();
  size_t to_body = a.jump_forward(DirectJump::kAlways);
  // Not this visit: restore and carry on.
  for (size_t at : misses) a.bind_here(at);
  restore();
  a.bind_here(to_body);
  return emit_body(a, r, check, &code->moved_addresses);
}

// The compares where the flags are dead: cmp against the wanted values,
// kept in the trampoline's page, and nothing to save. The first compare,
// the one that fails at most visits, falls through to the moved code.
Status emit_flag_changing_trampoline(Assembler& a, const TrampolineRequest& r,
                                     const std::vector<Check>& checks, TrampolineCode* code) {
  // A value that fits a sign-extended imm32 (a counter, a small size) is
  // compared as an immediate, others against their slot.
  auto compare = [&](size_t i) {
    const auto want = static_cast<int64_t>(checks[i].want);
    if (want >= std::numeric_limits<int32_t>::min() &&
        want <= std::numeric_limits<int32_t>::max()) {
      a.cmp_with_imm32(checks[i].reg, static_cast<int32_t>(want));
    } else {
      a.cmp_with_rip_relative(checks[i].reg, r.trampoline + kTrampolineDataOffset + 8 * i);
    }
  };
  const size_t check = a.size();
  compare(0);
  size_t first_equal = a.jump_forward(kEqual);
  const size_t body = a.size();
  REPRO_RETURN_IF_ERROR(emit_body(a, r, check, &code->moved_addresses));
  a.bind_here(first_equal);
  for (size_t i = 1; i < checks.size(); ++i) {
    compare(i);
    a.jump_to(kNotEqual, body);
  }
  if (r.word) {  // through rax, kept in a slot; the mov back keeps the flags
    code->saved_rax = data_slot(r, kWordSavedRaxSlot);
    a.mov_to_rip_relative(kRax, data_slot(r, kWordSavedRaxSlot));
    a.mov_rax_imm64(r.word->address);
    code->word_load = a.here();
    a.load_from_rax(kRax);
    a.cmp_with_rip_relative(kRax, data_slot(r, kWordWantSlot));
    a.mov_from_rip_relative(kRax, data_slot(r, kWordSavedRaxSlot));
    a.jump_to(kNotEqual, body);
  }
  a.int3();
  code->trap_rip = a.here();
  a.jump_to(DirectJump::kAlways, body);
  code->changes_flags = true;
  return Status::ok();
}

}  // namespace

Result<TrampolineCode> conditional_trap_code(const TrampolineRequest& r) {
  size_t run_length = 0;
  for (const Instruction& instruction : r.run) {
    if (instruction.kind != InstructionKind::kMovable) {
      run_length = 0;
      break;
    }
    run_length += instruction.length;
  }
  if (run_length < kJumpLength || r.original.size() != run_length) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("the code at {:#x} cannot be moved", r.target));
  }
  if (r.loop &&
      (r.target < r.loop->head || r.target + run_length > r.loop->head + r.loop->code.size())) {
    return Status::error(
        StatusCode::kInvalidArgument,
        fmt::format("the loop at {:#x} does not hold {:#x}", r.loop->head, r.target));
  }
  Assembler a(r.trampoline);
  TrampolineCode code;
  std::vector<Check> checks = ordered_checks(r.want, r.now);
  if (r.flags_dead) {
    REPRO_RETURN_IF_ERROR(emit_flag_changing_trampoline(a, r, checks, &code));
  } else {
    REPRO_RETURN_IF_ERROR(emit_flag_preserving_trampoline(a, r, checks, &code));
  }
  if (code.moved_addresses.size() != r.run.size()) {
    return Status::error(
        StatusCode::kInvalidArgument,
        fmt::format("the loop at {:#x} does not hold the run at {:#x}", r.loop->head, r.target));
  }
  if (a.size() > kTrampolineDataOffset) {
    return Status::error(StatusCode::kInvalidArgument, "trampoline code too long");
  }
  if (r.flags_dead) {  // the wanted values, in the order of the compares
    a.bytes().resize(kTrampolineDataOffset, static_cast<char>(0xcc));
    for (const Check& check : checks) a.u64(check.want);
    if (r.word) {
      a.bytes().resize(kTrampolineDataOffset + 8 * kWordWantSlot, '\0');
      a.u64(r.word->want);
      a.u64(0);  // the saved rax
    }
  }
  code.bytes = std::move(a.bytes());
  return code;
}

Result<std::string> jump_to_trampoline(uint64_t target, uint64_t trampoline, size_t length) {
  int64_t delta = static_cast<int64_t>(trampoline) - static_cast<int64_t>(target + 5);
  if (length < 5 || !fits_rel32(delta)) {
    return Status::error(
        StatusCode::kInvalidArgument,
        fmt::format("no jump from {:#x} to {:#x} in {} bytes", target, trampoline, length));
  }
  std::string bytes(length, static_cast<char>(0xcc));
  bytes[0] = static_cast<char>(0xe9);
  int32_t rel = static_cast<int32_t>(delta);
  std::memcpy(bytes.data() + 1, &rel, sizeof rel);
  return bytes;
}

}  // namespace repro::patch
