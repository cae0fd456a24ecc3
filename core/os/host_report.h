#pragma once
// HostReport: what `repro doctor` says about this host. The probes of
// host_probe.h find facts; assess_host() turns them into one HostCheck per
// capability (a status, whether repro needs it, what was found, what that
// means for recording and replay) and verdict() into one line.
//
// The status scheme, chosen so that a feature repro does without never
// reads as a failure:
//   OK        the capability works here.
//   DEGRADED  it does not (fully) work here, and repro or the user falls
//             back to something slower or narrower; the consequence says
//             what.
//   MISSING   it does not work here. For a needed check this means repro
//             cannot record here; for one that is not needed, nothing repro
//             does today is lost, and the consequence begins "not needed".
// `needed` is true for what repro relies on today. Only needed checks
// decide the verdict and the exit status of `repro doctor`.
//
// Everything here is a pure function of its arguments except probe_host(),
// which runs the probes (and so forks). Thread-compatible.

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/os/host_probe.h"

namespace repro::os {

/// Everything the probes found. A probe that could not run (fork failed,
/// its child hung) holds its Status instead.
struct HostFacts {
  Result<PtraceProbe> ptrace;
  Result<SeccompStatus> seccomp_status;
  Result<SeccompTraceProbe> seccomp_trace;
  Result<int> seccomp_user_notif;  // 0 or the errno, as probe_seccomp_user_notif()
  Result<AslrProbe> aslr;
  Result<TscTrapProbe> tsc;
  Result<CpuidFaultProbe> cpuid_faulting;
  PerfCounterProbe perf_counters;
  Result<DebugRegisterProbe> debug_registers;
  Result<CpuPinningProbe> cpu_pinning;
  Result<ReplayIsolationProbe> replay_isolation;
  Result<int> pipe_nowait;  // 0 or the errno, as probe_pipe_nowait()
  CpuInfo cpu;
  Result<KernelInfo> kernel;
};

/// Runs every probe of host_probe.h, one after the other (about 20 forks,
/// tens of milliseconds; at most a few seconds each if a child hangs).
HostFacts probe_host();

enum class CheckStatus { kOk, kDegraded, kMissing };

/// "OK", "DEGRADED", "MISSING".
const char* check_status_name(CheckStatus status);

/// One line of `repro doctor`.
struct HostCheck {
  std::string name;  // stable, for scripts: "ptrace", "rdtsc-trap", ...
  CheckStatus status = CheckStatus::kOk;
  bool needed = false;      // repro relies on it today (see the scheme above)
  std::string found;        // what the probe saw, with errno names
  std::string consequence;  // what that means for repro
  /// For verdict(), when a needed check is not OK: "rdtsc patching",
  /// "ptrace is not permitted". Empty otherwise, and when the check failed
  /// only because another one did (seccomp-trace without ptrace).
  std::string verdict_phrase;
};

/// How repro handles rdtsc/rdtscp: trap and emulate them (PR_SET_TSC), or
/// patch the instruction sites in the code it loads.
enum class TscMode { kTrap, kPatch };

/// "trap", "patch".
const char* tsc_mode_name(TscMode mode);

/// The mode for recording here: patch if `request` (REPRO_TSC) asks for it,
/// or if rdtsc does not trap (or the probe failed); trap otherwise. (A
/// request to trap where the host cannot is the recorder's error to give.)
TscMode choose_tsc_mode(const Result<TscTrapProbe>& tsc, TscRequest request);

/// One check per capability, in a fixed order: ptrace, seccomp-inherited,
/// seccomp-trace, seccomp-user-notif, disable-aslr, rdtsc-trap,
/// cpuid-faulting, perf-counters, hw-breakpoints, cpu-pinning,
/// replay-isolation.
std::vector<HostCheck> assess_host(const HostFacts& facts, TscMode tsc_mode);

/// True if no needed check is MISSING.
bool can_record(const std::vector<HostCheck>& checks);

/// "repro works here", "repro works here, degraded: rdtsc patching", or
/// "repro cannot record here: ptrace is not permitted".
std::string verdict(const std::vector<HostCheck>& checks);

}  // namespace repro::os
