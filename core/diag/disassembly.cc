#include "core/diag/disassembly.h"

#include <capstone/capstone.h>
#include <fmt/core.h>

#include "core/os/tracee.h"

namespace repro::diag {
namespace {

// The longest x86 instruction the CPU accepts.
constexpr size_t kMaxInstructionBytes = 16;

}  // namespace

std::string disassemble(pid_t tid, uint64_t address, int count) {
  uint8_t code[64] = {};
  if (!os::read_memory(tid, address, code, sizeof code).is_ok()) {
    return fmt::format("  (cannot read code at {:#x})\n", address);
  }
  csh handle;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
    return "  (capstone unavailable)\n";
  }
  cs_insn* insns = nullptr;
  size_t n = cs_disasm(handle, code, sizeof code, address, static_cast<size_t>(count), &insns);
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    text += fmt::format("  {:#x}: {} {}\n", insns[i].address, insns[i].mnemonic, insns[i].op_str);
  }
  cs_free(insns, n);
  cs_close(&handle);
  return text;
}

Instruction disassemble_one(pid_t tid, uint64_t address) {
  Instruction instruction;
  uint8_t code[kMaxInstructionBytes] = {};
  size_t readable = sizeof code;
  // An instruction near the end of a mapping: fewer bytes are readable.
  while (readable > 0 && !os::read_memory(tid, address, code, readable).is_ok()) {
    --readable;
  }
  if (readable == 0) {
    return instruction;
  }
  csh handle;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
    instruction.bytes.assign(reinterpret_cast<const char*>(code), readable);
    return instruction;
  }
  cs_insn* insns = nullptr;
  size_t n = cs_disasm(handle, code, readable, address, 1, &insns);
  if (n == 1) {
    instruction.bytes.assign(reinterpret_cast<const char*>(code), insns[0].size);
    instruction.text = insns[0].op_str[0] == '\0'
                           ? std::string(insns[0].mnemonic)
                           : fmt::format("{} {}", insns[0].mnemonic, insns[0].op_str);
  } else {
    instruction.bytes.assign(reinterpret_cast<const char*>(code), readable);
  }
  cs_free(insns, n);
  cs_close(&handle);
  return instruction;
}

}  // namespace repro::diag
