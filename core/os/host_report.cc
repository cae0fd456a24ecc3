#include "core/os/host_report.h"

#include <fmt/core.h>

#include <cstring>
#include <utility>

namespace repro::os {
namespace {

HostCheck make_check(std::string name, bool needed, CheckStatus status, std::string found,
                     std::string consequence, std::string verdict_phrase = "") {
  HostCheck check;
  check.name = std::move(name);
  check.needed = needed;
  check.status = status;
  check.found = std::move(found);
  check.consequence = std::move(consequence);
  if (needed && status != CheckStatus::kOk) {
    check.verdict_phrase = std::move(verdict_phrase);
  }
  return check;
}

std::string probe_failed(const Status& status) {
  return fmt::format("the probe failed: {}", status.message());
}

HostCheck assess_ptrace(const Result<PtraceProbe>& probe) {
  constexpr const char* kName = "ptrace";
  const char* missing =
      "repro cannot record or replay: it traces every program it runs (in a container, grant "
      "CAP_SYS_PTRACE or use a seccomp profile that allows ptrace)";
  if (!probe.is_ok()) {
    return make_check(kName, true, CheckStatus::kMissing, probe_failed(probe.status()), missing,
                      "ptrace could not be probed");
  }
  std::string yama;
  if (probe->yama_scope >= 0) {
    yama = fmt::format("yama ptrace_scope {}", probe->yama_scope);
  } else if (probe->yama_errno == ENOENT) {
    yama = "no yama (no /proc/sys/kernel/yama/ptrace_scope)";
  } else {
    yama = fmt::format("yama ptrace_scope unreadable: {}", errno_text(probe->yama_errno));
  }
  if (probe->works()) {
    return make_check(kName, true, CheckStatus::kOk,
                      yama + "; PTRACE_SEIZE of a child works, with repro's options",
                      "repro can trace the programs it runs");
  }
  if (probe->yama_scope >= 2) {
    missing =
        probe->yama_scope == 2
            ? "repro cannot record or replay: yama ptrace_scope 2 allows ptrace only with "
              "CAP_SYS_PTRACE"
            : "repro cannot record or replay: yama ptrace_scope 3 forbids ptrace until reboot";
  }
  return make_check(
      kName, true, CheckStatus::kMissing,
      fmt::format("{}; PTRACE_SEIZE of a child failed: {}", yama, errno_text(probe->seize_errno)),
      missing, "ptrace is not permitted");
}

HostCheck assess_seccomp_inherited(const Result<SeccompStatus>& probe) {
  constexpr const char* kName = "seccomp-inherited";
  if (!probe.is_ok()) {
    return make_check(kName, false, CheckStatus::kMissing, probe_failed(probe.status()),
                      "not needed: informational only");
  }
  if (probe->mode < 0) {
    return make_check(kName, false, CheckStatus::kMissing, "/proc/self/status has no Seccomp line",
                      "not needed: informational, but this kernel seems to lack seccomp (see "
                      "seccomp-trace)");
  }
  if (probe->mode == 0) {
    return make_check(kName, false, CheckStatus::kOk, "no seccomp filter on repro itself",
                      "nothing above repro filters syscalls");
  }
  std::string count = probe->filter_count >= 0 ? fmt::format("{}", probe->filter_count) : "some";
  return make_check(
      kName, false, CheckStatus::kOk,
      fmt::format("repro itself runs under {} seccomp filter(s) (Seccomp: {}), from a container "
                  "runtime or a parent process",
                  count, probe->mode),
      "informational: such a filter may refuse ptrace or personality (see those lines)");
}

HostCheck assess_seccomp_trace(const Result<SeccompTraceProbe>& probe) {
  constexpr const char* kName = "seccomp-trace";
  const char* missing =
      "repro cannot record or replay: it intercepts syscalls with a SECCOMP_RET_TRACE filter";
  const char* phrase = "seccomp filters cannot stop a traced process";
  if (!probe.is_ok()) {
    return make_check(kName, true, CheckStatus::kMissing, probe_failed(probe.status()), missing,
                      phrase);
  }
  if (probe->works()) {
    return make_check(kName, true, CheckStatus::kOk,
                      "a SECCOMP_RET_TRACE filter stops a seized child at getppid",
                      "repro sees the syscalls it must record");
  }
  if (probe->seize_errno != 0) {
    // The ptrace line says why; the verdict need not say it twice.
    return make_check(
        kName, true, CheckStatus::kMissing,
        fmt::format("not tried: PTRACE_SEIZE failed: {}", errno_text(probe->seize_errno)), missing);
  }
  std::string found;
  if (probe->filter_errno != 0) {
    found = fmt::format("installing a seccomp filter failed: {}", errno_text(probe->filter_errno));
  } else {
    found = "a SECCOMP_RET_TRACE filter was installed, but getppid did not stop the child";
  }
  return make_check(kName, true, CheckStatus::kMissing, found, missing, phrase);
}

HostCheck assess_seccomp_user_notif(const Result<int>& probe) {
  constexpr const char* kName = "seccomp-user-notif";
  const char* consequence = "not needed: repro does not use it (no faster than its ptrace stops where it could serve, docs/performance.md)";
  if (!probe.is_ok()) {
    return make_check(kName, false, CheckStatus::kMissing, probe_failed(probe.status()),
                      consequence);
  }
  if (probe.value() == 0) {
    return make_check(kName, false, CheckStatus::kOk,
                      "a SECCOMP_RET_USER_NOTIF filter gives a listener fd", consequence);
  }
  return make_check(kName, false, CheckStatus::kMissing,
                    fmt::format("seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER) failed: {}",
                                errno_text(probe.value())),
                    consequence);
}

HostCheck assess_aslr(const Result<AslrProbe>& probe) {
  constexpr const char* kName = "disable-aslr";
  const char* missing =
      "repro cannot record or replay: it starts every program without address-space "
      "randomisation (Docker's default seccomp profile refuses this; use "
      "--security-opt seccomp=unconfined or a profile that allows it)";
  const char* phrase = "address-space randomisation cannot be turned off";
  if (!probe.is_ok()) {
    return make_check(kName, true, CheckStatus::kMissing, probe_failed(probe.status()), missing,
                      phrase);
  }
  if (probe->works()) {
    return make_check(kName, true, CheckStatus::kOk, "personality(ADDR_NO_RANDOMIZE) takes effect",
                      "programs get the same addresses when recorded and replayed");
  }
  std::string found = probe->personality_errno != 0
                          ? fmt::format("personality(ADDR_NO_RANDOMIZE) failed: {}",
                                        errno_text(probe->personality_errno))
                          : "personality(ADDR_NO_RANDOMIZE) was accepted, but the flag is not set";
  return make_check(kName, true, CheckStatus::kMissing, found, missing, phrase);
}

HostCheck assess_tsc(const Result<TscTrapProbe>& probe, TscMode mode) {
  constexpr const char* kName = "rdtsc-trap";
  const char* patching =
      "repro patches rdtsc/rdtscp sites in the code it loads (patching mode); rdtsc from code "
      "generated at run time (JIT) is not recorded";
  const char* phrase = "rdtsc patching";
  if (!probe.is_ok()) {
    return make_check(kName, true, CheckStatus::kDegraded, probe_failed(probe.status()), patching,
                      phrase);
  }
  if (!probe->traps()) {
    return make_check(kName, true, CheckStatus::kDegraded, probe->describe(), patching, phrase);
  }
  std::string consequence = "rdtsc/rdtscp are trapped and emulated";
  if (mode == TscMode::kPatch) {
    consequence += "; REPRO_TSC=patch is set, so repro patches their sites instead (patching mode)";
  }
  return make_check(kName, true, CheckStatus::kOk, probe->describe(), consequence);
}

HostCheck assess_cpuid_faulting(const Result<CpuidFaultProbe>& probe) {
  constexpr const char* kName = "cpuid-faulting";
  const char* not_trapped =
      "cpuid cannot be trapped: traces replay only on the same CPU model (the header records it)";
  if (!probe.is_ok()) {
    return make_check(kName, false, CheckStatus::kDegraded, probe_failed(probe.status()),
                      not_trapped);
  }
  std::string get = fmt::format("arch_prctl(ARCH_GET_CPUID) = {}", probe->get_result);
  if (probe->works()) {
    return make_check(kName, false, CheckStatus::kOk,
                      get + "; after ARCH_SET_CPUID 0, cpuid faults",
                      "not needed: repro does not trap cpuid yet, so traces replay only on the "
                      "same CPU model (the header records it)");
  }
  std::string found =
      probe->set_errno != 0
          ? fmt::format("{}; ARCH_SET_CPUID 0 failed: {}", get, errno_text(probe->set_errno))
          : get + "; ARCH_SET_CPUID 0 was accepted, but cpuid still runs";
  return make_check(kName, false, CheckStatus::kDegraded, found, not_trapped);
}

HostCheck assess_perf_counters(const PerfCounterProbe& probe) {
  constexpr const char* kName = "perf-counters";
  const char* consequence =
      "not needed: repro names preemption points by registers and memory hashes";
  if (probe.works()) {
    return make_check(kName, false, CheckStatus::kOk,
                      "perf_event_open opens the instructions and branches counters", consequence);
  }
  auto one = [](int err) { return err == 0 ? std::string("opens") : errno_text(err); };
  return make_check(kName, false, CheckStatus::kMissing,
                    fmt::format("perf_event_open: instructions {}, branches {}",
                                one(probe.instructions_errno), one(probe.branches_errno)),
                    consequence);
}

HostCheck assess_debug_registers(const Result<DebugRegisterProbe>& probe) {
  constexpr const char* kName = "hw-breakpoints";
  const char* consequence =
      "not needed by repro itself; only a debugger attached to a replay uses them (hardware "
      "watchpoints)";
  if (!probe.is_ok()) {
    return make_check(kName, false, CheckStatus::kMissing, probe_failed(probe.status()),
                      consequence);
  }
  if (probe->seize_errno != 0) {
    return make_check(
        kName, false, CheckStatus::kMissing,
        fmt::format("not tried: PTRACE_SEIZE failed: {}", errno_text(probe->seize_errno)),
        consequence);
  }
  if (probe->poke_errno != 0) {
    return make_check(kName, false, CheckStatus::kMissing,
                      fmt::format("PTRACE_POKEUSER of the debug registers failed: {}",
                                  errno_text(probe->poke_errno)),
                      consequence);
  }
  if (probe->breakpoint_fired && probe->watchpoint_fired) {
    return make_check(kName, false, CheckStatus::kOk,
                      "an execute breakpoint and a write watchpoint both stopped a child",
                      consequence);
  }
  if (!probe->breakpoint_fired && !probe->watchpoint_fired) {
    return make_check(kName, false, CheckStatus::kMissing,
                      "debug registers were set, but neither breakpoint nor watchpoint fired",
                      consequence);
  }
  return make_check(kName, false, CheckStatus::kDegraded,
                    probe->breakpoint_fired
                        ? "the execute breakpoint fired, the write watchpoint did not"
                        : "the write watchpoint fired, the execute breakpoint did not",
                    consequence);
}

HostCheck assess_cpu_pinning(const Result<CpuPinningProbe>& probe) {
  constexpr const char* kName = "cpu-pinning";
  const char* unpinned =
      "recording runs unpinned, as with --no-pin: ptrace stops cross CPUs and cost more";
  const char* phrase = "no cpu pinning";
  if (!probe.is_ok()) {
    return make_check(kName, true, CheckStatus::kDegraded, probe_failed(probe.status()), unpinned,
                      phrase);
  }
  std::string allowed = fmt::format("{} CPU(s) allowed", probe->allowed_cpus);
  if (probe->pinned) {
    return make_check(kName, true, CheckStatus::kOk,
                      fmt::format("{}; a child bound itself to CPU {}", allowed, probe->target_cpu),
                      "repro runs itself and the program on one CPU (cheaper ptrace stops)");
  }
  std::string found;
  if (probe->affinity_errno != 0) {
    found = fmt::format("{}; binding to CPU {} failed: {}", allowed, probe->target_cpu,
                        errno_text(probe->affinity_errno));
  } else if (probe->target_cpu < 0) {
    found = "the affinity mask names no CPU";
  } else {
    found = fmt::format("{}; sched_setaffinity to CPU {} was accepted, but the child ran elsewhere",
                        allowed, probe->target_cpu);
  }
  return make_check(kName, true, CheckStatus::kDegraded, found, unpinned, phrase);
}

HostCheck assess_replay_isolation(const Result<ReplayIsolationProbe>& probe) {
  constexpr const char* kName = "replay-isolation";
  const char* unguarded =
      "not needed: replay runs the program unisolated, and only emulation keeps it from the "
      "network and the file system";
  if (!probe.is_ok()) {
    return make_check(kName, false, CheckStatus::kDegraded, probe_failed(probe.status()),
                      unguarded);
  }
  if (probe->works()) {
    return make_check(kName, false, CheckStatus::kOk,
                      "a child entered new network and mount namespaces: / read-only, "
                      "127.0.0.1 unreachable",
                      "replay runs the program with no network and the file system read-only "
                      "(but its scratch directory)");
  }
  std::string found;
  if (probe->failure.failed()) {
    found = fmt::format("{}: {}", probe->failure.step, errno_text(probe->failure.errnum));
  } else if (!probe->read_only) {
    found = "the namespaces were made, but / was still writable";
  } else {
    found = "the namespaces were made, but 127.0.0.1 was still reachable";
  }
  return make_check(kName, false, CheckStatus::kDegraded, found, unguarded);
}

HostCheck assess_pipe_nowait(const Result<int>& probe) {
  constexpr const char* kName = "pipe-nowait";
  const char* slow = "pipe reads and writes stop at repro while recording, as they do without "
                     "the fast path";
  if (!probe.is_ok()) {
    return make_check(kName, false, CheckStatus::kDegraded, probe_failed(probe.status()), slow);
  }
  if (probe.value() == 0) {
    return make_check(kName, false, CheckStatus::kOk,
                      "preadv2 with RWF_NOWAIT of an empty pipe fails with EAGAIN",
                      "the fast path reads and writes pipes without a stop where they need "
                      "not wait");
  }
  return make_check(kName, false, CheckStatus::kDegraded,
                    fmt::format("preadv2 with RWF_NOWAIT of an empty pipe: {}",
                                errno_text(probe.value())),
                    slow);
}

}  // namespace

HostFacts probe_host() {
  return HostFacts{
      .ptrace = probe_ptrace(),
      .seccomp_status = probe_seccomp_status(),
      .seccomp_trace = probe_seccomp_trace(),
      .seccomp_user_notif = probe_seccomp_user_notif(),
      .aslr = probe_disable_aslr(),
      .tsc = probe_tsc_trapping(),
      .cpuid_faulting = probe_cpuid_faulting(),
      .perf_counters = probe_perf_counters(),
      .debug_registers = probe_debug_registers(),
      .cpu_pinning = probe_cpu_pinning(),
      .replay_isolation = probe_replay_isolation(),
      .pipe_nowait = probe_pipe_nowait(),
      .cpu = probe_cpu(),
      .kernel = probe_kernel(),
  };
}

const char* check_status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk: return "OK";
    case CheckStatus::kDegraded: return "DEGRADED";
    case CheckStatus::kMissing: return "MISSING";
  }
  return "?";
}

