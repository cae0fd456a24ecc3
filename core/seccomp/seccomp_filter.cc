#include "core/seccomp/seccomp_filter.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <vector>

#include "core/base/env_switch.h"
#include "core/base/scoped_fd.h"

#include "core/os/untraced_syscalls.h"

namespace repro::seccomp {
namespace {

// A kernel that mitigates Speculative Store Bypass for seccomp-filtered
// tasks (spec_store_bypass_disable=seccomp, its default on CPUs that need
// it) would force the mitigation on the recorded program, which natively
// runs without it: slower CPU-bound code, and another answer to
// prctl(PR_GET_SPECULATION_CTRL). SECCOMP_FILTER_FLAG_SPEC_ALLOW (Linux
// 4.17) leaves the program as it is natively. REPRO_SECCOMP_SPEC_ALLOW=off
// installs the filter without it.
bool spec_allow_wanted() { return !switched_off("REPRO_SECCOMP_SPEC_ALLOW"); }

// libseccomp's program with, in front, "a syscall from `untraced_ip` is
// allowed": the instruction pointer's two halves compared in turn.
// libseccomp's jumps are relative, so they still land where they did.
int load_with_untraced_ip(scmp_filter_ctx ctx, uint64_t untraced_ip) {
  ScopedFd memory(memfd_create("repro-seccomp", MFD_CLOEXEC));
  if (!memory.valid()) {
    return errno;
  }
  int rc = seccomp_export_bpf(ctx, memory.get());
  if (rc != 0) {
    return -rc;
  }
  off_t size = lseek(memory.get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0) {
    return EINVAL;
  }
  constexpr uint32_t kIpLow = offsetof(seccomp_data, instruction_pointer);
  constexpr uint32_t kIpHigh = kIpLow + 4;
  std::vector<sock_filter> program = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(untraced_ip), 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpHigh),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(untraced_ip >> 32), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  size_t prefix = program.size();
  program.resize(prefix + static_cast<size_t>(size) / sizeof(sock_filter));
  if (pread(memory.get(), program.data() + prefix, static_cast<size_t>(size), 0) != size) {
    return EIO;
  }
  sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
  if (spec_allow_wanted() &&
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &fprog) == 0) {
    return 0;
  }
  // Without the flag (a kernel before 4.17 refuses it).
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
    return errno;
  }
  return 0;
}

}  // namespace

int install_trace_filter(bool trap_rdtsc, uint64_t untraced_ip) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return errno;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRACE(0));
  if (ctx == nullptr) {
    return ENOMEM;
  }
  if (spec_allow_wanted()) {
    // Refused by a kernel before 4.17: the filter then loads without it.
    (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_SSB, 1);
  }
  int rc = 0;
  for (int number : os::kUntracedSyscalls) {
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, number, 0);
    if (rc != 0) {
      break;
    }
  }
  if (rc == 0) {
    // mprotect runs untraced unless it makes memory executable: then the
    // tracer must see it, to patch rdtsc in the new code (patching mode).
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, os::kUntracedUnlessExecutable, 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  }
  if (rc == 0) {
    rc = untraced_ip != 0 ? -load_with_untraced_ip(ctx, untraced_ip) : seccomp_load(ctx);
  }
  seccomp_release(ctx);
  if (rc != 0) {
    return rc < 0 ? -rc : rc;
  }
  // rdtsc and rdtscp now fault with SIGSEGV; the tracer emulates them.
  // Last, right before the caller's execve: from here on, reading the clock
  // through the vDSO faults too, and libseccomp's allocations may do that
  // (AddressSanitizer's allocator does). This prctl is traced by the new
  // filter; spawn_traced() lets such stops run.
  if (trap_rdtsc && prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) {
    return errno;
  }
  return 0;
}

}  // namespace repro::seccomp
