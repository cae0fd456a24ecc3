#pragma once
// The x86-64 signal frame the kernel builds on the stack before a handler
// runs (struct rt_sigframe: return address, ucontext, siginfo).
//
// Its sigcontext carries trapno, err and cr2: the last CPU exception the
// thread took. For an asynchronous signal that is noise, and noise that
// differs between record and replay (replay stops threads with breakpoints
// and single steps). Record and replay both clear these three fields in
// frames of asynchronous signals, so the frames, and hence the memory that
// names preemption points, are identical.

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace repro::os {

/// Zeroes err, trapno and cr2 of the frame whose handler is about to run.
/// Requires: `tid` is stopped at the handler's first instruction, so that
/// `handler_rsp` (its rsp) points at the frame.
Status clear_frame_trap_info(pid_t tid, uint64_t handler_rsp);

/// Rewrites the FPU/SSE/AVX save area of that frame from `xstate`, the
/// thread's extended state (get_extended_registers()) right before the
/// signal was delivered, with every user state component marked present.
/// Why: the processor may leave a component that is in its initial state
/// unwritten (the init optimisation of XSAVE), and whether it is depends
/// on the kernel's context switches and the CPUs the thread ran on, not on
/// the program. Those stale bytes stay on the stack below rsp after the
/// handler returns, where preemption points' memory hashes see them.
/// The state the frame restores is the same. Requires: as above.
Status normalize_frame_fpu_state(pid_t tid, uint64_t handler_rsp, const std::string& xstate);

/// Fills the bytes around that frame which the kernel leaves as they were
/// (old, dead stack, whose content differs between record and replay): the
/// handler's red zone below it, the unused words of the sigcontext, the
/// siginfo of a handler without SA_SIGINFO (given `info`, the one delivered,
/// as SA_SIGINFO has it) and the alignment gaps around the FPU state; and
/// clears RF in the saved eflags (set for a thread stopped inside a rep
/// string instruction when recorded, not when replay got there). Why: a
/// preemption point inside the handler hashes them as live memory.
/// Best effort: a part that cannot be written is left. Requires: as above.
Status fill_frame_slack(pid_t tid, uint64_t handler_rsp, const siginfo_t& info);

}  // namespace repro::os
