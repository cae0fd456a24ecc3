#pragma once
// The vDSO: a small shared object the kernel maps into every process.
// Its functions (clock_gettime, gettimeofday, time, getcpu, clock_getres,
// getrandom on newer kernels) answer from data the kernel keeps current,
// without a syscall, so a tracer never sees what they returned.
//
// repro keeps the vDSO where the kernel put it: programs find it through
// AT_SYSINFO_EHDR and call into it, and some parse its ELF image. At every
// exec stop, in recording and replay alike, it rewrites the entry of each
// function the vDSO exports:
//   - a function whose syscall has the same arguments and result becomes
//     `mov eax, NR; syscall; ret`, a real syscall the recorder logs and
//     replay answers;
//   - any other (vgetrandom, functions of kernels to come) becomes
//     `mov rax, -ENOSYS; ret`, which the C library takes as "no vDSO
//     function" and falls back to its syscall.
// The vDSO's data pages and the rest of its code are left alone.
//
// Stateless; thread-safe.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace repro::os {

struct VdsoPatch {
  std::string symbol;     // as exported, "__vdso_clock_gettime"
  uint64_t address = 0;   // its entry in the tracee
  int syscall_number = -1;  // the syscall its entry now makes; -1: returns -ENOSYS
};

/// The patches for a vDSO image (its bytes as mapped at `base`), one per
/// exported function, in address order. Errors: corruption (not an ELF
/// image the patcher understands, or a function too short for its stub).
Result<std::vector<VdsoPatch>> plan_vdso_patches(const std::string& image, uint64_t base);

/// Rewrites the vDSO functions of `pid`'s new image, mapped at `base`
/// (AT_SYSINFO_EHDR), and returns what it did. Requires: the process is
/// stopped (at its exec stop). Errors: io_error (memory not readable or
/// writable), corruption (see plan_vdso_patches).
Result<std::vector<VdsoPatch>> patch_vdso(pid_t pid, uint64_t base);

/// The bytes written at a patched entry.
std::string vdso_stub(int syscall_number);

}  // namespace repro::os
