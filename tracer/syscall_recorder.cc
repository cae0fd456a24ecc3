#include "tracer/syscall_recorder.h"

#include <asm/prctl.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <linux/btrfs.h>
#include <linux/capability.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/fsmap.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termio.h>
#include <termios.h>

#include <algorithm>
#include <optional>

#include "core/os/tracee.h"
#include "core/syscalls/syscall_table.h"
#include "tracer/pi_futex.h"

namespace repro::tracer {
namespace {

// A bound on one captured range: a read of more than this into one buffer
// is still captured, just in pieces of this size. Chosen so that a bogus
// length (a program passing garbage) fails loudly instead of allocating GBs.
constexpr uint64_t kMaxCaptureBytes = 1ull << 31;

// The kernel's struct termios (TCGETS) is 36 bytes: c_iflag..c_lflag (16),
// c_line (1), c_cc[19]. glibc's larger struct is filled from it in user space.
constexpr uint64_t kKernelTermiosBytes = 36;

// Syscall numbers newer than the <sys/syscall.h> repro may be built with
// (arch/x86/entry/syscalls/syscall_64.tbl).
constexpr int kSysLsmGetSelfAttr = 459;
constexpr int kSysLsmListModules = 461;
constexpr int kSysGetxattrat = 464;

// The bits of an ioctl command (include/uapi/asm-generic/ioctl.h): the
// direction is seen from user space, so _IOC_READ means the kernel writes
// _IOC_SIZE bytes at the argument.
constexpr uint64_t ioctl_dir(uint64_t command) { return (command >> 30) & 3; }
constexpr uint64_t ioctl_type(uint64_t command) { return (command >> 8) & 0xff; }
constexpr uint64_t ioctl_size(uint64_t command) { return (command >> 16) & 0x3fff; }
constexpr uint64_t kIoctlWrite = 1, kIoctlRead = 2;

// Encoded commands whose struct is only a header: the kernel also writes an
// array after it (fiemap extents, dedupe results, fsmap records, search
// results), or through pointers inside it. Their size field understates what
// they write, so they stay unknown.
bool ioctl_writes_past_its_size(uint64_t command) {
  constexpr uint64_t kDrmType = 'd';  // DRM (include/uapi/drm/drm.h): pointers inside the structs
  return ioctl_type(command) == kDrmType || command == FS_IOC_FIEMAP || command == FIDEDUPERANGE ||
         command == FS_IOC_GETFSMAP || command == BTRFS_IOC_TREE_SEARCH_V2;
}

// How many bytes a successful ioctl writes at its argument (0 for commands
// that write nothing), or nullopt when repro does not know the command.
std::optional<uint64_t> ioctl_output_bytes(uint64_t command) {
  switch (command) {
    // Terminals (include/uapi/asm-generic/ioctls.h: numbers without
    // direction bits, older than the encoding).
    case TCGETS:
    case TIOCGLCKTRMIOS:
      return kKernelTermiosBytes;
    case TCGETA:
      return sizeof(struct termio);
    case TIOCGWINSZ:
      return sizeof(struct winsize);
    case FIONREAD:  // also TIOCINQ and SIOCINQ
    case TIOCOUTQ:  // also SIOCOUTQ
    case TIOCGPGRP:
    case TIOCGSID:
    case TIOCGETD:
    case TIOCMGET:
    case TIOCGSOFTCAR:
    case TIOCGPTN:  // encoded, but as _IOR with an unsigned int: same bytes
    case FIOGETOWN:
    case SIOCGPGRP:
    case SIOCATMARK:
    case SIOCOUTQNSD:
      return sizeof(int);
    case FIOQSIZE:
      return sizeof(loff_t);
    case TCSETS:
    case TCSETSW:
    case TCSETSF:
    case TCSETA:
    case TCSETAW:
    case TCSETAF:
    case TIOCSLCKTRMIOS:
    case TIOCSWINSZ:
    case TIOCSPGRP:
    case TIOCSCTTY:
    case TIOCNOTTY:
    case TIOCEXCL:
    case TIOCNXCL:
    case TIOCSETD:
    case TIOCMSET:
    case TIOCMBIS:
    case TIOCMBIC:
    case TIOCSSOFTCAR:
    case TIOCPKT:
    case TIOCSTI:
    case TIOCCONS:
    case TIOCGPTPEER:  // answers with a new fd
    case TCSBRK:
    case TCSBRKP:
    case TIOCSBRK:
    case TIOCCBRK:
    case TCXONC:
    case TCFLSH:
    case FIONBIO:
    case FIOCLEX:
    case FIONCLEX:
    case FIOASYNC:
    case FIOSETOWN:
    case SIOCSPGRP:
      return 0;
    // Network interfaces: one struct ifreq, read and written back.
    case SIOCGIFNAME:
    case SIOCGIFFLAGS:
    case SIOCGIFADDR:
    case SIOCGIFDSTADDR:
    case SIOCGIFBRDADDR:
    case SIOCGIFNETMASK:
    case SIOCGIFMETRIC:
    case SIOCGIFMTU:
    case SIOCGIFHWADDR:
    case SIOCGIFINDEX:
    case SIOCGIFTXQLEN:
    case SIOCGIFMAP:
      return sizeof(struct ifreq);
    default:
      break;
  }
  if (ioctl_writes_past_its_size(command) || ioctl_size(command) == 0) {
    return std::nullopt;  // unencoded commands not listed above
  }
  if (ioctl_dir(command) & kIoctlRead) {
    return ioctl_size(command);
  }
  if (ioctl_dir(command) == kIoctlWrite) {
    return 0;  // the kernel only reads the argument
  }
  return std::nullopt;
}

// How many bytes semctl, shmctl or msgctl command `command` writes at its
// buffer argument (sys/sem.h, sys/shm.h, sys/msg.h: each has its own
// numbers past IPC_INFO). GETALL is not here: its size is the set's.
uint64_t ipc_ctl_output_bytes(int number, uint64_t command) {
  if (number == SYS_semctl) {
    switch (command) {
      case IPC_STAT:
      case SEM_STAT:
      case SEM_STAT_ANY:
        return sizeof(struct semid_ds);
      case IPC_INFO:
      case SEM_INFO:
        return sizeof(struct seminfo);
      default:
        return 0;  // GETVAL, GETPID, GETNCNT, GETZCNT answer in the result; the rest read
    }
  }
  if (number == SYS_shmctl) {
    switch (command) {
      case IPC_STAT:
      case SHM_STAT:
      case SHM_STAT_ANY:
        return sizeof(struct shmid_ds);
      case IPC_INFO:
        return sizeof(struct shminfo);
      case SHM_INFO:
        return sizeof(struct shm_info);
      default:
        return 0;  // IPC_SET, IPC_RMID, SHM_LOCK, SHM_UNLOCK
    }
  }
  switch (command) {
    case IPC_STAT:
    case MSG_STAT:
    case MSG_STAT_ANY:
      return sizeof(struct msqid_ds);
    case IPC_INFO:
    case MSG_INFO:
      return sizeof(struct msginfo);
    default:
      return 0;  // IPC_SET, IPC_RMID
  }
}

// The nsems of System V semaphore set `semid`, asked by the recorder itself
// (semctl GETALL writes one unsigned short per semaphore). Only meaningful
// when the tracee shares the recorder's IPC namespace.
std::optional<uint64_t> semaphore_count(pid_t tid, int semid) {
  struct stat ours, theirs;
  std::string path = fmt::format("/proc/{}/ns/ipc", tid);
  if (stat("/proc/self/ns/ipc", &ours) != 0 || stat(path.c_str(), &theirs) != 0 ||
      ours.st_ino != theirs.st_ino || ours.st_dev != theirs.st_dev) {
    return std::nullopt;
  }
  struct semid_ds ds;
  if (semctl(semid, 0, IPC_STAT, &ds) != 0) {
    return std::nullopt;
  }
  return ds.sem_nsems;
}

}  // namespace

SyscallRecorder::SyscallRecorder() {
  struct stat st;
  if (fstat(STDOUT_FILENO, &st) == 0) {
    have_stdout_ = true;
    stdout_device_ = st.st_dev;
    stdout_inode_ = st.st_ino;
  }
  if (fstat(STDERR_FILENO, &st) == 0) {
    have_stderr_ = true;
    stderr_device_ = st.st_dev;
    stderr_inode_ = st.st_ino;
  }
}

Status SyscallRecorder::add_write(pid_t tid, uint64_t address, uint64_t length,
                                  format::Event* event) {
  if (length == 0 || address == 0) {
    return Status::ok();
  }
  if (length > kMaxCaptureBytes) {
    length = kMaxCaptureBytes;
  }
  format::MemoryWrite write;
  write.address = address;
  write.bytes.resize(length);
  Status status = os::read_memory(tid, address, write.bytes.data(), length);
  if (!status.is_ok()) {
    if (status.code() == StatusCode::kTraceeDied) {
      return status;
    }
    // The kernel wrote less than the rule allows and the rest is unmapped:
    // keep what can be read (the kernel could not have written beyond it).
    return Status::ok();
  }
  event->writes.push_back(std::move(write));
  return Status::ok();
}

Status SyscallRecorder::capture(pid_t tid, pid_t pid, format::Event* event) {
  if (event->result < 0) {
    // A failed syscall (even an unknown one: ENOSYS) writes nothing, but
    // for the few that report the time left.
    return capture_failure_effects(tid, event);
  }
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(event->syscall_number);
  if (info == nullptr || !info->effects_known()) {
    event->syscall_flags |= format::kSyscallEffectsUnknown;
    return Status::ok();
  }
  if (event->syscall_number == SYS_write || event->syscall_number == SYS_writev) {
    return capture_output(tid, pid, event);
  }
  return capture_table_effects(tid, event);
}

Status SyscallRecorder::capture_table_effects(pid_t tid, format::Event* event) {
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(event->syscall_number);
  const auto& args = event->args;
  uint64_t result = static_cast<uint64_t>(event->result);
  for (int i = 0; i < info->arg_count; ++i) {
    const syscalls::ArgSpec& spec = info->args[i];
    if (spec.kind != syscalls::ArgKind::kOut && spec.kind != syscalls::ArgKind::kInOut) {
      continue;
    }
    uint64_t address = args[i];
    if (address == 0 && spec.rule != syscalls::LengthRule::kCustom) {
      continue;  // custom rules may write elsewhere (futex's PI ops)
    }
    switch (spec.rule) {
      case syscalls::LengthRule::kNone:
        break;
      case syscalls::LengthRule::kArg:
        REPRO_RETURN_IF_ERROR(add_write(tid, address, args[spec.length_arg], event));
        break;
      case syscalls::LengthRule::kResult:
        // The argument named by length_arg caps it (recvfrom with MSG_TRUNC
        // returns more than the buffer holds).
        REPRO_RETURN_IF_ERROR(
            add_write(tid, address, std::min<uint64_t>(result, args[spec.length_arg]), event));
        break;
      case syscalls::LengthRule::kFixed:
        REPRO_RETURN_IF_ERROR(add_write(tid, address, spec.fixed_bytes, event));
        break;
      case syscalls::LengthRule::kArgTimesFixed:
        REPRO_RETURN_IF_ERROR(
            add_write(tid, address, args[spec.length_arg] * uint64_t{spec.fixed_bytes}, event));
        break;
      case syscalls::LengthRule::kResultTimesFixed:
        REPRO_RETURN_IF_ERROR(add_write(tid, address, result * uint64_t{spec.fixed_bytes}, event));
        break;
      case syscalls::LengthRule::kSockLen: {
        uint32_t length = 0;
        if (args[spec.length_arg] != 0 &&
            os::read_memory(tid, args[spec.length_arg], &length, sizeof length).is_ok()) {
          REPRO_RETURN_IF_ERROR(add_write(tid, address, length, event));
        }
        break;
      }
      case syscalls::LengthRule::kCString:
        REPRO_RETURN_IF_ERROR(add_write(tid, address, args[spec.length_arg], event));
        break;
      case syscalls::LengthRule::kIovec: {
        uint64_t count = std::min<uint64_t>(args[spec.length_arg], 1024);
        std::vector<iovec> iovecs(count);
        REPRO_RETURN_IF_ERROR(os::read_memory(tid, address, iovecs.data(), count * sizeof(iovec)));
        uint64_t remaining = result;
        for (const iovec& v : iovecs) {
          uint64_t n = std::min<uint64_t>(remaining, v.iov_len);
          REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(v.iov_base), n, event));
          remaining -= n;
        }
        break;
      }
      case syscalls::LengthRule::kMsghdr: {
        msghdr header;
        REPRO_RETURN_IF_ERROR(os::read_memory(tid, address, &header, sizeof header));
        // The kernel updates msg_namelen, msg_controllen and msg_flags.
        REPRO_RETURN_IF_ERROR(add_write(tid, address, sizeof header, event));
        REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(header.msg_name),
                                        header.msg_namelen, event));
        REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(header.msg_control),
                                        header.msg_controllen, event));
        uint64_t count = std::min<uint64_t>(header.msg_iovlen, 1024);
        std::vector<iovec> iovecs(count);
        REPRO_RETURN_IF_ERROR(os::read_memory(tid, reinterpret_cast<uint64_t>(header.msg_iov),
                                              iovecs.data(), count * sizeof(iovec)));
        uint64_t remaining = result;
        for (const iovec& v : iovecs) {
          uint64_t n = std::min<uint64_t>(remaining, v.iov_len);
          REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(v.iov_base), n, event));
          remaining -= n;
        }
        break;
      }
      case syscalls::LengthRule::kMmsghdr: {
        // Record the whole array and every message's buffers, as recvmsg.
        uint64_t count = std::min<uint64_t>(result, 1024);
        std::vector<mmsghdr> messages(count);
        REPRO_RETURN_IF_ERROR(
            os::read_memory(tid, address, messages.data(), count * sizeof(mmsghdr)));
        REPRO_RETURN_IF_ERROR(add_write(tid, address, count * sizeof(mmsghdr), event));
        for (const mmsghdr& m : messages) {
          REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(m.msg_hdr.msg_name),
                                          m.msg_hdr.msg_namelen, event));
          REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(m.msg_hdr.msg_control),
                                          m.msg_hdr.msg_controllen, event));
          uint64_t iov_count = std::min<uint64_t>(m.msg_hdr.msg_iovlen, 1024);
          std::vector<iovec> iovecs(iov_count);
          REPRO_RETURN_IF_ERROR(os::read_memory(tid, reinterpret_cast<uint64_t>(m.msg_hdr.msg_iov),
                                                iovecs.data(), iov_count * sizeof(iovec)));
          uint64_t remaining = m.msg_len;
          for (const iovec& v : iovecs) {
            uint64_t n = std::min<uint64_t>(remaining, v.iov_len);
            REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(v.iov_base), n, event));
            remaining -= n;
          }
        }
        break;
      }
      case syscalls::LengthRule::kCustom:
        REPRO_RETURN_IF_ERROR(capture_custom_effects(tid, i, event));
        break;
    }
  }
  return Status::ok();
}

