#pragma once
// Symbolised backtraces of a stopped tracee thread, for error reports only
// (divergences, internal errors): libunwind's ptrace unwinder walks the
// stack, libdw names the function, file and line of each frame.

#include <sys/types.h>

#include <string>

namespace repro::diag {

/// One line per frame: "#0 0x401136 main at prog.c:12 (/path/prog)".
/// Best effort: returns what it could unwind, or a line saying why not.
/// Requires: `tid` is in a ptrace-stop of the calling thread.
std::string backtrace(pid_t pid, pid_t tid, int max_frames = 24);

}  // namespace repro::diag
