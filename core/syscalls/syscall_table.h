#pragma once
// The syscall table: one row per Linux syscall, from syscall-tables/*.def.
//
// A row says how many arguments the syscall takes, what each argument is
// (descriptor, input path, output buffer and how long it is, ...), which
// syscalls may block, and how replay treats it:
//   kEmulate  replay skips the syscall and restores the recorded result and
//             the memory the kernel wrote (read, stat, clock_gettime, ...);
//   kExecute  replay runs it for real because it shapes the process (mmap,
//             brk, clone, exit, rt_sigaction, ...) and checks the result;
//   kSpecial  record and replay need code of their own (ioctl, fcntl, execve).
// Rows exist for every syscall the kernel headers name, including ones we do
// not support, so that errors can name them.
//
// The table is immutable static data: thread-safe.

#include <cstdint>
#include <span>
#include <string_view>

namespace repro::syscalls {

enum class ArgKind : uint8_t {
  kNone,      // the syscall has fewer arguments
  kInt,       // a number, size or count
  kFd,        // a file descriptor
  kPathIn,    // pointer to a NUL-terminated path read by the kernel
  kPtrIn,     // pointer to memory only read by the kernel
  kFlags,     // a bit set or mode
  kPid,       // a process or thread id
  kSignal,    // a signal number
  kAddr,      // an address in the tracee (mmap hint, brk, futex word...)
  kOut,       // pointer to memory the kernel writes; see LengthRule
  kInOut,     // pointer to memory the kernel reads and writes; see LengthRule
  // Inputs the recorder keeps in Event::inputs (tracer/syscall_inputs.h),
  // for readers of the trace; the next argument is the length in each case.
  kSockaddrIn,  // pointer to a socket address the kernel reads (connect, bind, sendto)
  kBufIn,       // pointer to bytes the kernel takes from the program (write, sendto)
  kMsghdrIn,    // pointer to a struct msghdr the kernel reads (sendmsg): its msg_name
  kNameIn,      // pointer to a NUL-terminated name (an extended attribute's), not a path
  // Numbers with names, for readers of the trace (analysis/value_names.h).
  // To record and replay they are plain numbers (kInt, kFd or kFlags).
  kAtFd,        // a directory fd of an *at syscall: AT_FDCWD or a descriptor
  kOpenFlags,   // O_RDONLY|O_CLOEXEC|...
  kFdFlags,     // O_CLOEXEC, O_NONBLOCK of pipe2, dup3, eventfd2, ...
  kMode,        // permission bits (0644), with the file type for mknod
  kAtFlags,     // AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH, AT_REMOVEDIR, ...
  kAccessMode,  // F_OK or R_OK|W_OK|X_OK
  kMmapProt,    // PROT_READ|PROT_WRITE|PROT_EXEC
  kMmapFlags,   // MAP_PRIVATE|MAP_ANONYMOUS|...
  kWhence,      // SEEK_SET, SEEK_CUR, ...
  kClockId,     // CLOCK_REALTIME, CLOCK_MONOTONIC, ...
  kFutexOp,     // FUTEX_WAIT_PRIVATE, ...
  kSockDomain,  // AF_UNIX, AF_INET, ...
  kSockType,    // SOCK_STREAM|SOCK_CLOEXEC, ...
  kSigmaskHow,  // SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK
  kFcntlCmd,    // F_DUPFD, F_GETFL, F_SETLKW, ...
};
/// The last ArgKind enumerator, for tables and tests that cover them all.
inline constexpr ArgKind kLastArgKind = ArgKind::kFcntlCmd;

/// What an kOut / kInOut argument's bytes are, where readers of the trace
/// can show their fields (analysis/memory_text.h); kNone: plain bytes.
enum class StructKind : uint8_t {
  kNone,
  kStat,      // struct stat (144 bytes on x86-64)
  kTimespec,  // struct timespec
  kPollfds,   // struct pollfd array, as the kernel left it (revents set)
  kFdPair,    // int[2]: pipe, pipe2, socketpair
  kSockaddr,  // a socket address (accept, getsockname, recvfrom)
};

/// How many bytes an kOut / kInOut argument covers, decided after the
/// syscall returned (only when it succeeded, result >= 0).
enum class LengthRule : uint8_t {
  kNone,
  kArg,            // the value of argument `length_arg`
  kResult,         // the syscall's result (bytes)
  kFixed,          // `fixed_bytes`
  kArgTimesFixed,  // argument `length_arg` * fixed_bytes (poll: nfds * 8)
  kResultTimesFixed,  // result * fixed_bytes (epoll_wait: n * 12)
  kSockLen,        // *(socklen_t*)argument `length_arg` after the call
  kIovec,          // iovec array at this argument, count in `length_arg`, up to result bytes
  kMsghdr,         // struct msghdr (recvmsg): its iovecs, name and control
  kMmsghdr,        // struct mmsghdr array (recvmmsg), count = result
  kCString,        // NUL-terminated string the kernel wrote, up to argument `length_arg` bytes
  kCustom,         // the recorder has code for it (ioctl, fcntl, ...)
};

struct ArgSpec {
  ArgKind kind = ArgKind::kNone;
  LengthRule rule = LengthRule::kNone;
  uint8_t length_arg = 0;
  uint32_t fixed_bytes = 0;
  StructKind structure = StructKind::kNone;
};

enum class ReplayPolicy : uint8_t { kEmulate, kExecute, kSpecial };

/// Bits of SyscallInfo::flags.
enum SyscallFlags : uint32_t {
  kMayBlock = 1u << 0,       // may wait for another thread or the outside world
  kEffectsKnown = 1u << 1,   // arguments' memory effects are filled in
  kNoReturn = 1u << 2,       // exit, exit_group, execve on success...
  kUnsupported = 1u << 3,    // repro refuses it (io_uring_setup is answered ENOSYS)
};

struct SyscallInfo {
  const char* name;
  int x86_64;     // number on x86-64
  int aarch64;    // number on aarch64, -1 if none
  uint8_t arg_count;
  ReplayPolicy policy;
  uint32_t flags;
  ArgSpec args[6];

  bool may_block() const { return flags & kMayBlock; }
  bool effects_known() const { return flags & kEffectsKnown; }
};

/// The row for an x86-64 syscall number, or nullptr if none.
const SyscallInfo* find_x86_64(int number);
/// The row for a name ("openat"), or nullptr if none.
const SyscallInfo* find_by_name(std::string_view name);
/// Every row, ordered by x86-64 number.
std::span<const SyscallInfo> all_syscalls();

/// "read", or "syscall_1234" for an unknown number (static storage for
/// known numbers; unknown ones share a thread-local buffer).
const char* syscall_name(int x86_64_number);
const char* arg_kind_name(ArgKind kind);
const char* length_rule_name(LengthRule rule);
const char* struct_kind_name(StructKind kind);
const char* replay_policy_name(ReplayPolicy policy);

/// True for the kernel's internal "restart me" results (-ERESTARTSYS ...
/// -ERESTART_RESTARTBLOCK, include/linux/errno.h). A syscall interrupted by
/// a signal (or a ptrace interrupt) exits with one of these; the kernel
/// turns it into EINTR or a restart on the way back to user mode.
constexpr bool is_restart_result(int64_t result) { return result <= -512 && result >= -516; }

}  // namespace repro::syscalls
