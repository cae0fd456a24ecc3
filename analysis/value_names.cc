#include "analysis/value_names.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <ctime>
#include <span>

namespace repro::analysis {
namespace {

struct Named {
  uint64_t value;
  const char* name;
};

// Bits of `value` by name in table order, then what is left as hex; `zero`
// when value is 0.
std::string flag_set(uint64_t value, std::span<const Named> bits, const char* zero = "0") {
  if (value == 0) {
    return zero;
  }
  std::string text;
  for (const Named& bit : bits) {
    if (bit.value != 0 && (value & bit.value) == bit.value) {
      text += text.empty() ? "" : "|";
      text += bit.name;
      value &= ~bit.value;
    }
  }
  if (value != 0) {
    text += text.empty() ? "" : "|";
    text += fmt::format("{:#x}", value);
  }
  return text;
}

// The name of `value`, or the value as a signed number.
std::string one_of(uint64_t value, std::span<const Named> names) {
  for (const Named& named : names) {
    if (named.value == value) {
      return named.name;
    }
  }
  return fmt::format("{}", static_cast<int64_t>(value));
}

#define REPRO_NAMED(x) Named{static_cast<uint64_t>(x), #x}

// O_SYNC and O_TMPFILE include other bits (O_DSYNC, O_DIRECTORY): they
// come first, so that those bits are named once.
constexpr Named kOpenFlags[] = {
    REPRO_NAMED(O_CREAT),     REPRO_NAMED(O_EXCL),      REPRO_NAMED(O_NOCTTY),
    REPRO_NAMED(O_TRUNC),     REPRO_NAMED(O_APPEND),    REPRO_NAMED(O_NONBLOCK),
    REPRO_NAMED(O_SYNC),      REPRO_NAMED(O_DSYNC),     REPRO_NAMED(O_ASYNC),
    REPRO_NAMED(O_DIRECT),    REPRO_NAMED(O_LARGEFILE), REPRO_NAMED(O_TMPFILE),
    REPRO_NAMED(O_DIRECTORY), REPRO_NAMED(O_NOFOLLOW),  REPRO_NAMED(O_NOATIME),
    REPRO_NAMED(O_CLOEXEC),   REPRO_NAMED(O_PATH),
};

constexpr Named kFdFlags[] = {REPRO_NAMED(O_NONBLOCK), REPRO_NAMED(O_DIRECT),
                              REPRO_NAMED(O_CLOEXEC)};

constexpr Named kAtFlags[] = {
    REPRO_NAMED(AT_SYMLINK_NOFOLLOW), REPRO_NAMED(AT_REMOVEDIR),
    REPRO_NAMED(AT_SYMLINK_FOLLOW),   REPRO_NAMED(AT_NO_AUTOMOUNT),
    REPRO_NAMED(AT_EMPTY_PATH),       REPRO_NAMED(AT_STATX_FORCE_SYNC),
    REPRO_NAMED(AT_STATX_DONT_SYNC),  REPRO_NAMED(AT_EACCESS),
};

constexpr Named kAccessBits[] = {REPRO_NAMED(R_OK), REPRO_NAMED(W_OK), REPRO_NAMED(X_OK)};

constexpr Named kProtBits[] = {REPRO_NAMED(PROT_READ), REPRO_NAMED(PROT_WRITE),
                               REPRO_NAMED(PROT_EXEC), REPRO_NAMED(PROT_GROWSDOWN),
                               REPRO_NAMED(PROT_GROWSUP)};

constexpr Named kMapTypes[] = {REPRO_NAMED(MAP_SHARED), REPRO_NAMED(MAP_PRIVATE),
                               REPRO_NAMED(MAP_SHARED_VALIDATE)};
constexpr Named kMapBits[] = {
    REPRO_NAMED(MAP_FIXED),     REPRO_NAMED(MAP_ANONYMOUS), REPRO_NAMED(MAP_32BIT),
    REPRO_NAMED(MAP_GROWSDOWN), REPRO_NAMED(MAP_DENYWRITE), REPRO_NAMED(MAP_EXECUTABLE),
    REPRO_NAMED(MAP_LOCKED),    REPRO_NAMED(MAP_NORESERVE), REPRO_NAMED(MAP_POPULATE),
    REPRO_NAMED(MAP_NONBLOCK),  REPRO_NAMED(MAP_STACK),     REPRO_NAMED(MAP_HUGETLB),
    REPRO_NAMED(MAP_SYNC),      REPRO_NAMED(MAP_FIXED_NOREPLACE),
};

constexpr Named kWhence[] = {REPRO_NAMED(SEEK_SET), REPRO_NAMED(SEEK_CUR), REPRO_NAMED(SEEK_END),
                             REPRO_NAMED(SEEK_DATA), REPRO_NAMED(SEEK_HOLE)};

constexpr Named kClocks[] = {
    REPRO_NAMED(CLOCK_REALTIME),         REPRO_NAMED(CLOCK_MONOTONIC),
    REPRO_NAMED(CLOCK_PROCESS_CPUTIME_ID), REPRO_NAMED(CLOCK_THREAD_CPUTIME_ID),
    REPRO_NAMED(CLOCK_MONOTONIC_RAW),    REPRO_NAMED(CLOCK_REALTIME_COARSE),
    REPRO_NAMED(CLOCK_MONOTONIC_COARSE), REPRO_NAMED(CLOCK_BOOTTIME),
    REPRO_NAMED(CLOCK_REALTIME_ALARM),   REPRO_NAMED(CLOCK_BOOTTIME_ALARM),
    REPRO_NAMED(CLOCK_TAI),
};

constexpr Named kFutexCommands[] = {
    REPRO_NAMED(FUTEX_WAIT),         REPRO_NAMED(FUTEX_WAKE),
    REPRO_NAMED(FUTEX_FD),           REPRO_NAMED(FUTEX_REQUEUE),
    REPRO_NAMED(FUTEX_CMP_REQUEUE),  REPRO_NAMED(FUTEX_WAKE_OP),
    REPRO_NAMED(FUTEX_LOCK_PI),      REPRO_NAMED(FUTEX_UNLOCK_PI),
    REPRO_NAMED(FUTEX_TRYLOCK_PI),   REPRO_NAMED(FUTEX_WAIT_BITSET),
    REPRO_NAMED(FUTEX_WAKE_BITSET),  REPRO_NAMED(FUTEX_WAIT_REQUEUE_PI),
    REPRO_NAMED(FUTEX_CMP_REQUEUE_PI), REPRO_NAMED(FUTEX_LOCK_PI2),
};

constexpr Named kDomains[] = {
    REPRO_NAMED(AF_UNSPEC), REPRO_NAMED(AF_UNIX),    REPRO_NAMED(AF_INET),
    REPRO_NAMED(AF_INET6),  REPRO_NAMED(AF_NETLINK), REPRO_NAMED(AF_PACKET),
    REPRO_NAMED(AF_ALG),    REPRO_NAMED(AF_VSOCK),
};

constexpr Named kSockTypes[] = {
    REPRO_NAMED(SOCK_STREAM), REPRO_NAMED(SOCK_DGRAM),     REPRO_NAMED(SOCK_RAW),
    REPRO_NAMED(SOCK_RDM),    REPRO_NAMED(SOCK_SEQPACKET), REPRO_NAMED(SOCK_PACKET),
};
constexpr Named kSockTypeBits[] = {REPRO_NAMED(SOCK_NONBLOCK), REPRO_NAMED(SOCK_CLOEXEC)};

constexpr Named kSigmaskHow[] = {REPRO_NAMED(SIG_BLOCK), REPRO_NAMED(SIG_UNBLOCK),
                                 REPRO_NAMED(SIG_SETMASK)};

constexpr Named kFcntlCmds[] = {
    REPRO_NAMED(F_DUPFD),         REPRO_NAMED(F_GETFD),          REPRO_NAMED(F_SETFD),
    REPRO_NAMED(F_GETFL),         REPRO_NAMED(F_SETFL),          REPRO_NAMED(F_GETLK),
    REPRO_NAMED(F_SETLK),         REPRO_NAMED(F_SETLKW),         REPRO_NAMED(F_SETOWN),
    REPRO_NAMED(F_GETOWN),        REPRO_NAMED(F_SETSIG),         REPRO_NAMED(F_GETSIG),
    REPRO_NAMED(F_SETOWN_EX),     REPRO_NAMED(F_GETOWN_EX),      REPRO_NAMED(F_OFD_GETLK),
    REPRO_NAMED(F_OFD_SETLK),     REPRO_NAMED(F_OFD_SETLKW),     REPRO_NAMED(F_SETLEASE),
    REPRO_NAMED(F_GETLEASE),      REPRO_NAMED(F_NOTIFY),         REPRO_NAMED(F_DUPFD_CLOEXEC),
    REPRO_NAMED(F_SETPIPE_SZ),    REPRO_NAMED(F_GETPIPE_SZ),     REPRO_NAMED(F_ADD_SEALS),
    REPRO_NAMED(F_GET_SEALS),     REPRO_NAMED(F_GET_RW_HINT),    REPRO_NAMED(F_SET_RW_HINT),
    REPRO_NAMED(F_GET_FILE_RW_HINT), REPRO_NAMED(F_SET_FILE_RW_HINT),
};

constexpr Named kPollBits[] = {REPRO_NAMED(POLLIN),     REPRO_NAMED(POLLPRI),
                               REPRO_NAMED(POLLOUT),    REPRO_NAMED(POLLERR),
                               REPRO_NAMED(POLLHUP),    REPRO_NAMED(POLLNVAL),
                               REPRO_NAMED(POLLRDNORM), REPRO_NAMED(POLLRDBAND),
                               REPRO_NAMED(POLLWRNORM), REPRO_NAMED(POLLWRBAND),
                               REPRO_NAMED(POLLMSG),    REPRO_NAMED(POLLRDHUP)};

constexpr Named kFileTypes[] = {REPRO_NAMED(S_IFREG),  REPRO_NAMED(S_IFDIR), REPRO_NAMED(S_IFCHR),
                                REPRO_NAMED(S_IFBLK),  REPRO_NAMED(S_IFIFO), REPRO_NAMED(S_IFLNK),
                                REPRO_NAMED(S_IFSOCK)};

#undef REPRO_NAMED

}  // namespace

std::string errno_name(int number) {
  const char* name = number > 0 ? strerrorname_np(number) : nullptr;
  return name != nullptr ? name : fmt::format("E{}", number);
}

std::string errno_description(int number) {
  const char* text = number > 0 ? strerrordesc_np(number) : nullptr;
  return text != nullptr ? text : fmt::format("Unknown error {}", number);
}

std::string signal_number_name(int number) {
  if (number >= SIGRTMIN && number <= SIGRTMAX) {
    return number == SIGRTMIN ? "SIGRTMIN" : fmt::format("SIGRT_{}", number - SIGRTMIN);
  }
  const char* name = number > 0 ? sigabbrev_np(number) : nullptr;
  return name != nullptr ? fmt::format("SIG{}", name) : fmt::format("SIG{}", number);
}

std::string at_fd_text(uint64_t value) {
  int fd = static_cast<int>(value);
  return fd == AT_FDCWD ? "AT_FDCWD" : fmt::format("{}", fd);
}

std::string open_flags_text(uint64_t value) {
  // The access mode is a 2-bit number, not a bit set: the table names the
  // rest.
  const char* access = (value & O_ACCMODE) == O_WRONLY ? "O_WRONLY"
                       : (value & O_ACCMODE) == O_RDWR ? "O_RDWR"
                       : (value & O_ACCMODE) == O_RDONLY ? "O_RDONLY"
                                                         : "O_ACCMODE";
  uint64_t rest = value & ~static_cast<uint64_t>(O_ACCMODE);
  if (rest == 0) {
    return access;
  }
  return std::string(access) + "|" + flag_set(rest, kOpenFlags);
}

std::string fd_flags_text(uint64_t value) { return flag_set(value, kFdFlags); }

std::string mode_text(uint64_t value) {
  std::string type;
  uint64_t format = value & S_IFMT;
  if (format != 0) {
    type = one_of(format, kFileTypes) + "|";
  }
  uint64_t rest = value & ~static_cast<uint64_t>(S_IFMT);
  // C's "%#03o", as strace prints modes: 0644, 022, 000.
  std::string octal = fmt::format("{:o}", rest);
  if (octal[0] != '0') {
    octal.insert(0, "0");
  }
  return type + std::string(octal.size() < 3 ? 3 - octal.size() : 0, '0') + octal;
}

std::string at_flags_text(uint64_t value) { return flag_set(value, kAtFlags); }

std::string access_mode_text(uint64_t value) { return flag_set(value, kAccessBits, "F_OK"); }

std::string mmap_prot_text(uint64_t value) { return flag_set(value, kProtBits, "PROT_NONE"); }

std::string mmap_flags_text(uint64_t value) {
  uint64_t type = value & MAP_TYPE;
  std::string text = one_of(type, kMapTypes);
  uint64_t rest = value & ~static_cast<uint64_t>(MAP_TYPE);
  return rest == 0 ? text : text + "|" + flag_set(rest, kMapBits);
}

std::string whence_text(uint64_t value) { return one_of(value, kWhence); }

std::string clock_id_text(uint64_t value) { return one_of(value, kClocks); }

std::string futex_op_text(uint64_t value) {
  std::string text = one_of(value & FUTEX_CMD_MASK, kFutexCommands);
  if (value & FUTEX_PRIVATE_FLAG) {
    text += "_PRIVATE";
  }
  if (value & FUTEX_CLOCK_REALTIME) {
    text += "|FUTEX_CLOCK_REALTIME";
  }
  return text;
}

std::string sock_domain_text(uint64_t value) { return one_of(value, kDomains); }

std::string sock_type_text(uint64_t value) {
  constexpr uint64_t kTypeMask = 0xf;  // SOCK_TYPE_MASK in the kernel
  std::string text = one_of(value & kTypeMask, kSockTypes);
  uint64_t rest = value & ~kTypeMask;
  return rest == 0 ? text : text + "|" + flag_set(rest, kSockTypeBits);
}

std::string sigmask_how_text(uint64_t value) { return one_of(value, kSigmaskHow); }

std::string fcntl_cmd_text(uint64_t value) { return one_of(value, kFcntlCmds); }

std::string poll_events_text(uint64_t value) { return flag_set(value, kPollBits); }

std::string named_value_text(syscalls::ArgKind kind, uint64_t value) {
  using syscalls::ArgKind;
  switch (kind) {
    case ArgKind::kFd:
    case ArgKind::kPid:
      return fmt::format("{}", static_cast<int>(value));
    case ArgKind::kSignal:
      return value == 0 ? "0" : signal_number_name(static_cast<int>(value));
    case ArgKind::kAtFd:
      return at_fd_text(value);
    case ArgKind::kOpenFlags:
      return open_flags_text(value);
    case ArgKind::kFdFlags:
      return fd_flags_text(value);
    case ArgKind::kMode:
      return mode_text(value);
    case ArgKind::kAtFlags:
      return at_flags_text(value);
    case ArgKind::kAccessMode:
      return access_mode_text(value);
    case ArgKind::kMmapProt:
      return mmap_prot_text(value);
    case ArgKind::kMmapFlags:
      return mmap_flags_text(value);
    case ArgKind::kWhence:
      return whence_text(value);
    case ArgKind::kClockId:
      return clock_id_text(value);
    case ArgKind::kFutexOp:
      return futex_op_text(value);
    case ArgKind::kSockDomain:
      return sock_domain_text(value);
    case ArgKind::kSockType:
      return sock_type_text(value);
    case ArgKind::kSigmaskHow:
      return sigmask_how_text(value);
    case ArgKind::kFcntlCmd:
      return fcntl_cmd_text(value);
    default:
      return "";
  }
}

}  // namespace repro::analysis
