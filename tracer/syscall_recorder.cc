#include "tracer/syscall_recorder.h"

#include <asm/prctl.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>

#include <algorithm>

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
    default:
      return Status::ok();
  }
}

Status SyscallRecorder::capture_custom_effects(pid_t tid, int arg_index, format::Event* event) {
  const auto& args = event->args;
  uint64_t address = args[arg_index];
  switch (event->syscall_number) {
    case SYS_ioctl:
      switch (args[1]) {
        case TCGETS:
          return add_write(tid, address, kKernelTermiosBytes, event);
        case TIOCGWINSZ:
          return add_write(tid, address, sizeof(winsize), event);
        case FIONREAD:
        case TIOCGPGRP:
        case TIOCGSID:
        case TIOCOUTQ:
          return add_write(tid, address, sizeof(int), event);
        case TIOCGPTN:
          return add_write(tid, address, sizeof(unsigned), event);
        case FIONBIO:
        case FIOCLEX:
        case FIONCLEX:
        case FIOASYNC:
        case TCSETS:
        case TCSETSW:
        case TCSETSF:
        case TIOCSWINSZ:
        case TIOCSPGRP:
          return Status::ok();
        default:
          event->syscall_flags |= format::kSyscallEffectsUnknown;
          return Status::ok();
      }
    case SYS_fcntl:
      if (args[1] == F_GETLK || args[1] == F_OFD_GETLK) {
        return add_write(tid, address, sizeof(struct flock), event);
      }
      return Status::ok();
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
    case SYS_capget:
      // Version 3 capabilities: two 12-byte __user_cap_data_struct.
      return add_write(tid, address, 2 * sizeof(__user_cap_data_struct), event);
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
    default:
      event->syscall_flags |= format::kSyscallEffectsUnknown;
      return Status::ok();
  }
}

Status SyscallRecorder::capture_output(pid_t tid, pid_t pid, format::Event* event) {
  if (event->result <= 0 || (!have_stdout_ && !have_stderr_)) {
    return Status::ok();
  }
  struct stat st;
  std::string fd_path = fmt::format("/proc/{}/fd/{}", pid, static_cast<int>(event->args[0]));
  if (stat(fd_path.c_str(), &st) != 0) {
    return Status::ok();
  }
  if (have_stdout_ && st.st_dev == stdout_device_ && st.st_ino == stdout_inode_) {
    event->syscall_flags |= format::kSyscallOutputStdout;
  } else if (have_stderr_ && st.st_dev == stderr_device_ && st.st_ino == stderr_inode_) {
    event->syscall_flags |= format::kSyscallOutputStderr;
  } else {
    return Status::ok();
  }
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
