#include "core/diag/disassembly.h"

#include <capstone/capstone.h>
#include <fmt/core.h>

#include "core/os/tracee.h"

namespace repro::diag {

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

}  // namespace repro::diag
