#include "tracer/syscall_inputs.h"

#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>

#include "core/os/tracee.h"
#include "core/syscalls/syscall_table.h"

namespace repro::tracer {
namespace {

// Reads up to `length` bytes at `address`, or nothing at all.
bool read_bytes(pid_t tid, uint64_t address, uint64_t length, std::string* out) {
  if (address == 0 || length == 0) {
    return false;
  }
  auto bytes = os::read_memory(tid, address, static_cast<size_t>(length));
  if (!bytes.is_ok()) {
    return false;
  }
  *out = std::move(*bytes);
  return true;
}

// sendmsg's destination: msg_name (offset 0) and msg_namelen (offset 8) of
// the struct msghdr at `address`.
bool read_msghdr_name(pid_t tid, uint64_t address, std::string* out) {
  struct msghdr header;
  if (address == 0 || !os::read_memory(tid, address, &header, sizeof header).is_ok()) {
    return false;
  }
  uint64_t length = std::min<uint64_t>(header.msg_namelen, kMaxSockaddrInputBytes);
  return read_bytes(tid, reinterpret_cast<uint64_t>(header.msg_name), length, out);
}

}  // namespace

void capture_syscall_inputs(pid_t tid, const std::string& exec_filename, format::Event* event) {
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(event->syscall_number);
  if (info == nullptr) {
    return;
  }
  bool exec = event->syscall_number == SYS_execve || event->syscall_number == SYS_execveat;
  for (int i = 0; i < info->arg_count; ++i) {
    uint64_t arg = event->args[i];
    // The length argument of the kinds that have one (the next argument).
    uint64_t length = i + 1 < 6 ? event->args[i + 1] : 0;
    format::SyscallInput input;
    input.arg_index = static_cast<uint8_t>(i);
    bool kept = false;
    switch (info->args[i].kind) {
      case syscalls::ArgKind::kPathIn:
        if (exec && event->result == 0 && i == (event->syscall_number == SYS_execve ? 0 : 1)) {
          input.bytes = exec_filename.substr(0, kMaxPathInputBytes);
          kept = true;
        } else if (arg != 0) {
          auto path = os::read_c_string(tid, arg, kMaxPathInputBytes);
          if (path.is_ok()) {
            input.bytes = std::move(*path);
            kept = true;
          }
        }
        break;
      case syscalls::ArgKind::kNameIn:
        if (arg != 0) {
          auto name = os::read_c_string(tid, arg, kMaxNameInputBytes);
          if (name.is_ok()) {
            input.bytes = std::move(*name);
            kept = true;
          }
        }
        break;
      case syscalls::ArgKind::kSockaddrIn:
        kept = read_bytes(tid, arg, std::min<uint64_t>(length, kMaxSockaddrInputBytes),
                          &input.bytes);
        break;
      case syscalls::ArgKind::kBufIn:
        kept = read_bytes(tid, arg, std::min<uint64_t>(length, kWritePrefixBytes), &input.bytes);
        break;
      case syscalls::ArgKind::kMsghdrIn:
        kept = read_msghdr_name(tid, arg, &input.bytes);
        break;
      default:
        break;
    }
    if (kept) {
      event->inputs.push_back(std::move(input));
    }
  }
}

}  // namespace repro::tracer
