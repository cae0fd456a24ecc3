#pragma once
// The inputs of a recorded syscall: bytes the kernel read from the
// program's memory that readers of the trace want to see (paths, socket
// addresses, the start of the bytes written), kept in Event::inputs.
// Replay does not need them (it checks arguments, not the memory they
// point to), so they are bounded and cheap: one small read of the
// tracee's memory per such argument.
//
// Which arguments are inputs is the syscall table's business
// (syscall-tables/syscalls.def): PathIn, NameIn, SockaddrIn, BufIn and
// MsghdrIn.
//
// Stateless functions; thread-safe as long as the tracee is stopped.

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "core/format/event.h"

namespace repro::tracer {

/// Longest path kept: PATH_MAX, the most the kernel accepts. A longer
/// string (the kernel answers ENAMETOOLONG) is kept cut at this length.
inline constexpr size_t kMaxPathInputBytes = 4096;
/// Longest name kept: XATTR_NAME_MAX, the most the kernel accepts.
inline constexpr size_t kMaxNameInputBytes = 255;
/// Longest socket address kept: sizeof(struct sockaddr_storage). Longer
/// addresses are refused by the kernel (EINVAL) anyway.
inline constexpr size_t kMaxSockaddrInputBytes = 128;
/// Bytes kept of a buffer written (write, pwrite64, sendto): what dump
/// shows of it, as strace does by default. The whole buffer would double
/// the trace of a program that writes files.
inline constexpr size_t kWritePrefixBytes = 32;

/// Fills event->inputs for the syscall in `event` (number, args and result
/// set) made by thread `tid`, stopped at its syscall exit. `exec_filename`
/// is execve's or execveat's file name as read at the syscall's entry (a
/// successful exec replaced the memory it was in); ignored for others.
/// Arguments whose memory cannot be read (a bad pointer, EFAULT) are left
/// out: inputs are for display, never a reason to stop recording.
void capture_syscall_inputs(pid_t tid, const std::string& exec_filename, format::Event* event);

}  // namespace repro::tracer