Status SyscallRecorder::capture_failure_effects(pid_t tid, format::Event* event) {
  // Failed syscalls write nothing, except the sleeps and waits that report
  // the time left when a signal interrupts them, and PI futexes.
  constexpr uint64_t kTimespecBytes = 16;
  const auto& args = event->args;
  switch (event->syscall_number) {
    case SYS_nanosleep:
      return add_write(tid, args[1], kTimespecBytes, event);
    case SYS_clock_nanosleep:
      return add_write(tid, args[3], kTimespecBytes, event);
    case SYS_select:
    case SYS_pselect6:
      return add_write(tid, args[4], kTimespecBytes, event);
    case SYS_ppoll:
      return add_write(tid, args[2], kTimespecBytes, event);
    case SYS_futex:
      // A PI lock that timed out (or found its owner dead) may have left
      // its mark in the word.
      for (uint64_t word : pi_futex_words(event->syscall_number, args)) {
        REPRO_RETURN_IF_ERROR(add_write(tid, word, sizeof(uint32_t), event));
      }
      return Status::ok();
    case SYS_capget:
    case SYS_capset:
      // An unknown version in the header: the kernel put its own there.
      if (event->result == -EINVAL) {
        return add_write(tid, args[0], sizeof(uint32_t), event);
      }
      return Status::ok();
    case kSysLsmGetSelfAttr:
    case kSysLsmListModules:
      // The buffer was too small: *size says how much is needed.
      if (event->result == -E2BIG) {
        return add_write(tid, args[event->syscall_number == kSysLsmGetSelfAttr ? 2 : 1],
                         sizeof(uint32_t), event);
      }
      return Status::ok();
    default:
      return Status::ok();
  }
}

