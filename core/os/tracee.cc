#include "core/os/tracee.h"

#include <elf.h>
#include <fmt/core.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/base/env_switch.h"
#include "core/base/scoped_fd.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace repro::os {

char scheduler_state(pid_t tid) {
  std::string path = fmt::format("/proc/{}/stat", tid);
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  char text[512];
  ssize_t n = fd.valid() ? read(fd.get(), text, sizeof text - 1) : -1;
  if (n <= 0) {
    return 0;
  }
  text[n] = '\0';
  // "pid (comm) S ...": comm may hold spaces and parentheses, the last ')' ends it.
  const char* close = strrchr(text, ')');
  return close != nullptr && close[1] == ' ' ? close[2] : 0;
}

namespace {

// /proc/TID/wchan: the function a sleeping thread waits in, or "0".
bool wchan_is_zero(pid_t tid) {
  std::string path = fmt::format("/proc/{}/wchan", tid);
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  char text[8];
  ssize_t n = fd.valid() ? read(fd.get(), text, sizeof text) : -1;
  return n <= 0 || (n == 1 && text[0] == '0');
}

// Whether wchan names the function of a thread asleep here: not without
// kallsyms, nor where /proc hides it. Probed once, on a child asleep in
// pause(). REPRO_WCHAN=off answers no, to test the fallback on any host.
bool wchan_names_sleepers() {
  static const bool names = [] {
    if (switched_off("REPRO_WCHAN")) {
      return false;
    }
    pid_t child = fork();
    if (child == 0) {
      pause();
      _exit(0);
    }
    if (child < 0) {
      return false;
    }
    bool named = false;
    for (int i = 0; i < 200 && !named; ++i) {
      timespec pause_time{0, 500 * 1000};
      nanosleep(&pause_time, nullptr);
      named = scheduler_state(child) == 'S' && !wchan_is_zero(child);
    }
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return named;
  }();
  return names;
}

// Asleep by the scheduler state and, where wchan tells (since Linux 5.16
// it reads "0" for a thread still on a run queue), off the run queue.
bool reads_asleep(pid_t tid) {
  return scheduler_state(tid) == 'S' && !(wchan_names_sleepers() && wchan_is_zero(tid));
}

}  // namespace

bool asleep_in_kernel(pid_t tid) {
  if (!reads_asleep(tid)) {
    return false;
  }
  sched_yield();
  return reads_asleep(tid);
}

std::optional<uint64_t> thread_cpu_ns(pid_t tid) {
  std::string path = fmt::format("/proc/{}/schedstat", tid);
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  char text[128];
  ssize_t n = fd.valid() ? read(fd.get(), text, sizeof text - 1) : -1;
  if (n <= 0) {
    return std::nullopt;
  }
  text[n] = '\0';
  char* end = nullptr;
  unsigned long long ns = strtoull(text, &end, 10);
  if (end == text) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(ns);
}

std::optional<int> wait_for_stop_until(pid_t tid, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    int status = 0;
    pid_t got = waitpid(tid, &status, __WALL | WNOHANG);
    if (got == tid) {
      return status;
    }
    if (got < 0 || std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    }
    timespec pause{0, 20 * 1000};
    nanosleep(&pause, nullptr);
  }
}

Result<int> wait_for(pid_t tid) {
  int status = 0;
  pid_t got = 0;
  do {
    got = waitpid(tid, &status, __WALL);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    return Status::from_errno(errno, "waitpid");
  }
  return status;
}

Result<SingleStep> single_step(pid_t tid) {
  if (ptrace(PTRACE_SINGLESTEP, tid, nullptr, 0) != 0) {
    return ptrace_error(errno, "stepping", tid);
  }
  SingleStep step;
  REPRO_ASSIGN_OR_RETURN(step.wait_status, wait_for(tid));
  step.trapped = is_sigtrap_stop(step.wait_status);
  if (step.trapped) {
    REPRO_ASSIGN_OR_RETURN(siginfo_t info, get_siginfo(tid));
    step.trapped = info.si_code == TRAP_TRACE;
  }
  return step;
}

