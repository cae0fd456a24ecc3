#pragma once
// Host probes: what this machine lets repro do. Each function checks one
// capability for real (mostly in a short-lived child process, so a probe
// that faults or changes process state harms nothing) and says what it
// found. Hosts differ in ways no flag in /proc admits: an AMD host under a
// paravirtualising hypervisor accepts prctl(PR_SET_TSC, PR_TSC_SIGSEGV) and
// still lets rdtsc run. So repro tries each feature before relying on it.
//
// Each probe returns a small struct of facts (what happened, the errno of
// the call that failed), never prose: host_report.h turns them into the
// lines of `repro doctor`. A probe's own Status error (fork failed, the
// child did not finish in time) means "could not find out", not "missing".
//
// Every probe is bounded in time: a child that neither stops nor exits
// within a short deadline is killed with SIGKILL and reaped, and the probe
// fails with io_error.
//
// Thread-compatible; each probe forks, so call them before starting
// tracees (a probe child is reaped by pid and never seen by waitpid(-1)
// afterwards).

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/os/isolation.h"

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

/// Whether repro may ptrace its own children here.
struct PtraceProbe {
  /// /proc/sys/kernel/yama/ptrace_scope (0 to 3), or -1 if it could not be
  /// read; then yama_errno says why (ENOENT: the kernel has no Yama).
  int yama_scope = -1;
  int yama_errno = 0;
  /// errno of PTRACE_SEIZE, with the options record and replay use, of a
  /// child that stopped itself; 0 when it worked.
  int seize_errno = 0;
  bool works() const { return seize_errno == 0; }
};

/// Reads the Yama setting, then seizes a stopped child. Errors: io_error
/// (fork failed, the child did not stop in time).
Result<PtraceProbe> probe_ptrace();

/// The seccomp lines of /proc/self/status: the filters a container runtime
/// or a parent process installed on repro itself (and so on everything it
/// runs).
struct SeccompStatus {
  int mode = -1;          // "Seccomp:" 0 none, 1 strict, 2 filter; -1 if the line is absent
  int filter_count = -1;  // "Seccomp_filters:" (kernel 5.9 and later); -1 if absent
};

/// Parses the text of a /proc/PID/status file. Lines that are absent or do
/// not hold a number leave their field at -1. Never fails.
SeccompStatus parse_seccomp_status(std::string_view proc_status);

/// Reads /proc/self/status. Errors: io_error (the file cannot be read).
Result<SeccompStatus> probe_seccomp_status();

/// Whether a seccomp filter that returns SECCOMP_RET_TRACE stops a traced
/// process (repro's whole syscall interception rests on this).
struct SeccompTraceProbe {
  int seize_errno = 0;           // PTRACE_SEIZE failed: nothing else was tried
  int filter_errno = 0;          // no_new_privs or seccomp() failed in the child
  bool trace_stop_seen = false;  // the tracer saw PTRACE_EVENT_SECCOMP for getppid
  bool works() const { return seize_errno == 0 && filter_errno == 0 && trace_stop_seen; }
};

/// A seized child installs a raw BPF filter (SECCOMP_RET_TRACE for getppid,
/// allow everything else) and calls getppid. Errors: io_error (fork failed,
/// the child did not finish in time).
Result<SeccompTraceProbe> probe_seccomp_trace();

/// Whether seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER)
/// with a SECCOMP_RET_USER_NOTIF filter gives a listener fd, tried in a
/// child. Returns 0 when it did, else the errno. Errors: io_error.
Result<int> probe_seccomp_user_notif();

/// Whether personality(ADDR_NO_RANDOMIZE) takes effect, as repro's spawn
/// does before every exec.
struct AslrProbe {
  int personality_errno = 0;  // EPERM under Docker's default seccomp profile
  bool flag_set = false;      // reading the persona back shows ADDR_NO_RANDOMIZE
  bool works() const { return flag_set; }
};

/// Tried in a child. Errors: io_error (fork failed, no end in time).
Result<AslrProbe> probe_disable_aslr();

/// CPUID faulting: arch_prctl(ARCH_SET_CPUID, 0), then cpuid, in a child.
struct CpuidFaultProbe {
  int get_result = -1;        // arch_prctl(ARCH_GET_CPUID): 1 cpuid runs, 0 it faults, -1 failed
  int set_errno = 0;          // errno of ARCH_SET_CPUID (ENODEV: no CPU or hypervisor support)
  bool cpuid_faults = false;  // cpuid then raised SIGSEGV
  bool works() const { return set_errno == 0 && cpuid_faults; }
};

/// Errors: io_error (fork failed, the child did not finish in time).
Result<CpuidFaultProbe> probe_cpuid_faulting();