Status SyscallRecorder::capture_custom_effects(pid_t tid, int arg_index, format::Event* event) {
  const auto& args = event->args;
  uint64_t address = args[arg_index];
  switch (event->syscall_number) {
    case SYS_ioctl:
      return capture_ioctl_effects(tid, event);
    case SYS_fcntl:
      switch (args[1]) {
        case F_GETLK:
        case F_OFD_GETLK:
          return add_write(tid, address, sizeof(struct flock), event);
        case F_GETOWN_EX:
          return add_write(tid, address, sizeof(struct f_owner_ex), event);
        case F_GET_RW_HINT:
        case F_GET_FILE_RW_HINT:
          return add_write(tid, address, sizeof(uint64_t), event);
        default:
          return Status::ok();  // the other commands answer in the result, or only read
      }
    case SYS_arch_prctl:
      if (args[0] == ARCH_GET_FS || args[0] == ARCH_GET_GS) {
        return add_write(tid, address, 8, event);
      }
      return Status::ok();
    case SYS_prctl:
      if (arg_index != 1) {
        return Status::ok();
      }
      switch (args[0]) {
        case PR_GET_NAME:
          return add_write(tid, address, 16, event);
        case PR_GET_PDEATHSIG:
        case PR_GET_TSC:
        case PR_GET_ENDIAN:
        case PR_GET_FPEMU:
        case PR_GET_FPEXC:
        case PR_GET_UNALIGN:
          return add_write(tid, address, sizeof(int), event);
        case PR_GET_TID_ADDRESS:
          return add_write(tid, address, 8, event);
        default:
          return Status::ok();  // the other commands return their answer as the result
      }
    case SYS_capget: {
      // Version 1 has one 12-byte __user_cap_data_struct, versions 2 and 3
      // two (64-bit sets); the header holds the version the kernel used.
      uint32_t version = 0;
      REPRO_RETURN_IF_ERROR(os::read_memory(tid, args[0], &version, sizeof version));
      uint64_t structs = version == _LINUX_CAPABILITY_VERSION_1 ? 1 : 2;
      return add_write(tid, address, structs * sizeof(__user_cap_data_struct), event);
    }
    case SYS_seccomp:
      // Installing a filter or strict mode writes nothing (replay installs
      // the same filter); only the notification sizes are an answer.
      if (args[0] == SECCOMP_GET_NOTIF_SIZES) {
        return add_write(tid, address, sizeof(seccomp_notif_sizes), event);
      }
      return Status::ok();
    case SYS_mincore:
      return add_write(tid, address, (args[1] + 4095) / 4096, event);
    case SYS_sched_getattr:
      return add_write(tid, address, args[2], event);
    case SYS_select:
    case SYS_pselect6:
      // fd_sets are arrays of longs covering nfds bits.
      return add_write(tid, address, (args[0] + 63) / 64 * 8, event);
    case SYS_futex: {
      int op = static_cast<int>(args[1]) & 0x7f;  // without FUTEX_PRIVATE_FLAG / CLOCK_REALTIME
      constexpr int kFutexWakeOp = 5;
      if (op == kFutexWakeOp) {
        REPRO_RETURN_IF_ERROR(add_write(tid, args[4], sizeof(uint32_t), event));
      }
      // The PI ops store the owner's tid in their futex words.
      for (uint64_t word : pi_futex_words(event->syscall_number, args)) {
        REPRO_RETURN_IF_ERROR(add_write(tid, word, sizeof(uint32_t), event));
      }
      return Status::ok();
    }
    case SYS_sendmmsg:
      // The kernel fills in msg_len of each message it sent.
      return add_write(tid, address, static_cast<uint64_t>(event->result) * sizeof(mmsghdr), event);
    case SYS_msgrcv:
      return add_write(tid, address, sizeof(long) + static_cast<uint64_t>(event->result), event);
    case SYS_semctl:
    case SYS_shmctl:
    case SYS_msgctl:
      return capture_ipc_ctl_effects(tid, event);
    case SYS_keyctl:
      return capture_keyctl_effects(tid, event);
    case SYS_syslog: {
      // SYSLOG_ACTION_READ, _READ_ALL and _READ_CLEAR fill buf; the other
      // actions answer in the result.
      constexpr uint64_t kRead = 2, kReadAll = 3, kReadClear = 4;
      if (args[0] == kRead || args[0] == kReadAll || args[0] == kReadClear) {
        uint64_t result = static_cast<uint64_t>(event->result);
        return add_write(tid, address, std::min<uint64_t>(result, args[2]), event);
      }
      return Status::ok();
    }
    case SYS_get_mempolicy: {
      // copy_nodes_to_user() (mm/mempolicy.c) writes ALIGN(maxnode - 1, 64)
      // bits, zeroing those past the kernel's own node mask.
      uint64_t maxnode = args[2];
      uint64_t bytes = maxnode == 0 ? 0 : (maxnode - 1 + 63) / 64 * 8;
      return add_write(tid, address, bytes, event);
    }
    case SYS_name_to_handle_at: {
      // struct file_handle: handle_bytes and handle_type, then the handle.
      uint32_t handle_bytes = 0;
      REPRO_RETURN_IF_ERROR(os::read_memory(tid, address, &handle_bytes, sizeof handle_bytes));
      return add_write(tid, address, 8 + uint64_t{handle_bytes}, event);
    }
    case kSysGetxattrat: {
      // struct xattr_args { u64 value; u32 size; u32 flags; }: the value
      // goes where args.value points, result bytes of at most args.size.
      struct {
        uint64_t value;
        uint32_t size;
        uint32_t flags;
      } xattr_args{};
      if (args[5] < sizeof xattr_args) {
        event->syscall_flags |= format::kSyscallEffectsUnknown;
        return Status::ok();
      }
      REPRO_RETURN_IF_ERROR(os::read_memory(tid, address, &xattr_args, sizeof xattr_args));
      uint64_t result = static_cast<uint64_t>(event->result);
      return add_write(tid, xattr_args.value, std::min<uint64_t>(result, xattr_args.size), event);
    }
    default:
      event->syscall_flags |= format::kSyscallEffectsUnknown;
      return Status::ok();
  }
}

