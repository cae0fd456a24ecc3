#pragma once
// Decodes a recorded syscall the way strace prints it, from the event
// alone: the arguments by the kinds the syscall table gives them
// (syscall-tables/syscalls.def), paths and other inputs from
// Event::inputs, what the kernel wrote from Event::writes (a read's
// bytes, a stat struct, a pipe's fds), and the result with its errno
// name:
//
//   openat(AT_FDCWD, "/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY|O_CLOEXEC) = 3
//   openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory)
//   read(3, "\177ELF\2\1\1\3\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0"..., 832) = 832
//
// What the trace does not hold is shown as strace shows a pointer it
// could not read: the address in hex. Pure functions: thread-safe.

#include <string>

#include "core/format/event.h"

namespace repro::analysis {

/// "openat(AT_FDCWD, \"/etc/hosts\", O_RDONLY)" for a kSyscall or
/// kSyscallEntered event (the latter without what the kernel wrote,
/// which it has not yet).
std::string call_text(const format::Event& event);

/// "3", "-1 ENOENT (No such file or directory)", "0x7ffff7fc0000" (mmap),
/// "? ERESTARTSYS (To be restarted if SA_RESTART is set)" for the result
/// of a kSyscall event.
std::string result_text(const format::Event& event);

/// "SIGSEGV {si_code=1, si_addr=0x10}" for a kSignal event's signal and
/// the fields of its siginfo that say where it came from.
std::string signal_text(const format::Event& event);

}  // namespace repro::analysis
