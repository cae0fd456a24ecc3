#include "analysis/syscall_decoder.h"

#include <fmt/core.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include <csignal>
#include <cstring>

#include "analysis/memory_text.h"
#include "analysis/value_names.h"
#include "core/fastpath/fastpath_abi.h"
#include "core/syscalls/syscall_table.h"

namespace repro::analysis {
namespace {

using syscalls::ArgKind;
using syscalls::ArgSpec;
using syscalls::LengthRule;
using syscalls::StructKind;

// A number as strace shows one it has no name for: small ones (sizes,
// counts, negative values) in decimal, the rest in hex.
std::string number_text(uint64_t value) {
  int64_t signed_value = static_cast<int64_t>(value);
  if (signed_value > -4096 && signed_value < 65536) {
    return fmt::format("{}", signed_value);
  }
  return fmt::format("{:#x}", value);
}

std::string pointer_text(uint64_t address) {
  return address == 0 ? "NULL" : fmt::format("{:#x}", address);
}

bool succeeded(const format::Event& event) {
  return event.kind == format::EventKind::kSyscall && event.result >= 0;
}

// The bytes a read-like output argument received, which TraceReader
// filled in (from the event, or a file copy); a read from a pipe's stream
// has only zeros here (the bytes are the writer's, at replay), so none.
std::optional<std::string_view> received_bytes(const format::Event& event, uint64_t address,
                                               uint64_t length) {
  if (event.syscall_flags & format::kSyscallReadsPipe) {
    return std::nullopt;
  }
  return written_bytes(event, address, length);
}

// The text of an output (or in-out) argument: the struct or bytes the
// kernel left there when the trace holds them, else the address.
std::string output_text(const format::Event& event, const ArgSpec& spec, int index) {
  uint64_t address = event.args[index];
  if (address == 0 || !succeeded(event)) {
    return pointer_text(address);
  }
  std::string text;
  switch (spec.structure) {
    case StructKind::kStat:
      if (auto bytes = written_bytes(event, address, spec.fixed_bytes)) {
        text = stat_text(*bytes);
      }
      break;
    case StructKind::kTimespec:
      if (auto bytes = written_bytes(event, address, spec.fixed_bytes)) {
        text = timespec_text(*bytes);
      }
      break;
    case StructKind::kFdPair:
      if (auto bytes = written_bytes(event, address, spec.fixed_bytes)) {
        text = fd_pair_text(*bytes);
      }
      break;
    case StructKind::kPollfds:
      if (auto bytes = written_bytes(event, address,
                                     event.args[spec.length_arg] * spec.fixed_bytes)) {
        text = pollfds_text(*bytes);
      }
      break;
    case StructKind::kSockaddr:
      if (auto bytes = write_at(event, address)) {
        text = sockaddr_text(*bytes);
      }
      break;
    case StructKind::kNone:
      if (spec.rule == LengthRule::kResult || spec.rule == LengthRule::kCString) {
        uint64_t length = static_cast<uint64_t>(event.result);
        if (spec.rule == LengthRule::kCString) {
          auto bytes = write_at(event, address);
          length = bytes ? bytes->size() : 0;
        }
        if (auto bytes = received_bytes(event, address, length)) {
          std::string_view shown = *bytes;
          if (spec.rule == LengthRule::kCString) {
            shown = shown.substr(0, shown.find('\0'));
          }
          text = quoted(shown);
        }
      }
      break;
  }
  return text.empty() ? pointer_text(address) : text;
}

// The text of a buffer the program passed (write, sendto): its first bytes
// as the trace keeps them, "..." when the count says there were more.
std::string buffer_text(const format::Event& event, int index) {
  const std::string* prefix = input_of(event, index);
  if (prefix == nullptr) {
    return pointer_text(event.args[index]);
  }
  uint64_t count = index + 1 < 6 ? event.args[index + 1] : prefix->size();
  return quoted(*prefix, kShownBufferBytes, count > prefix->size());
}

std::string arg_text(const format::Event& event, const ArgSpec& spec, int index) {
  uint64_t value = event.args[index];
  std::string named = named_value_text(spec.kind, value);
  if (!named.empty()) {
    return named;
  }
  switch (spec.kind) {
    case ArgKind::kPathIn:
    case ArgKind::kNameIn: {
      const std::string* text = input_of(event, index);
      return text != nullptr ? quoted(*text, text->size()) : pointer_text(value);
    }
    case ArgKind::kSockaddrIn: {
      const std::string* address = input_of(event, index);
      std::string text = address != nullptr ? sockaddr_text(*address) : "";
      return text.empty() ? pointer_text(value) : text;
    }
    case ArgKind::kMsghdrIn: {
      const std::string* name = input_of(event, index);
      std::string text = name != nullptr ? sockaddr_text(*name) : "";
      return text.empty() ? pointer_text(value) : "{msg_name=" + text + ", ...}";
    }
    case ArgKind::kBufIn:
      return buffer_text(event, index);
    case ArgKind::kOut:
    case ArgKind::kInOut:
      return output_text(event, spec, index);
    case ArgKind::kPtrIn:
    case ArgKind::kAddr:
      return pointer_text(value);
    case ArgKind::kFlags:
      return value == 0 ? "0" : fmt::format("{:#x}", value);
    default:
      return number_text(value);
  }
}

// Syscalls whose result is an address.
bool returns_address(int number) {
  return number == SYS_mmap || number == SYS_mremap || number == SYS_brk || number == SYS_shmat;
}

// The kernel's restart codes (include/linux/errno.h): never seen by the
// program, so <errno.h> has no names for them.
const char* restart_name(int64_t result) {
  switch (-result) {
    case 512:
      return "ERESTARTSYS (To be restarted if SA_RESTART is set)";
    case 513:
      return "ERESTARTNOINTR (To be restarted)";
    case 514:
      return "ERESTARTNOHAND (To be restarted if no handler)";
    case 515:
      return "ENOIOCTLCMD (No ioctl command)";
    case 516:
      return "ERESTART_RESTARTBLOCK (Interrupted by signal)";
  }
  return nullptr;
}

}  // namespace

std::string call_text(const format::Event& event) {
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(event.syscall_number);
  // The fast path's library talks to the recorder through a number the
  // kernel does not have (core/fastpath/fastpath_abi.h).
  std::string text = event.syscall_number == REPRO_FASTPATH_CONTROL_SYSCALL
                         ? "repro_fastpath_control"
                         : syscalls::syscall_name(event.syscall_number);
  text += '(';
  int count = info != nullptr ? info->arg_count : 6;
  for (int i = 0; i < count; ++i) {
    // The kernel reads open's mode only when the flags may create a file;
    // strace leaves it out otherwise, and so do we.
    if (info != nullptr && i > 0 && info->args[i].kind == ArgKind::kMode &&
        info->args[i - 1].kind == ArgKind::kOpenFlags &&
        (event.args[i - 1] & O_CREAT) == 0 && (event.args[i - 1] & O_TMPFILE) != O_TMPFILE) {
      break;
    }
    if (i > 0) {
      text += ", ";
    }
    text += info != nullptr ? arg_text(event, info->args[i], i) : number_text(event.args[i]);
  }
  return text + ')';
}

std::string result_text(const format::Event& event) {
  int64_t result = event.result;
  if (const char* restart = restart_name(result)) {
    return fmt::format("? {}", restart);
  }
  if (result < 0 && result >= -4095) {
    int number = static_cast<int>(-result);
    return fmt::format("-1 {} ({})", errno_name(number), errno_description(number));
  }
  if (returns_address(event.syscall_number)) {
    return fmt::format("{:#x}", static_cast<uint64_t>(result));
  }
  return fmt::format("{}", result);
}

std::string signal_text(const format::Event& event) {
  std::string text = signal_number_name(event.signal_number);
  siginfo_t info;
  if (event.signal_info.size() < sizeof info) {
    return text;
  }
  std::memcpy(&info, event.signal_info.data(), sizeof info);
  std::string fields = fmt::format("si_signo={}, si_code={}", signal_number_name(info.si_signo),
                                   info.si_code);
  if (info.si_code <= 0) {  // sent by a process (SI_USER, SI_TKILL, SI_QUEUE, ...)
    fields += fmt::format(", si_pid={}, si_uid={}", info.si_pid, info.si_uid);
  } else if (info.si_signo == SIGSEGV || info.si_signo == SIGBUS || info.si_signo == SIGILL ||
             info.si_signo == SIGFPE || info.si_signo == SIGTRAP) {
    fields += fmt::format(", si_addr={}", pointer_text(reinterpret_cast<uint64_t>(info.si_addr)));
  } else if (info.si_signo == SIGCHLD) {
    fields += fmt::format(", si_pid={}, si_status={}", info.si_pid, info.si_status);
  }
  return text + " {" + fields + "}";
}

}  // namespace repro::analysis