Status SyscallRecorder::capture_ioctl_effects(pid_t tid, format::Event* event) {
  const auto& args = event->args;
  // The kernel takes the command as an unsigned int: a program passing a
  // negative int (an _IOR number) has the upper half sign-extended.
  uint64_t command = args[1] & 0xffffffffu;
  if (command == SIOCGIFCONF) {
    // struct ifconf { int ifc_len; char* ifc_buf; }: the kernel sets
    // ifc_len to the bytes of ifreqs it wrote into ifc_buf.
    struct ifconf conf;
    REPRO_RETURN_IF_ERROR(os::read_memory(tid, args[2], &conf, sizeof conf));
    REPRO_RETURN_IF_ERROR(add_write(tid, args[2], sizeof conf, event));
    return add_write(tid, reinterpret_cast<uint64_t>(conf.ifc_buf),
                     static_cast<uint64_t>(std::max(conf.ifc_len, 0)), event);
  }
  std::optional<uint64_t> bytes = ioctl_output_bytes(command);
  if (!bytes) {
    event->syscall_flags |= format::kSyscallEffectsUnknown;
    return Status::ok();
  }
  return add_write(tid, args[2], *bytes, event);
}

Status SyscallRecorder::capture_ipc_ctl_effects(pid_t tid, format::Event* event) {
  const auto& args = event->args;
  // semctl(id, num, cmd, arg) and shmctl/msgctl(id, cmd, buf). IPC_64 (set
  // by libcs that have it) only asks for the 64-bit structs x86-64 always uses.
  bool sem = event->syscall_number == SYS_semctl;
  uint64_t command = args[sem ? 2 : 1] & ~uint64_t{0x100};
  uint64_t buffer = args[sem ? 3 : 2];
  if (sem && command == GETALL) {
    std::optional<uint64_t> count = semaphore_count(tid, static_cast<int>(args[0]));
    if (!count) {
      event->syscall_flags |= format::kSyscallEffectsUnknown;
      return Status::ok();
    }
    return add_write(tid, buffer, *count * sizeof(unsigned short), event);
  }
  return add_write(tid, buffer, ipc_ctl_output_bytes(event->syscall_number, command), event);
}