Status ptrace_error(int errnum, const char* what, pid_t tid) {
  if (errnum == ESRCH) {
    return Status::error(StatusCode::kTraceeDied, fmt::format("{} of thread {}: thread is gone", what, tid));
  }
  return Status::from_errno(errnum, fmt::format("{} of thread {}", what, tid));
}

Result<Registers> get_registers(pid_t tid) {
  Registers regs;
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) {
    return ptrace_error(errno, "reading registers", tid);
  }
  return regs;
}

Status set_registers(pid_t tid, const Registers& regs) {
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &regs) != 0) {
    return ptrace_error(errno, "writing registers", tid);
  }
  return Status::ok();
}

Result<std::string> get_extended_registers(pid_t tid) {
  // 4096 bytes covers the XSAVE area with AVX-512 (2696 bytes); a larger
  // area is truncated by the kernel to what we pass, which still compares.
  std::string buffer(4096, '\0');
  iovec iov{buffer.data(), buffer.size()};
  if (ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &iov) != 0) {
    return ptrace_error(errno, "reading extended registers", tid);
  }
  buffer.resize(iov.iov_len);
  return buffer;
}

Result<siginfo_t> get_siginfo(pid_t tid) {
  siginfo_t info;
  if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, &info) != 0) {
    return ptrace_error(errno, "reading siginfo", tid);
  }
  return info;
}

Status set_siginfo(pid_t tid, const siginfo_t& info) {
  if (ptrace(PTRACE_SETSIGINFO, tid, nullptr, &info) != 0) {
    return ptrace_error(errno, "writing siginfo", tid);
  }
  return Status::ok();
}

Result<unsigned long> get_event_message(pid_t tid) {
  unsigned long message = 0;
  if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &message) != 0) {
    return ptrace_error(errno, "reading event message", tid);
  }
  return message;
}

Status read_memory(pid_t tid, uint64_t address, void* out, size_t length) {
  if (length == 0) {
    return Status::ok();
  }
  iovec local{out, length};
  iovec remote{reinterpret_cast<void*>(address), length};
  ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(length)) {
    return Status::ok();
  }
  // Fall back to word-sized peeks, which also read pages process_vm_readv
  // refuses (PROT_NONE guard pages are still an error there).
  auto* bytes = static_cast<uint8_t*>(out);
  size_t done = n > 0 ? static_cast<size_t>(n) : 0;
  while (done < length) {
    uint64_t word_address = (address + done) & ~uint64_t{7};
    errno = 0;
    long word = ptrace(PTRACE_PEEKDATA, tid, word_address, nullptr);
    if (errno != 0) {
      return ptrace_error(errno, fmt::format("reading memory at {:#x}", address + done).c_str(), tid);
    }
    size_t offset = address + done - word_address;
    size_t chunk = std::min(length - done, 8 - offset);
    std::memcpy(bytes + done, reinterpret_cast<uint8_t*>(&word) + offset, chunk);
    done += chunk;
  }
  return Status::ok();
}

Result<std::string> read_memory(pid_t tid, uint64_t address, size_t length) {
  std::string bytes(length, '\0');
  REPRO_RETURN_IF_ERROR(read_memory(tid, address, bytes.data(), length));
  return bytes;
}

Status read_gathered(pid_t tid, uint64_t iovecs, uint64_t count, uint64_t length,
                     std::string* out) {
  std::vector<iovec> entries(std::min<uint64_t>(count, IOV_MAX));
  REPRO_RETURN_IF_ERROR(read_memory(tid, iovecs, entries.data(), entries.size() * sizeof(iovec)));
  for (const iovec& v : entries) {
    uint64_t n = std::min<uint64_t>(length, v.iov_len);
    size_t at = out->size();
    out->resize(at + n);
    REPRO_RETURN_IF_ERROR(read_memory(tid, reinterpret_cast<uint64_t>(v.iov_base), out->data() + at, n));
    length -= n;
  }
  return Status::ok();
}

