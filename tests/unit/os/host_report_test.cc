#include "core/os/host_report.h"

#include <catch2/catch.hpp>
#include <cerrno>

namespace repro::os {
namespace {

// The facts of a host where everything works (no probe runs: unit tests
// never fork).
HostFacts healthy_host() {
  TscTrapProbe tsc;
  tsc.prctl_accepted = true;
  tsc.rdtsc_faults = true;
  tsc.rdtscp_faults = true;
  CpuidFaultProbe cpuid;
  cpuid.cpuid_faults = true;
  DebugRegisterProbe debug;
  debug.breakpoint_fired = true;
  debug.watchpoint_fired = true;
  CpuPinningProbe pinning;
  pinning.allowed_cpus = 2;
  pinning.target_cpu = 1;
  pinning.pinned = true;
  ReplayIsolationProbe isolation;
  isolation.read_only = true;
  isolation.network_unreachable = true;
  SeccompTraceProbe trace;
  trace.trace_stop_seen = true;
  AslrProbe aslr;
  aslr.flag_set = true;
  return HostFacts{
      .ptrace = PtraceProbe{},
      .seccomp_status = SeccompStatus{.mode = 0, .filter_count = 0},
      .seccomp_trace = trace,
      .seccomp_user_notif = 0,
      .aslr = aslr,
      .tsc = tsc,
      .cpuid_faulting = cpuid,
      .perf_counters = PerfCounterProbe{},
      .debug_registers = debug,
      .cpu_pinning = pinning,
      .replay_isolation = isolation,
      .pipe_nowait = 0,
      .cpu = CpuInfo{},
      .kernel = KernelInfo{"6.1.0", "#1", "x86_64"},
  };
}

const HostCheck& find(const std::vector<HostCheck>& checks, const std::string& name) {
  for (const HostCheck& check : checks) {
    if (check.name == name) {
      return check;
    }
  }
  FAIL("no check named " << name);
  return checks.front();
}

TEST_CASE("a host where every probe worked gets every check ok and works", "[os][host]") {
  std::vector<HostCheck> checks = assess_host(healthy_host(), TscMode::kTrap);
  REQUIRE(checks.size() == 12);
  for (const HostCheck& check : checks) {
    CHECK(check.status == CheckStatus::kOk);
    CHECK(check.verdict_phrase.empty());
  }
  CHECK(can_record(checks));
  CHECK(verdict(checks) == "repro works here");
  // The list `repro doctor --help` and docs/cli.md give.
  std::vector<std::string> needed;
  for (const HostCheck& check : checks) {
    if (check.needed) {
      needed.push_back(check.name);
    }
  }
  CHECK(needed == std::vector<std::string>{"ptrace", "seccomp-trace", "disable-aslr", "rdtsc-trap",
                                           "cpu-pinning"});
}

TEST_CASE("a denied ptrace makes the host unable to record and says so once", "[os][host]") {
  HostFacts facts = healthy_host();
  PtraceProbe ptrace;
  ptrace.seize_errno = EPERM;
  facts.ptrace = ptrace;
  SeccompTraceProbe trace;
  trace.seize_errno = EPERM;
  facts.seccomp_trace = trace;
  std::vector<HostCheck> checks = assess_host(facts, TscMode::kTrap);
  CHECK(find(checks, "ptrace").status == CheckStatus::kMissing);
  CHECK(find(checks, "ptrace").found.find("EPERM") != std::string::npos);
  CHECK(find(checks, "seccomp-trace").status == CheckStatus::kMissing);
  CHECK_FALSE(can_record(checks));
  CHECK(verdict(checks) == "repro cannot record here: ptrace is not permitted");
}

TEST_CASE("rdtsc that does not trap degrades to patching but still records", "[os][host]") {
  HostFacts facts = healthy_host();
  TscTrapProbe tsc;
  tsc.prctl_accepted = true;
  facts.tsc = tsc;
  CHECK(choose_tsc_mode(facts.tsc, TscRequest::kAuto) == TscMode::kPatch);
  std::vector<HostCheck> checks = assess_host(facts, TscMode::kPatch);
  const HostCheck& rdtsc = find(checks, "rdtsc-trap");
  CHECK(rdtsc.status == CheckStatus::kDegraded);
  CHECK(rdtsc.consequence.find("patching mode") != std::string::npos);
  CHECK(can_record(checks));
  CHECK(verdict(checks) == "repro works here, degraded: rdtsc patching");
}

TEST_CASE("REPRO_TSC=patch forces patching mode only when it says patch", "[os][host]") {
  HostFacts facts = healthy_host();
  CHECK(choose_tsc_mode(facts.tsc, TscRequest::kAuto) == TscMode::kTrap);
  CHECK(choose_tsc_mode(facts.tsc, TscRequest::kTrap) == TscMode::kTrap);
  CHECK(choose_tsc_mode(facts.tsc, TscRequest::kPatch) == TscMode::kPatch);
  Result<TscTrapProbe> failed = Status::error(StatusCode::kIoError, "fork failed");
  CHECK(choose_tsc_mode(failed, TscRequest::kAuto) == TscMode::kPatch);
}

TEST_CASE("features repro does not need never change the verdict", "[os][host]") {
  HostFacts facts = healthy_host();
  facts.perf_counters = PerfCounterProbe{.instructions_errno = ENOENT, .branches_errno = ENOENT};
  facts.debug_registers = DebugRegisterProbe{};
  CpuidFaultProbe cpuid;
  cpuid.set_errno = ENODEV;
  facts.cpuid_faulting = cpuid;
  facts.seccomp_user_notif = EINVAL;
  facts.pipe_nowait = EOPNOTSUPP;
  std::vector<HostCheck> checks = assess_host(facts, TscMode::kTrap);
  CHECK(find(checks, "pipe-nowait").status == CheckStatus::kDegraded);
  CHECK(find(checks, "pipe-nowait").found.find("EOPNOTSUPP") != std::string::npos);
  CHECK_FALSE(find(checks, "pipe-nowait").needed);
  CHECK(find(checks, "perf-counters").status == CheckStatus::kMissing);
  CHECK_FALSE(find(checks, "perf-counters").needed);
  CHECK(find(checks, "hw-breakpoints").status == CheckStatus::kMissing);
  CHECK(find(checks, "cpuid-faulting").status == CheckStatus::kDegraded);
  CHECK(find(checks, "seccomp-user-notif").status == CheckStatus::kMissing);
  CHECK(verdict(checks) == "repro works here");
}

TEST_CASE("a probe that could not run is reported as not working, with its error", "[os][host]") {
  HostFacts facts = healthy_host();
  facts.aslr =
      Status::error(StatusCode::kIoError, "fork (host probe): Resource temporarily unavailable");
  facts.cpu_pinning =
      Status::error(StatusCode::kIoError, "host probe child 7 did not stop or exit within 2 s");
  std::vector<HostCheck> checks = assess_host(facts, TscMode::kTrap);
  CHECK(find(checks, "disable-aslr").status == CheckStatus::kMissing);
  CHECK(find(checks, "disable-aslr").found.find("Resource temporarily") != std::string::npos);
  CHECK(find(checks, "cpu-pinning").status == CheckStatus::kDegraded);
  CHECK(verdict(checks) ==
        "repro cannot record here: address-space randomisation cannot be turned off");
}

TEST_CASE("replay isolation refused is degraded, names the call, and does not stop recording",
          "[os][host]") {
  HostFacts facts = healthy_host();
  ReplayIsolationProbe isolation;
  isolation.failure = {"unshare(CLONE_NEWUSER|CLONE_NEWNET|CLONE_NEWNS)", EPERM};
  facts.replay_isolation = isolation;
  std::vector<HostCheck> checks = assess_host(facts, TscMode::kTrap);
  const HostCheck& check = find(checks, "replay-isolation");
  CHECK(check.status == CheckStatus::kDegraded);
  CHECK_FALSE(check.needed);
  CHECK(check.found.find("unshare(CLONE_NEWUSER") != std::string::npos);
  CHECK(check.found.find("EPERM") != std::string::npos);
  CHECK(verdict(checks) == "repro works here");

  isolation = ReplayIsolationProbe{};
  isolation.network_unreachable = true;  // namespaces made, but / still writable
  facts.replay_isolation = isolation;
  checks = assess_host(facts, TscMode::kTrap);
  CHECK(find(checks, "replay-isolation").status == CheckStatus::kDegraded);
  CHECK(find(checks, "replay-isolation").found.find("writable") != std::string::npos);
}

TEST_CASE("seccomp status lines are parsed, and absent ones stay -1", "[os][host]") {
  SeccompStatus status = parse_seccomp_status(
      "Name:\tbash\nSeccomp:\t2\nSeccomp_filters:\t3\nSpeculation_Store_Bypass:\tthread "
      "vulnerable\n");
  CHECK(status.mode == 2);
  CHECK(status.filter_count == 3);
  SeccompStatus old_kernel = parse_seccomp_status("Name:\tbash\nSeccomp:\t0");
  CHECK(old_kernel.mode == 0);
  CHECK(old_kernel.filter_count == -1);
  SeccompStatus none = parse_seccomp_status("");
  CHECK(none.mode == -1);
  CHECK(none.filter_count == -1);
}

}  // namespace
}  // namespace repro::os