Status SyscallRecorder::capture_keyctl_effects(pid_t tid, format::Event* event) {
  const auto& args = event->args;
  uint64_t result = static_cast<uint64_t>(event->result);
  switch (args[0]) {
    case KEYCTL_DESCRIBE:
    case KEYCTL_READ:
    case KEYCTL_GET_SECURITY:
    case KEYCTL_DH_COMPUTE:
      // The result is the full length; at most buflen bytes were written.
      return add_write(tid, args[2], std::min<uint64_t>(result, args[3]), event);
    case KEYCTL_CAPABILITIES:
      return add_write(tid, args[1], std::min<uint64_t>(result, args[2]), event);
    case KEYCTL_GET_KEYRING_ID:
    case KEYCTL_JOIN_SESSION_KEYRING:
    case KEYCTL_UPDATE:
    case KEYCTL_REVOKE:
    case KEYCTL_CHOWN:
    case KEYCTL_SETPERM:
    case KEYCTL_CLEAR:
    case KEYCTL_LINK:
    case KEYCTL_UNLINK:
    case KEYCTL_SEARCH:
    case KEYCTL_INSTANTIATE:
    case KEYCTL_NEGATE:
    case KEYCTL_SET_REQKEY_KEYRING:
    case KEYCTL_SET_TIMEOUT:
    case KEYCTL_ASSUME_AUTHORITY:
    case KEYCTL_SESSION_TO_PARENT:
    case KEYCTL_REJECT:
    case KEYCTL_INSTANTIATE_IOV:
    case KEYCTL_INVALIDATE:
    case KEYCTL_GET_PERSISTENT:
    case KEYCTL_PKEY_VERIFY:
    case KEYCTL_RESTRICT_KEYRING:
    case KEYCTL_MOVE:
    case KEYCTL_WATCH_KEY:
      return Status::ok();  // they answer in the result, or only read
    default:
      // The PKEY query, encrypt, decrypt and sign operations write sizes
      // given in their parameter structs; newer operations are unknown.
      event->syscall_flags |= format::kSyscallEffectsUnknown;
      return Status::ok();
  }
}

