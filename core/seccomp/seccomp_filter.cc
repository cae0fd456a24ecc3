#include "core/seccomp/seccomp_filter.h"

#include <seccomp.h>
#include <sys/prctl.h>

#include <cerrno>

#include "core/os/untraced_syscalls.h"

namespace repro::seccomp {

int install_trace_filter() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return errno;
  }
  // rdtsc and rdtscp now fault with SIGSEGV; the tracer emulates them.
  if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) {
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
    rc = seccomp_load(ctx);
  }
  seccomp_release(ctx);
  return rc < 0 ? -rc : rc;
}

}  // namespace repro::seccomp