/// perf_event_open of two hardware counters for this process, user space
/// only. Each errno is 0 when the counter opened (ENOENT: no PMU here).
struct PerfCounterProbe {
  int instructions_errno = 0;  // PERF_COUNT_HW_INSTRUCTIONS
  int branches_errno = 0;      // PERF_COUNT_HW_BRANCH_INSTRUCTIONS
  bool works() const { return instructions_errno == 0 && branches_errno == 0; }
};

/// Opens and closes the counters in this process (no state changes). Never
/// fails: an errno is the answer.
PerfCounterProbe probe_perf_counters();

/// Hardware breakpoints and watchpoints set through the debug registers of
/// a seized child.
struct DebugRegisterProbe {
  int seize_errno = 0;            // PTRACE_SEIZE failed: nothing else was tried
  int poke_errno = 0;             // PTRACE_POKEUSER into DR0, DR1 or DR7 failed
  bool breakpoint_fired = false;  // executing the address in DR0 stopped the child
  bool watchpoint_fired = false;  // writing the address in DR1 stopped the child
};

/// Sets an execute breakpoint on a function and a write watchpoint on a
/// variable, lets the child call and write them and exit, and counts the
/// SIGTRAPs. Errors: io_error (fork failed, the child did not finish in time).
Result<DebugRegisterProbe> probe_debug_registers();

/// Whether a process may bind itself to one CPU.
struct CpuPinningProbe {
  int allowed_cpus = 0;    // CPUs in repro's affinity mask
  int target_cpu = -1;     // the CPU the child bound itself to
  int affinity_errno = 0;  // errno of sched_getaffinity or sched_setaffinity
  bool pinned = false;     // the child then ran on target_cpu
};

/// sched_getaffinity here, sched_setaffinity to one allowed CPU in a child.
/// Errors: io_error (fork failed, the child did not finish in time).
Result<CpuPinningProbe> probe_cpu_pinning();

/// Whether replay can isolate the program it runs (isolation.h).
struct ReplayIsolationProbe {
  IsolationFailure failure;          // the call that failed; clear if none
  bool read_only = false;            // statvfs("/") then reports ST_RDONLY
  bool network_unreachable = false;  // connecting to 127.0.0.1 then fails with ENETUNREACH
  bool works() const { return !failure.failed() && read_only && network_unreachable; }
};

/// A child isolates itself as replay does, then checks that it worked.
/// Errors: io_error (pipe or fork failed, the child did not finish in time).
Result<ReplayIsolationProbe> probe_replay_isolation();

/// The processor, from cpuid (and xgetbv). Same family/model decoding as
/// format::current_cpu_identity(), which the trace header records.
struct CpuInfo {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD"; empty without cpuid
  std::string brand;   // leaves 0x80000002-4, e.g. "AMD EPYC 7B13"; may be empty
  uint32_t family = 0;
  uint32_t model = 0;
  uint32_t stepping = 0;
  bool hypervisor = false;           // leaf 1 ecx bit 31
  std::string hypervisor_vendor;     // leaf 0x40000000, e.g. "KVMKVMKVM"
  bool rdtscp = false;               // leaf 0x80000001 edx bit 27
  bool rdrand = false;               // leaf 1 ecx bit 30
  bool rdseed = false;               // leaf 7 ebx bit 18
  bool xsave = false;                // leaf 1 ecx bit 26
  bool osxsave = false;              // leaf 1 ecx bit 27: the kernel enabled xsave
  uint64_t xcr0_supported = 0;       // leaf 0xd sub 0 edx:eax
  uint32_t xsave_enabled_bytes = 0;  // leaf 0xd sub 0 ebx: the area for what XCR0 enables
  uint32_t xsave_max_bytes = 0;      // leaf 0xd sub 0 ecx: the area for every supported feature
  uint64_t xcr0 = 0;                 // xgetbv(0), when osxsave
};

/// cpuid in this process (it cannot fault here). Never fails.
CpuInfo probe_cpu();

/// uname(2).
struct KernelInfo {
  std::string release;  // "6.1.0-18-amd64"
  std::string version;  // "#1 SMP PREEMPT_DYNAMIC Debian ..."
  std::string machine;  // "x86_64"
};

/// Errors: io_error (uname failed).
Result<KernelInfo> probe_kernel();

/// Whether a read of an empty pipe with RWF_NOWAIT fails with EAGAIN here
/// instead of waiting (kernels without pipe support for it answer
/// EOPNOTSUPP): the fast path reads and writes pipes so only where it does.
/// In this process (a pipe and one preadv2, no fork). Returns 0 when it
/// works, else the errno the read got. Errors: io_error (pipe2 failed).
Result<int> probe_pipe_nowait();

/// "EPERM (Operation not permitted)", for the messages about probes.
std::string errno_text(int errnum);

}  // namespace repro::os