uint32_t SyscallRecorder::recording_output(pid_t pid, int fd) const {
  if (!have_stdout_ && !have_stderr_) {
    return 0;
  }
  struct stat st;
  std::string fd_path = fmt::format("/proc/{}/fd/{}", pid, fd);
  if (stat(fd_path.c_str(), &st) != 0) {
    return 0;
  }
  // Bytes written to /dev/null were never seen, so replay has nothing to
  // print, even when repro's own stdout is /dev/null: keeping them would
  // make a program that discards gigabytes write gigabytes of trace.
  if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
    return 0;
  }
  if (have_stdout_ && st.st_dev == stdout_device_ && st.st_ino == stdout_inode_) {
    return format::kSyscallOutputStdout;
  }
  if (have_stderr_ && st.st_dev == stderr_device_ && st.st_ino == stderr_inode_) {
    return format::kSyscallOutputStderr;
  }
  return 0;
}

std::vector<std::pair<uint64_t, uint64_t>> SyscallRecorder::output_files() const {
  std::vector<std::pair<uint64_t, uint64_t>> files;
  if (have_stdout_) {
    files.emplace_back(stdout_device_, stdout_inode_);
  }
  if (have_stderr_) {
    files.emplace_back(stderr_device_, stderr_inode_);
  }
  return files;
}

