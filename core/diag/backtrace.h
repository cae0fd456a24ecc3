#pragma once
// Symbolised backtraces of a stopped tracee thread, for reports only
// (divergences, deadlocks, internal errors, and the stacks the recorder
// logs at a fatal signal). libdw does all of it: it unwinds the
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

#include <cstdint>
#include <string>
#include <vector>

#include "core/diag/mapped_module.h"

namespace repro::diag {

/// One unwound frame, innermost first. Names are empty where neither the
/// debug information nor the symbol table has them.
struct Frame {
  uint64_t pc = 0;       // return address for every frame but an activation
  std::string function;  // demangled
  std::string file;      // source file (debug information only)
  int line = 0;          // 0 when file is empty
  std::string module;    // path of the mapped file
};

/// A thread's frames and, when the walk ended early or never started, why
/// ("unwinding stopped: ...", "no backtrace: ..."); the note is empty when
/// the walk reached the outermost frame.
struct Unwound {
  std::vector<Frame> frames;
  std::string note;
};

/// The structured form of backtrace() below, same requirements; never fails.
Unwound unwind(pid_t pid, pid_t tid, const std::vector<MappedModule>& modules,
               int max_frames = 24);

/// unwind() for several threads of process `pid`, reading its files once:
/// one Unwound per tid, in order. Requires: every tid is a thread of `pid`
/// in a ptrace-stop of the calling thread (one that is not gets a note).
std::vector<Unwound> unwind_threads(pid_t pid, const std::vector<pid_t>& tids,
                                    const std::vector<MappedModule>& modules, int max_frames = 24);

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