Result<std::string> read_c_string(pid_t tid, uint64_t address, size_t max_length) {
  std::string text;
  char chunk[256];
  while (text.size() < max_length) {
    // Stay within one page per read so a string ending near an unmapped page reads.
    size_t to_page_end = 4096 - ((address + text.size()) & 4095);
    size_t n = std::min<size_t>({sizeof chunk, to_page_end, max_length - text.size()});
    REPRO_RETURN_IF_ERROR(read_memory(tid, address + text.size(), chunk, n));
    const void* nul = std::memchr(chunk, 0, n);
    if (nul != nullptr) {
      text.append(chunk, static_cast<const char*>(nul) - chunk);
      return text;
    }
    text.append(chunk, n);
  }
  return text;
}

Status write_memory(pid_t tid, uint64_t address, const void* data, size_t length) {
  if (length == 0) {
    return Status::ok();
  }
  iovec local{const_cast<void*>(data), length};
  iovec remote{reinterpret_cast<void*>(address), length};
  ssize_t n = process_vm_writev(tid, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(length)) {
    return Status::ok();
  }
  size_t done = n > 0 ? static_cast<size_t>(n) : 0;
  const auto* bytes = static_cast<const uint8_t*>(data);
  while (done < length) {
    uint64_t word_address = (address + done) & ~uint64_t{7};
    size_t offset = address + done - word_address;
    size_t chunk = std::min(length - done, 8 - offset);
    long word = 0;
    if (offset != 0 || chunk != 8) {
      errno = 0;
      word = ptrace(PTRACE_PEEKDATA, tid, word_address, nullptr);
      if (errno != 0) {
        return ptrace_error(errno, fmt::format("writing memory at {:#x}", address + done).c_str(), tid);
      }
    }
    std::memcpy(reinterpret_cast<uint8_t*>(&word) + offset, bytes + done, chunk);
    if (ptrace(PTRACE_POKEDATA, tid, word_address, word) != 0) {
      return ptrace_error(errno, fmt::format("writing memory at {:#x}", address + done).c_str(), tid);
    }
    done += chunk;
  }
  return Status::ok();
}

