#pragma once
// Internal to core/diag: libdw's view of the threads it unwinds, threads of
// one process that sit in a ptrace-stop of the calling thread.
//
// libdw's own (dwfl_linux_proc_attach) starts each walk at the registers
// as they are. Ours can also start a thread's walk one frame out, at the
// return address on top of its stack: the step libdw cannot take from code
// without unwind tables, such as clone.S after its syscall (where a thread
// that just made another stands) or hand-written assembly. That step is
// right only for code that has pushed nothing since its call, so the
// caller takes it only after a walk from the registers stopped at once.

#include <elfutils/libdwfl.h>
#include <sys/types.h>

#include <set>
#include <vector>

namespace repro::diag {

struct StoppedThreads {
  pid_t pid = 0;
  std::vector<pid_t> tids;
  /// Threads whose walk starts at the return address on top of the stack.
  std::set<pid_t> from_return_address;
  size_t next_index = 0;  // libdw's iteration over tids
};

/// Makes `threads` the thread state of `dwfl`, which reads registers and
/// memory with ptrace. Returns false (dwfl_errmsg(-1) says why) when libdw
/// refuses. `threads` must outlive `dwfl` and may be changed between walks.
bool attach_stopped_threads(Dwfl* dwfl, StoppedThreads* threads);

}  // namespace repro::diag