bool SyscallRecorder::copies_to_recording_output(pid_t pid, int number,
                                                 const std::array<uint64_t, 6>& args) const {
  switch (number) {
    case SYS_copy_file_range:
    case SYS_splice:
      return recording_output(pid, static_cast<int>(args[2])) != 0;
    case SYS_sendfile:
      return recording_output(pid, static_cast<int>(args[0])) != 0;
    default:
      return false;
  }
}

Status SyscallRecorder::capture_output(pid_t tid, pid_t pid, format::Event* event) {
  if (event->result <= 0) {
    return Status::ok();
  }
  uint32_t output = recording_output(pid, static_cast<int>(event->args[0]));
  if (output == 0) {
    return Status::ok();
  }
  event->syscall_flags |= output;
  uint64_t written = static_cast<uint64_t>(event->result);
  if (event->syscall_number == SYS_write) {
    return add_write(tid, event->args[1], written, event);
  }
  uint64_t count = std::min<uint64_t>(event->args[2], 1024);
  std::vector<iovec> iovecs(count);
  REPRO_RETURN_IF_ERROR(os::read_memory(tid, event->args[1], iovecs.data(), count * sizeof(iovec)));
  for (const iovec& v : iovecs) {
    uint64_t n = std::min<uint64_t>(written, v.iov_len);
    REPRO_RETURN_IF_ERROR(add_write(tid, reinterpret_cast<uint64_t>(v.iov_base), n, event));
    written -= n;
  }
  return Status::ok();
}

}  // namespace repro::tracer
