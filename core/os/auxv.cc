#include "core/os/auxv.h"

#include <elf.h>
#include <fmt/core.h>

#include <algorithm>
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
  uint64_t first_arg = 0;
  if (argc > 0) {
    REPRO_RETURN_IF_ERROR(read_memory(tid, cursor + 8, &first_arg, 8));
  }
  cursor += 8 * (argc + 2);  // argc, argv[], NULL
  uint64_t first_env = 0;
  for (int guard = 0; guard < (1 << 20); ++guard) {  // envp[], NULL
    uint64_t pointer = 0;
    REPRO_RETURN_IF_ERROR(read_memory(tid, cursor, &pointer, 8));
    cursor += 8;
    if (first_env == 0) {
      first_env = pointer;
    }
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
  if (result.execfn_address != 0) {
    REPRO_ASSIGN_OR_RETURN(result.execfn, read_c_string(tid, result.execfn_address));
  }
  if (argc > 0) {
    // The kernel copies the strings back to back: argv's, then envp's,
    // then AT_EXECFN's.
    uint64_t end = first_env != 0 ? first_env : result.execfn_address;
    if (first_arg == 0 || end <= first_arg || end - first_arg > (64u << 20)) {
      return Status::error(StatusCode::kIoError, "argv strings of the new image are not in place");
    }
    REPRO_ASSIGN_OR_RETURN(result.argv, read_memory(tid, first_arg, end - first_arg));
    if (static_cast<uint64_t>(std::count(result.argv.begin(), result.argv.end(), '\0')) != argc ||
        result.argv.back() != '\0') {
      return Status::error(StatusCode::kIoError,
                           fmt::format("argv of the new image does not hold {} strings", argc));
    }
  }
  return result;
}

}  // namespace repro::os
