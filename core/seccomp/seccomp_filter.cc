#include "core/seccomp/seccomp_filter.h"

#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <cerrno>

#include "core/os/untraced_syscalls.h"

namespace repro::seccomp {

int install_trace_filter(bool trap_rdtsc) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return errno;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRACE(0));
  if (ctx == nullptr) {
    return ENOMEM;
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
    rc = seccomp_load(ctx);
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
