#pragma once
// Symbolised backtraces of a stopped tracee thread, for error reports only
// (divergences, internal errors). libdw does all of it: it unwinds the
// stack with the unwind tables (.eh_frame, .debug_frame) of the files the
// thread's code comes from, and names the function, source file and line of
// each frame.
//
// libdw learns where each file is mapped from two places:
// - the `modules` the caller passes: files the kernel does not know are
//   mapped (replay maps them as anonymous memory, see mapped_module.h);
// - /proc/PID/maps, for the files the kernel really mapped (the executable
//   and ld.so during replay; everything during recording).
// Where both cover an address, the caller's module wins.

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/diag/mapped_module.h"

namespace repro::diag {

/// One line per frame: "  #0 0x401136 main at prog.c:12 (/path/prog)";
/// file:line only where debug information exists, the symbol table's name
/// otherwise. Pass an empty `modules` when every mapped file is a real file
/// mapping (recording). Best effort, never fails: returns what it could
/// unwind, followed or replaced by a line saying why it stopped early.
/// Requires: `tid` is a thread of process `pid` and in a ptrace-stop of the
/// calling thread. `modules` is only read during the call.
std::string backtrace(pid_t pid, pid_t tid, const std::vector<MappedModule>& modules,
                      int max_frames = 24);

}  // namespace repro::diag