const char* tsc_mode_name(TscMode mode) { return mode == TscMode::kTrap ? "trap" : "patch"; }

TscMode choose_tsc_mode(const Result<TscTrapProbe>& tsc, TscRequest request) {
  if (request == TscRequest::kPatch) {
    return TscMode::kPatch;
  }
  return tsc.is_ok() && tsc->traps() ? TscMode::kTrap : TscMode::kPatch;
}

std::vector<HostCheck> assess_host(const HostFacts& facts, TscMode tsc_mode) {
  return {
      assess_ptrace(facts.ptrace),
      assess_seccomp_inherited(facts.seccomp_status),
      assess_seccomp_trace(facts.seccomp_trace),
      assess_seccomp_user_notif(facts.seccomp_user_notif),
      assess_aslr(facts.aslr),
      assess_tsc(facts.tsc, tsc_mode),
      assess_cpuid_faulting(facts.cpuid_faulting),
      assess_perf_counters(facts.perf_counters),
      assess_debug_registers(facts.debug_registers),
      assess_cpu_pinning(facts.cpu_pinning),
      assess_replay_isolation(facts.replay_isolation),
      assess_pipe_nowait(facts.pipe_nowait),
  };
}

bool can_record(const std::vector<HostCheck>& checks) {
  for (const HostCheck& check : checks) {
    if (check.needed && check.status == CheckStatus::kMissing) {
      return false;
    }
  }
  return true;
}

std::string verdict(const std::vector<HostCheck>& checks) {
  std::string missing;
  std::string degraded;
  for (const HostCheck& check : checks) {
    if (!check.needed || check.status == CheckStatus::kOk) {
      continue;
    }
    std::string& list = check.status == CheckStatus::kMissing ? missing : degraded;
    // A check that failed only because another did has no phrase of its own.
    if (!check.verdict_phrase.empty()) {
      list += (list.empty() ? "" : ", ") + check.verdict_phrase;
    }
  }
  if (missing.empty() && !can_record(checks)) {
    missing = "a needed check is missing";
  }
  if (!missing.empty()) {
    return "repro cannot record here: " + missing;
  }
  if (!degraded.empty()) {
    return "repro works here, degraded: " + degraded;
  }
  return "repro works here";
}

}  // namespace repro::os
