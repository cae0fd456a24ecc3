#include "core/patch/conditional_trap.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

namespace repro::patch {
namespace {

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
  // cmp reg, rax (reg numbered as in the ModRM encoding, 0-15).
  void cmp_reg_rax(int reg) {
    raw({static_cast<uint8_t>(reg >= 8 ? 0x49 : 0x48), 0x39,
         static_cast<uint8_t>(0xc0 | (reg & 7))});
  }
  void cmp_rax_rsp() { raw({0x48, 0x39, 0xe0}); }
  // Instructions with a [rip + disp32] operand at absolute address `at`.
  void mov_to_rip_relative_rax(uint64_t at) { rip_relative({0x48, 0x89, 0x05}, at); }
  void mov_rax_from_rip_relative(uint64_t at) { rip_relative({0x48, 0x8b, 0x05}, at); }
  void cmp_rax_rip_relative(uint64_t at) { rip_relative({0x48, 0x3b, 0x05}, at); }
  void mov_to_rip_relative_ax(uint64_t at) { rip_relative({0x66, 0x89, 0x05}, at); }
  void mov_ax_from_rip_relative(uint64_t at) { rip_relative({0x66, 0x8b, 0x05}, at); }
  // The arithmetic flags through ax, without the stack: ah gets SF ZF AF PF
  // CF (lahf), al gets OF (seto); adding 0x7f to al sets OF again exactly
  // when it was set, and sahf then restores the other five.
  void save_flags_in_ax() { raw({0x9f, 0x0f, 0x90, 0xc0}); }    // lahf; seto al
  void restore_flags_from_ax() { raw({0x04, 0x7f, 0x9e}); }     // add al, 0x7f; sahf

  // jne rel32 with a placeholder; returns where to patch.
  size_t jne_forward() {
    raw({0x0f, 0x85});
    size_t at = bytes_.size();
    u32(0);
    return at;
  }
  void bind_here(size_t rel32_at) {
    int32_t rel = static_cast<int32_t>(bytes_.size() - (rel32_at + 4));
    std::memcpy(bytes_.data() + rel32_at, &rel, sizeof rel);
  }

 private:
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

}  // namespace

Result<TrampolineCode> conditional_trap_code(uint64_t trampoline, uint64_t target,
                                             const user_regs_struct& want,
                                             const user_regs_struct& now,
                                             std::string_view original,
                                             const std::vector<Instruction>& run) {
  size_t run_length = 0;
  for (const Instruction& instruction : run) {
    if (instruction.kind != InstructionKind::kMovable) {
      run_length = 0;
      break;
    }
    run_length += instruction.length;
  }
  if (run_length < kJumpLength || original.size() != run_length) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("the code at {:#x} cannot be moved", target));
  }
  Assembler a(trampoline);
  // The program's memory stays untouched (replay compares a hash of it):
  // rax and the flags the comparisons clobber are kept in two slots at the
  // end of the trampoline's own page, which the hash leaves out.
  const uint64_t saved_rax = trampoline + kTrampolineMaxSize;
  const uint64_t saved_flags = saved_rax + 8;
  a.mov_to_rip_relative_rax(saved_rax);
  a.save_flags_in_ax();
  a.mov_to_rip_relative_ax(saved_flags);
  // Registers in ModRM numbering; kRax and kRsp need their own compares.
  struct Check {
    int reg;
    uint64_t want;
    bool differs_now;
  };
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
  // Registers that differ at the visit seen so far are likely to differ at
  // most visits (a loop's counter, its pointer): test them first, so a
  // visit usually leaves after one compare.
  std::stable_partition(checks.begin(), checks.end(),
                        [](const Check& check) { return check.differs_now; });
  std::vector<size_t> misses;
  for (const Check& check : checks) {
    a.mov_rax_imm64(check.want);
    if (check.reg == kRax) {
      a.cmp_rax_rip_relative(saved_rax);  // rax itself is in its slot
    } else if (check.reg == kRsp) {
      a.cmp_rax_rsp();
    } else {
      a.cmp_reg_rax(check.reg);
    }
    misses.push_back(a.jne_forward());
  }
  // All equal: restore everything and stop for the tracer.
  auto restore = [&] {
    a.mov_ax_from_rip_relative(saved_flags);
    a.restore_flags_from_ax();
    a.mov_rax_from_rip_relative(saved_rax);
  };
  restore();
  a.int3();
  TrampolineCode code;
  code.trap_rip = a.here();
  // Runs the displaced instructions where they now stand, then goes back.
  auto run_moved_instructions = [&](std::vector<uint64_t>* addresses) -> Status {
    size_t offset = 0;
    for (const Instruction& instruction : run) {
      if (addresses != nullptr) {
        addresses->push_back(a.here());
      }
      std::string moved(original.substr(offset, instruction.length));
      if (instruction.rip_displacement_offset >= 0) {
        int32_t displacement;
        std::memcpy(&displacement, moved.data() + instruction.rip_displacement_offset,
                    sizeof displacement);
        int64_t fixed = int64_t{displacement} + static_cast<int64_t>(target + offset - a.here());
        if (!fits_rel32(fixed)) {
          return Status::error(StatusCode::kInvalidArgument,
                               fmt::format("trampoline at {:#x} is out of reach of the operand of "
                                           "the instruction at {:#x}",
                                           trampoline, target + offset));
        }
        displacement = static_cast<int32_t>(fixed);
        std::memcpy(moved.data() + instruction.rip_displacement_offset, &displacement,
                    sizeof displacement);
      }
      a.bytes() += moved;
      offset += instruction.length;
    }
    int64_t back = static_cast<int64_t>(target + run_length) - static_cast<int64_t>(a.here() + 5);
    if (!fits_rel32(back)) {
      return Status::error(StatusCode::kInvalidArgument,
                           fmt::format("trampoline at {:#x} is out of reach of {:#x}", trampoline,
                                       target));
    }
    a.raw({0xe9});
    a.u32(static_cast<uint32_t>(static_cast<int32_t>(back)));
    return Status::ok();
  };
  // The tracer resumes a thread after the trap when the rest of the state
  // (FPU registers, memory) did not match either.
  REPRO_RETURN_IF_ERROR(run_moved_instructions(&code.moved_addresses));
  // Not this visit: restore, run the displaced instruction, go back.
  for (size_t at : misses) a.bind_here(at);
  restore();
  REPRO_RETURN_IF_ERROR(run_moved_instructions(nullptr));
  if (a.bytes().size() > kTrampolineMaxSize) {
    return Status::error(StatusCode::kInvalidArgument, "trampoline code too long");
  }
  code.bytes = std::move(a.bytes());
  return code;
}

Result<std::string> jump_to_trampoline(uint64_t target, uint64_t trampoline, size_t length) {
  int64_t delta = static_cast<int64_t>(trampoline) - static_cast<int64_t>(target + 5);
  if (length < 5 || !fits_rel32(delta)) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("no jump from {:#x} to {:#x} in {} bytes", target, trampoline,
                                     length));
  }
  std::string bytes(length, static_cast<char>(0xcc));
  bytes[0] = static_cast<char>(0xe9);
  int32_t rel = static_cast<int32_t>(delta);
  std::memcpy(bytes.data() + 1, &rel, sizeof rel);
  return bytes;
}

}  // namespace repro::patch
