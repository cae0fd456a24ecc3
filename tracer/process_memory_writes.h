#pragma once
// Writes through /proc/PID/mem. A program that writes to its own
// /proc/self/mem (a JIT, a hot patcher, a debugger stub) changes its memory
// with what looks like a file write. Replay emulates file writes, so the
// recorder stores the bytes that landed as memory the syscall wrote, at the
// address written, and replay puts them in place like any syscall output.
// A write into another process's memory is flagged `effects unknown`.
//
// Stateless functions; thread-compatible.

#include <sys/types.h>

#include <optional>

#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::tracer {

/// Whether syscall `number` writes through a file descriptor in its first
/// argument at a file position (write, writev, pwrite64, pwritev, pwritev2).
bool writes_at_file_position(int number);

/// Whether syscall `number` is a write whose bytes replay copies into its
/// copy of a file mapped shared (write, pwrite64, writev, pwritev): the
/// recorder notes where they went (kMappedFile) when the file is mapped so.
bool writes_shared_file_data(int number);

/// The thread or process whose memory descriptor `fd` of process `pid` is
/// open on (/proc/N/mem or /proc/N/task/M/mem: N or M), or nullopt for any
/// other file or a descriptor that is gone.
std::optional<pid_t> proc_mem_owner(pid_t pid, int fd);

/// For `event`, a successful writes_at_file_position() syscall by thread
/// `tid` of process `pid` through a descriptor on its own process's memory:
/// appends the bytes now at the address written as a MemoryWrite. Errors:
/// io_error (fdinfo unreadable), tracee_died.
Status capture_own_memory_write(pid_t tid, pid_t pid, format::Event* event);

}  // namespace repro::tracer
