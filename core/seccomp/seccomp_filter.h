#pragma once
// The seccomp filter a traced program runs under, in record and in replay:
// every syscall stops the program with SECCOMP_RET_TRACE, except the few in
// kUntracedSyscalls. The filter is inherited by every thread and child, so
// they are on the same path from their first instruction.
//
// This is the one part of core/ that links libseccomp: record and replay
// must install the very same filter, and tracer/ and replayer/ may not
// depend on each other.

namespace repro::seccomp {

/// Installs the filter in the calling process (the forked child, right
/// before exec); also sets no_new_privs and, with `trap_rdtsc`, makes
/// rdtsc/rdtscp fault so the tracer can emulate them (trapping mode; in
/// patching mode the tracer patches them instead). The filter itself is
/// the same in both modes, so a trace replays in either. Returns 0 or an
/// errno value.
int install_trace_filter(bool trap_rdtsc);

}  // namespace repro::seccomp