Status write_memory_forced(pid_t pid, uint64_t address, const void* data, size_t length) {
  std::string path = fmt::format("/proc/{}/mem", pid);
  ScopedFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return ptrace_error(errno, "opening memory", pid);
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < length) {
    ssize_t n = pwrite(fd.get(), bytes + done, length - done, static_cast<off_t>(address + done));
    if (n <= 0) {
      return ptrace_error(n < 0 ? errno : EIO,
                          fmt::format("writing memory at {:#x}", address + done).c_str(), pid);
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

namespace {

// The signal masks of /proc/TID/status, by key ("SigCgt:\t", ...).
class SignalMasks {
 public:
  static Result<SignalMasks> read(pid_t tid) {
    std::string path = fmt::format("/proc/{}/status", tid);
    ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
      return ptrace_error(errno == ENOENT ? ESRCH : errno, "reading signal masks", tid);
    }
    SignalMasks masks;
    masks.text_.resize(8192);
    ssize_t n = ::read(fd.get(), masks.text_.data(), masks.text_.size());
    if (n <= 0) {
      return ptrace_error(n < 0 ? errno : EIO, "reading signal masks", tid);
    }
    masks.text_.resize(static_cast<size_t>(n));
    return masks;
  }
  uint64_t operator[](const char* key) const {
    size_t at = text_.find(key);
    return at == std::string::npos
               ? 0
               : std::strtoull(text_.c_str() + at + std::strlen(key), nullptr, 16);
  }

 private:
  std::string text_;
};

}  // namespace

Result<SignalDisposition> signal_disposition(pid_t tid, int signal) {
  REPRO_ASSIGN_OR_RETURN(SignalMasks mask, SignalMasks::read(tid));
  uint64_t bit = uint64_t{1} << (signal - 1);
  if (mask["SigCgt:\t"] & bit) {
    return SignalDisposition::kCaught;
  }
  bool ignored_by_default = signal == SIGCHLD || signal == SIGURG || signal == SIGWINCH;
  if ((mask["SigIgn:\t"] & bit) || ignored_by_default) {
    return SignalDisposition::kIgnored;
  }
  return SignalDisposition::kDefault;
}

Result<uint64_t> signal_mask(pid_t tid) {
  uint64_t mask = 0;
  if (ptrace(PTRACE_GETSIGMASK, tid, sizeof mask, &mask) != 0) {
    return ptrace_error(errno, "reading the signal mask", tid);
  }
  return mask;
}

Status set_signal_mask(pid_t tid, uint64_t mask) {
  if (ptrace(PTRACE_SETSIGMASK, tid, sizeof mask, &mask) != 0) {
    return ptrace_error(errno, "setting the signal mask", tid);
  }
  return Status::ok();
}

Result<bool> sigtrap_blocked(pid_t tid) {
  REPRO_ASSIGN_OR_RETURN(uint64_t mask, signal_mask(tid));
  return (mask & (uint64_t{1} << (SIGTRAP - 1))) != 0;
}

Status block_sigtrap(pid_t tid) {
  REPRO_ASSIGN_OR_RETURN(uint64_t mask, signal_mask(tid));
  return set_signal_mask(tid, mask | (uint64_t{1} << (SIGTRAP - 1)));
}

Result<uint64_t> pending_signals(pid_t tid) {
  REPRO_ASSIGN_OR_RETURN(SignalMasks mask, SignalMasks::read(tid));
  return mask["SigPnd:\t"] | mask["ShdPnd:\t"];
}

namespace {

constexpr uint64_t kIgnoredFlags = 0x100 | 0x10000;  // TF, RF

// The registers same_user_state compares, with their names.
template <typename Visit>
void for_each_user_register(const Registers& a, const Registers& b, Visit visit) {
#define REPRO_USER_REGISTER(name) visit(#name, a.name, b.name)
  REPRO_USER_REGISTER(rax);
  REPRO_USER_REGISTER(rbx);
  REPRO_USER_REGISTER(rcx);
  REPRO_USER_REGISTER(rdx);
  REPRO_USER_REGISTER(rsi);
  REPRO_USER_REGISTER(rdi);
  REPRO_USER_REGISTER(rbp);
  REPRO_USER_REGISTER(rsp);
  REPRO_USER_REGISTER(r8);
  REPRO_USER_REGISTER(r9);
  REPRO_USER_REGISTER(r10);
  REPRO_USER_REGISTER(r11);
  REPRO_USER_REGISTER(r12);
  REPRO_USER_REGISTER(r13);
  REPRO_USER_REGISTER(r14);
  REPRO_USER_REGISTER(r15);
  REPRO_USER_REGISTER(rip);
  REPRO_USER_REGISTER(fs_base);
  REPRO_USER_REGISTER(gs_base);
#undef REPRO_USER_REGISTER
  visit("eflags", a.eflags & ~kIgnoredFlags, b.eflags & ~kIgnoredFlags);
}

}  // namespace

void set_syscall_args(Registers& regs, const std::array<uint64_t, 6>& args) {
  regs.rdi = args[0];
  regs.rsi = args[1];
  regs.rdx = args[2];
  regs.r10 = args[3];
  regs.r8 = args[4];
  regs.r9 = args[5];
}

bool same_user_state(const Registers& a, const Registers& b) {
  bool same = true;
  for_each_user_register(a, b, [&](const char*, uint64_t x, uint64_t y) { same = same && x == y; });
  return same;
}

std::string describe_register_differences(const Registers& actual, const Registers& expected) {
  std::string text;
  for_each_user_register(actual, expected, [&](const char* name, uint64_t x, uint64_t y) {
    if (x != y) {
      text += fmt::format("{}{} {:#x} (recorded {:#x})", text.empty() ? "" : ", ", name, x, y);
    }
  });
  return text;
}

}  // namespace repro::os
