#include "core/os/auxv.h"

#include <elf.h>
#include <fmt/core.h>

#include <vector>

#include "core/os/tracee.h"
#include "core/os/vdso.h"

namespace repro::os {

Result<ExecAuxv> patch_exec_auxv(pid_t tid) {
  REPRO_ASSIGN_OR_RETURN(Registers regs, get_registers(tid));
  uint64_t cursor = regs.rsp;
  uint64_t argc = 0;
  REPRO_RETURN_IF_ERROR(read_memory(tid, cursor, &argc, 8));
  if (argc > (1u << 20)) {
    return Status::error(StatusCode::kIoError, fmt::format("implausible argc {} at exec", argc));
  }
  cursor += 8 * (argc + 2);  // argc, argv[], NULL
  for (int guard = 0; guard < (1 << 20); ++guard) {  // envp[], NULL
    uint64_t pointer = 0;
    REPRO_RETURN_IF_ERROR(read_memory(tid, cursor, &pointer, 8));
    cursor += 8;
    if (pointer == 0) {
      break;
    }
  }
  ExecAuxv result;
  for (int guard = 0; guard < 256; ++guard) {
    uint64_t entry[2];
    REPRO_RETURN_IF_ERROR(read_memory(tid, cursor, entry, sizeof entry));
    if (entry[0] == AT_NULL) {
      break;
    }
    if (entry[0] == AT_SYSINFO_EHDR) {
      result.vdso_address = entry[1];
      if (!patch_vdso(tid, entry[1]).is_ok()) {
        // An image this repro cannot patch (a kernel to come): the C library
        // must not find it, and makes real syscalls.
        uint64_t ignore = AT_IGNORE;
        REPRO_RETURN_IF_ERROR(write_memory(tid, cursor, &ignore, 8));
        result.vdso_address = 0;
      }
    } else if (entry[0] == AT_RANDOM) {
      result.random_address = entry[1];
    } else if (entry[0] == AT_EXECFN) {
      result.execfn_address = entry[1];
    }
    cursor += sizeof entry;
  }
  if (result.random_address == 0) {
    return Status::error(StatusCode::kIoError, "no AT_RANDOM in the new image's auxv");
  }
  REPRO_ASSIGN_OR_RETURN(result.random_bytes, read_memory(tid, result.random_address, 16));
  return result;
}

}  // namespace repro::os
