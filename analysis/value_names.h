#pragma once
// Names of the numbers syscalls take and return, as strace prints them:
// flag sets joined with '|' (unknown bits left as hex), enumerations by
// name (an unknown value as a number), errno and signal names.
//
// Each function takes the raw 64-bit argument register and returns the
// text for it; none fails. The tables are immutable static data:
// thread-safe. Values are those of x86-64 Linux (the only arch repro
// records).

#include <cstdint>
#include <string>

#include "core/syscalls/syscall_table.h"

namespace repro::analysis {

/// "ENOENT" for 2; "E1234" for a number without a name.
std::string errno_name(int number);
/// "No such file or directory"; "Unknown error 1234" without one.
std::string errno_description(int number);
/// "SIGSEGV" for 11, "SIGRT_3" for SIGRTMIN+3, "SIG99" for others.
std::string signal_number_name(int number);

std::string at_fd_text(uint64_t value);          // "AT_FDCWD" or "3"
std::string open_flags_text(uint64_t value);     // "O_RDONLY|O_CLOEXEC"
std::string fd_flags_text(uint64_t value);       // "O_CLOEXEC|O_NONBLOCK", "0"
std::string mode_text(uint64_t value);           // "0644", "S_IFREG|0644"
std::string at_flags_text(uint64_t value);       // "AT_SYMLINK_NOFOLLOW", "0"
std::string access_mode_text(uint64_t value);    // "F_OK", "R_OK|W_OK"
std::string mmap_prot_text(uint64_t value);      // "PROT_READ|PROT_WRITE", "PROT_NONE"
std::string mmap_flags_text(uint64_t value);     // "MAP_PRIVATE|MAP_ANONYMOUS"
std::string whence_text(uint64_t value);         // "SEEK_SET"
std::string clock_id_text(uint64_t value);       // "CLOCK_MONOTONIC"
std::string futex_op_text(uint64_t value);       // "FUTEX_WAIT_PRIVATE"
std::string sock_domain_text(uint64_t value);    // "AF_INET"
std::string sock_type_text(uint64_t value);      // "SOCK_STREAM|SOCK_CLOEXEC"
std::string sigmask_how_text(uint64_t value);    // "SIG_BLOCK"
std::string fcntl_cmd_text(uint64_t value);      // "F_DUPFD_CLOEXEC"
std::string poll_events_text(uint64_t value);    // "POLLIN|POLLOUT", "0"

/// The text of argument value `value` of kind `kind` when the kind has
/// names (the value-name kinds of syscall_table.h, kSignal, kFd, kPid);
/// empty for the other kinds, which the caller shows from memory or as a
/// number.
std::string named_value_text(syscalls::ArgKind kind, uint64_t value);

}  // namespace repro::analysis
