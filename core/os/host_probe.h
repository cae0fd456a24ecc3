#pragma once
// Host probes: what this machine lets repro do. Each function checks one
// capability for real (mostly in a short-lived child process, so a probe
// that faults or changes process state harms nothing) and says what it
// found. Hosts differ in ways no flag in /proc admits: an AMD host under a
// paravirtualising hypervisor accepts prctl(PR_SET_TSC, PR_TSC_SIGSEGV) and
// still lets rdtsc run. So repro tries each feature before relying on it.
//
// Thread-compatible; each probe forks, so call them before starting
// tracees (a probe child is reaped by pid and never seen by waitpid(-1)
// afterwards).

#include <string>

#include "core/base/status.h"

namespace repro::os {

/// What prctl(PR_SET_TSC, PR_TSC_SIGSEGV) does here, tried in a child.
struct TscTrapProbe {
  bool prctl_accepted = false;  // the prctl returned 0
  int prctl_errno = 0;          // its errno when it did not
  bool rdtsc_faults = false;    // rdtsc then raised SIGSEGV
  bool rdtscp_faults = false;   // rdtscp then raised SIGSEGV (or the CPU lacks it)
  /// True if both instructions fault: repro can trap and emulate them.
  bool traps() const { return prctl_accepted && rdtsc_faults && rdtscp_faults; }
  /// One line for messages: "rdtsc faults under PR_SET_TSC", ...
  std::string describe() const;
};

/// Runs rdtsc and rdtscp in children with PR_TSC_SIGSEGV set. Errors:
/// io_error (fork failed).
Result<TscTrapProbe> probe_tsc_trapping();

/// What the environment variable REPRO_TSC asks for: unset, empty or
/// "auto" (trap where the host can, patch elsewhere), "trap", or "patch"
/// (patching mode on any host, so every machine can test it).
enum class TscRequest { kAuto, kTrap, kPatch };
/// Errors: invalid_argument for any other value.
Result<TscRequest> tsc_request_from_env();

}  // namespace repro::os
