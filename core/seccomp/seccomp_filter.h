#pragma once
// The seccomp filter a traced program runs under, in record and in replay:
// every syscall stops the program with SECCOMP_RET_TRACE, except the few in
// kUntracedSyscalls and, while recording with the fast path, those made by
// the one instruction the preloaded library owns (core/fastpath). The filter is inherited by every thread and child, so
// they are on the same path from their first instruction.
//
// This is the one part of core/ that links libseccomp: record and replay
// must install the very same filter, and tracer/ and replayer/ may not
// depend on each other.

#include <cstdint>

namespace repro::seccomp {

/// Installs the filter in the calling process (the forked child, right
/// before exec); also sets no_new_privs and, with `trap_rdtsc`, makes
/// rdtsc/rdtscp fault so the tracer can emulate them (trapping mode; in
/// patching mode the tracer patches them instead). The filter itself is
/// the same in both modes, so a trace replays in either. A nonzero
/// `untraced_ip` lets every syscall whose instruction pointer (the address
/// after the syscall instruction) is that address run without a stop: the
/// recorder passes REPRO_FASTPATH_UNTRACED_IP, replay 0 (there those
/// syscalls stop, and the replayer answers them from the trace). libseccomp
/// cannot compare the instruction pointer, so that test is a few BPF
/// instructions put in front of its program. Returns 0 or an errno value.
int install_trace_filter(bool trap_rdtsc, uint64_t untraced_ip = 0);

}  // namespace repro::seccomp
