#pragma once
// Syscalls that run without a ptrace stop, in record and in replay alike.
//
// Each one's effect depends only on the process's own state, so executing
// it again during replay reproduces it exactly; letting it through the
// seccomp filter saves a stop (7-65 µs here) per call. Record and replay
// must agree on this list: a syscall on it never appears in a trace.

#include <sys/syscall.h>

#include <array>

namespace repro::os {

inline constexpr std::array<int, 5> kUntracedSyscalls = {
    SYS_munmap, SYS_madvise, SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_sigaltstack,
};

/// Untraced as well, unless its protection includes PROT_EXEC: code made
/// executable may hold rdtsc for the tracer to patch (patching mode).
/// Traced in every mode, so traces of either mode replay in the other.
inline constexpr int kUntracedUnlessExecutable = SYS_mprotect;

}  // namespace repro::os
