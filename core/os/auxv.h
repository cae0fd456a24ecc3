#pragma once
// The auxiliary vector of a freshly exec'd image, read and patched at the
// PTRACE_EVENT_EXEC stop (when the stack pointer points at argc).
//
// repro makes the vDSO's functions make syscalls (vdso.h), and reads or
// restores the 16 AT_RANDOM bytes that seed the stack protector and
// pointer guard.

#include <sys/types.h>

#include <string>

#include "core/base/status.h"

namespace repro::os {

struct ExecAuxv {
  uint64_t random_address = 0;  // where AT_RANDOM points
  std::string random_bytes;     // the 16 bytes there
  uint64_t execfn_address = 0;  // where AT_EXECFN points: the path given to execve
  std::string execfn;           // the string there ("" if there is none)
  /// The argv strings, each followed by a NUL, as the kernel laid them out
  /// (for a script: interpreter, its argument, the script's path, ...).
  std::string argv;
  uint64_t vdso_address = 0;    // AT_SYSINFO_EHDR; 0: no vDSO, or hidden
};

/// Patches the vDSO's functions to make syscalls (or, where its image is
/// not one patch_vdso understands, hides it: AT_SYSINFO_EHDR becomes
/// AT_IGNORE), and returns the AT_RANDOM location and bytes, AT_EXECFN and
/// the argv strings; io_error if the new stack does not read as one.
/// Requires: `tid` is at its PTRACE_EVENT_EXEC stop.
Result<ExecAuxv> patch_exec_auxv(pid_t tid);

}  // namespace repro::os
