#include "core/patch/instruction.h"

#include <capstone/capstone.h>

#include <initializer_list>
#include <optional>

#include "core/patch/capstone_handle.h"

namespace repro::patch {
namespace {

const Capstone& decoder() {
  thread_local const Capstone capstone(/*skip_data=*/false);
  return capstone;
}

// Decoding whole functions to find rdtsc needs only instruction ids, and
// details cost several times the decoding itself.
const Capstone& scanner() {
  thread_local const Capstone capstone(/*skip_data=*/false, /*detail=*/false);
  return capstone;
}

const Capstone& sweeper() {
  thread_local const Capstone capstone(/*skip_data=*/true);
  return capstone;
}

// Instructions the tracer must see execute normally: syscalls enter the
// kernel, rdtsc/rdtscp are trapped and emulated by the recorder, cpuid and
// TSX behave differently under a debugger, traps would be mistaken for
// repro's own, and pushf would save the single-step trap flag in memory.
bool must_not_step(unsigned id) {
  switch (id) {
    case X86_INS_SYSCALL:
    case X86_INS_SYSENTER:
    case X86_INS_INT:
    case X86_INS_INT1:
    case X86_INS_INT3:
    case X86_INS_INTO:
    case X86_INS_UD2:
    case X86_INS_HLT:
    case X86_INS_RDTSC:
    case X86_INS_RDTSCP:
    case X86_INS_CPUID:
    case X86_INS_XBEGIN:
    case X86_INS_XEND:
    case X86_INS_XABORT:
    // Stepped, these would push the trap flag the debugger set.
    case X86_INS_PUSHF:
    case X86_INS_PUSHFD:
    case X86_INS_PUSHFQ:
      return true;
    default:
      return false;
  }
}

// A rep-prefixed string instruction runs in steps that each leave rip on
// the instruction (rcx counts down): a thread can stand in its middle,
// which a check at its start would never see. Stepped, it stays in place.
bool is_repeated_string_instruction(const cs_insn* insn) {
  uint8_t rep = insn->detail->x86.prefix[0];
  if (rep != X86_PREFIX_REP && rep != X86_PREFIX_REPNE) {
    return false;
  }
  switch (insn->id) {
    case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
    case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
    case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
    case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
    case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
    case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
    case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
      return true;
    default:
      return false;
  }
}

bool changes_control_flow(csh handle, const cs_insn* insn) {
  for (int group : {CS_GRP_JUMP, CS_GRP_CALL, CS_GRP_RET, CS_GRP_INT, CS_GRP_IRET,
                    CS_GRP_BRANCH_RELATIVE}) {
    if (cs_insn_group(handle, insn, static_cast<unsigned>(group))) {
      return true;
    }
  }
  return false;
}

// The offset of the instruction's rip-relative disp32, 0 if it has none,
// or -1 if it reads rip in a way a displacement fix cannot follow.
int rip_displacement(const cs_insn* insn) {
  const cs_x86& x86 = insn->detail->x86;
  bool uses_rip = false;
  for (uint8_t i = 0; i < x86.op_count; ++i) {
    const cs_x86_op& op = x86.operands[i];
    if (op.type == X86_OP_REG && op.reg == X86_REG_RIP) {
      return -1;
    }
    if (op.type == X86_OP_MEM && (op.mem.base == X86_REG_RIP || op.mem.index == X86_REG_RIP)) {
      if (op.mem.index == X86_REG_RIP || x86.encoding.disp_size != 4) {
        return -1;
      }
      uses_rip = true;
    }
  }
  return uses_rip ? x86.encoding.disp_offset : 0;
}

constexpr uint64_t kCarry = 0x1;
constexpr uint64_t kAdjust = 0x10;
constexpr uint64_t kOverflow = 0x800;

// The arithmetic flags an instruction sets to a defined value, for
// instructions known to read none; nullopt for any other instruction.
std::optional<uint64_t> flags_defined_without_reading(unsigned id) {
  switch (id) {
    case X86_INS_MOV: case X86_INS_MOVABS: case X86_INS_MOVZX: case X86_INS_MOVSX:
    case X86_INS_MOVSXD: case X86_INS_LEA: case X86_INS_NOP:
      return 0;
    case X86_INS_ADD: case X86_INS_SUB: case X86_INS_CMP: case X86_INS_NEG:
      return kArithmeticFlags;
    case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR: case X86_INS_TEST:
      return kArithmeticFlags & ~kAdjust;  // AF undefined
    case X86_INS_INC: case X86_INS_DEC:
      return kArithmeticFlags & ~kCarry;  // CF kept
    case X86_INS_IMUL:
      return kCarry | kOverflow;  // SF, ZF, AF, PF undefined
    default:
      return std::nullopt;
  }
}

}  // namespace

bool arithmetic_flags_dead(const uint8_t* code, size_t size, uint64_t address) {
  if (!decoder().ok()) {
    return false;
  }
  const csh handle = decoder().handle();
  cs_insn* insn = cs_malloc(handle);
  uint64_t undecided = kArithmeticFlags;  // neither read nor overwritten yet
  bool known = true;
  while (known && undecided != 0 && cs_disasm_iter(handle, &code, &size, &address, insn)) {
    std::optional<uint64_t> defined = flags_defined_without_reading(insn->id);
    known = defined.has_value();
    undecided &= ~defined.value_or(0);
  }
  cs_free(insn, 1);
  return known && undecided == 0;
}

Instruction decode_instruction(const uint8_t* code, size_t size, uint64_t address) {
  Instruction result;
  if (!decoder().ok()) {
    return result;
  }
  const csh handle = decoder().handle();
  cs_insn* insn = nullptr;
  if (cs_disasm(handle, code, size, address, 1, &insn) == 1) {
    result.length = static_cast<uint8_t>(insn->size);
    if (!must_not_step(insn->id)) {
      result.kind = InstructionKind::kSteppable;
      int displacement = rip_displacement(insn);
      if (displacement >= 0 && !changes_control_flow(handle, insn) &&
          !is_repeated_string_instruction(insn)) {
        result.kind = InstructionKind::kMovable;
        result.rip_displacement_offset = displacement > 0 ? displacement : -1;
      }
    }
    cs_free(insn, 1);
  }
  return result;
}

std::optional<RepeatedString> repeated_string_at(const uint8_t* code, size_t size) {
  if (!decoder().ok()) {
    return std::nullopt;
  }
  cs_insn* insn = nullptr;
  if (cs_disasm(decoder().handle(), code, size, 0, 1, &insn) != 1) {
    return std::nullopt;
  }
  std::optional<RepeatedString> found;
  const cs_x86& x86 = insn->detail->x86;
  // movs (0xa4, 0xa5), stos (0xaa, 0xab), lods (0xac, 0xad): not cmps or
  // scas, whose compare may end them early, nor the SSE movsd (f2 0f 10).
  // rep or repne (alike for these), and no 0x67 prefix, which would count
  // in ecx and address with esi/edi.
  const uint8_t opcode = x86.opcode[0];
  bool string_op = x86.opcode[1] == 0 && (opcode == 0xa4 || opcode == 0xa5 || opcode == 0xaa ||
                                          opcode == 0xab || opcode == 0xac || opcode == 0xad);
  if (string_op && (x86.prefix[0] == X86_PREFIX_REP || x86.prefix[0] == X86_PREFIX_REPNE) &&
      x86.prefix[3] == 0) {
    // Element size from the encoding (capstone names some prefix orders
    // wrongly): even opcodes move bytes; odd ones 8 with REX.W, 2 with
    // 0x66, else 4.
    RepeatedString op;
    op.length = static_cast<uint8_t>(insn->size);
    op.element_bytes = (opcode & 1) == 0 ? 1 : (x86.rex & 8) ? 8 : x86.prefix[2] == 0x66 ? 2 : 4;
    op.uses_rsi = opcode <= 0xa5 || opcode >= 0xac;
    op.uses_rdi = opcode <= 0xab;
    found = op;
  }
  cs_free(insn, 1);
  return found;
}

std::vector<TscInstruction> find_rdtsc_instructions(const uint8_t* code, size_t size,
                                                    uint64_t address) {
  std::vector<TscInstruction> found;
  if (!scanner().ok()) {
    return found;
  }
  const csh handle = scanner().handle();
  cs_insn* insn = cs_malloc(handle);
  while (cs_disasm_iter(handle, &code, &size, &address, insn)) {
    if (insn->id == X86_INS_RDTSC || insn->id == X86_INS_RDTSCP) {
      found.push_back({insn->address, static_cast<uint8_t>(insn->size), insn->id == X86_INS_RDTSCP});
    }
  }
  cs_free(insn, 1);
  return found;
}

std::vector<Instruction> displaceable_run(const uint8_t* code, size_t size, uint64_t address) {
  std::vector<Instruction> run;
  size_t length = 0;
  while (length < kJumpLength) {
    if (length >= size) {
      return {};
    }
    Instruction instruction = decode_instruction(code + length, size - length, address + length);
    if (instruction.kind != InstructionKind::kMovable) {
      return {};
    }
    run.push_back(instruction);
    length += instruction.length;
  }
  return run;
}

bool direct_branch_lands_inside(const uint8_t* code, size_t size, uint64_t code_address,
                                uint64_t start, uint64_t end) {
  if (!sweeper().ok()) {
    return true;  // cannot tell: assume the worst
  }
  const csh handle = sweeper().handle();
  cs_insn* insn = cs_malloc(handle);
  bool lands = false;
  for (size_t first = 0; first < 4 && first < size && !lands; ++first) {
    const uint8_t* at = code + first;
    size_t left = size - first;
    uint64_t address = code_address + first;
    while (!lands && cs_disasm_iter(handle, &at, &left, &address, insn)) {
      if (insn->detail == nullptr || !(cs_insn_group(handle, insn, CS_GRP_JUMP) ||
                                       cs_insn_group(handle, insn, CS_GRP_CALL))) {
        continue;
      }
      const cs_x86& x86 = insn->detail->x86;
      for (uint8_t i = 0; i < x86.op_count; ++i) {
        if (x86.operands[i].type == X86_OP_IMM) {
          uint64_t target = static_cast<uint64_t>(x86.operands[i].imm);
          lands = lands || (target > start && target < end);
        }
      }
    }
  }
  cs_free(insn, 1);
  return lands;
}

bool may_be_entered_inside(const CodeReader& read, uint64_t start, uint64_t end) {
  constexpr uint64_t kBefore = 2048;
  constexpr uint64_t kAfter = 512;
  for (uint64_t from : {start - kBefore, start & ~uint64_t{4095}}) {
    std::vector<uint8_t> code(end + kAfter - from);
    if (read(from, code.data(), code.size())) {
      return direct_branch_lands_inside(code.data(), code.size(), from, start, end);
    }
    code.resize(end - from);  // the page after may be unmapped
    if (read(from, code.data(), code.size())) {
      return direct_branch_lands_inside(code.data(), code.size(), from, start, end);
    }
  }
  return true;
}

}  // namespace repro::patch
