#include "core/os/host_probe.h"

#include <fmt/core.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace repro::os {
namespace {

// How a probe child ended: exit code, or 128 + the signal that killed it.
Result<int> run_in_child(int (*body)()) {
  pid_t pid = fork();
  if (pid < 0) {
    return Status::from_errno(errno, "fork (host probe)");
  }
  if (pid == 0) {
    // Default actions, so a fault kills the child and the parent sees it.
    for (int sig : {SIGSEGV, SIGILL, SIGBUS}) {
      signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    _exit(body());
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return Status::from_errno(errno, "waiting for a host probe");
    }
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

// Exit codes of the TSC probe children.
constexpr int kRan = 0;         // the instruction ran without a fault
constexpr int kPrctlFailed = 64;  // + errno (at most 63), below 128 + a signal number

int tsc_child(bool rdtscp) {
  if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) {
    return kPrctlFailed + (errno < 64 ? errno : 63);
  }
  unsigned lo = 0;
  unsigned hi = 0;
  unsigned aux = 0;
  if (rdtscp) {
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
  } else {
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  }
  return kRan;
}

}  // namespace

std::string TscTrapProbe::describe() const {
  if (!prctl_accepted) {
    return fmt::format("prctl(PR_SET_TSC) failed: {}", std::strerror(prctl_errno));
  }
  if (traps()) {
    return "rdtsc and rdtscp fault under PR_SET_TSC";
  }
  if (!rdtsc_faults && !rdtscp_faults) {
    return "PR_SET_TSC is accepted but rdtsc and rdtscp still run";
  }
  return rdtsc_faults ? "PR_SET_TSC is accepted but rdtscp still runs"
                      : "PR_SET_TSC is accepted but rdtsc still runs";
}

Result<TscTrapProbe> probe_tsc_trapping() {
  TscTrapProbe probe;
  REPRO_ASSIGN_OR_RETURN(int rdtsc_end, run_in_child([] { return tsc_child(false); }));
  if (rdtsc_end >= kPrctlFailed && rdtsc_end < 128) {
    probe.prctl_errno = rdtsc_end - kPrctlFailed;
    return probe;
  }
  probe.prctl_accepted = true;
  probe.rdtsc_faults = rdtsc_end == 128 + SIGSEGV;
  REPRO_ASSIGN_OR_RETURN(int rdtscp_end, run_in_child([] { return tsc_child(true); }));
  // SIGILL: the CPU has no rdtscp, so programs cannot run it either.
  probe.rdtscp_faults = rdtscp_end == 128 + SIGSEGV || rdtscp_end == 128 + SIGILL;
  return probe;
}

Result<TscRequest> tsc_request_from_env() {
  const char* value = std::getenv("REPRO_TSC");
  std::string_view text = value == nullptr ? "" : value;
  if (text.empty() || text == "auto") {
    return TscRequest::kAuto;
  }
  if (text == "trap") {
    return TscRequest::kTrap;
  }
  if (text == "patch") {
    return TscRequest::kPatch;
  }
  return Status::error(StatusCode::kInvalidArgument,
                       fmt::format("REPRO_TSC='{}': expected auto, trap or patch", text));
}

}  // namespace repro::os
