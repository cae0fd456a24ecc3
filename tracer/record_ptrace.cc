// ptrace between recorded threads, emulated by the recorder.
//
// repro is the one real tracer of every recorded thread, so a recorded
// thread's own ptrace() of another one would fail (EPERM) and change what
// the program does. The commonest case is LeakSanitizer at the exit of every
// -fsanitize=address program: it clones an untraced helper task that
// attaches to each thread of the process, waits for the attach stops, reads
// their registers and detaches again. The recorder plays the kernel's part
// for that traffic:
//
// - clone(CLONE_UNTRACED) loses the flag, in recording and replay alike, so
//   the helper is recorded like any other thread (untraced, its syscalls
//   would meet repro's seccomp filter with no tracer and fail with ENOSYS);
// - TRACEME makes the parent process the tracer; ATTACH and INTERRUPT
//   (after SEIZE) stop the target: the scheduler does not run it until
//   DETACH, CONT or its tracer's exit; the stop is reported to wait4/waitid
//   of the tracer, which blocks until there is one to report;
// - a traced thread's signals stop it first (signal-delivery-stop): its
//   tracer reads them (GETSIGINFO) and passes them on or drops them with
//   its CONT or DETACH; after TRACEME or ATTACH, a successful exec stops
//   it with SIGTRAP;
// - GETREGS, GETFPREGS, GETREGSET, PEEKDATA, PEEKTEXT and PEEKUSER read the
//   stopped target for real and write the answer into the tracer's memory;
// - every emulated call is a syscall event whose result and memory writes
//   replay feeds back like any other (kSyscallDenied: the kernel never ran
//   it), so replay needs no emulation of its own.
//
// Other requests (POKE*, SETREGS, SINGLESTEP, SYSCALL, LISTEN, ...) fail
// with EPERM, and SETOPTIONS other than EXITKILL and TRACESYSGOOD with
// EINVAL; record warns once naming the request. Targets outside the
// recording are refused the same way.

#include <elf.h>
#include <fmt/core.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "core/os/tracee.h"
#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {
namespace {

// The largest register set a program may ask for: the XSAVE area is 2.5
// KiB on current x86-64 CPUs (AVX-512 included); 64 KiB bounds a bogus
// iov_len from the program without truncating any real set.
constexpr size_t kMaxRegsetBytes = 64 * 1024;

// The wait status of a thread stopped by PTRACE_ATTACH (SIGSTOP) and by
// PTRACE_INTERRUPT after PTRACE_SEIZE (SIGTRAP | PTRACE_EVENT_STOP << 8).
constexpr int kAttachStopStatus = (SIGSTOP << 8) | 0x7f;
constexpr int kInterruptStopStatus = ((SIGTRAP | (PTRACE_EVENT_STOP << 8)) << 8) | 0x7f;

std::string request_name(long request) {
  switch (request) {
    case PTRACE_TRACEME: return "PTRACE_TRACEME";
    case PTRACE_PEEKTEXT: return "PTRACE_PEEKTEXT";
    case PTRACE_PEEKDATA: return "PTRACE_PEEKDATA";
    case PTRACE_PEEKUSER: return "PTRACE_PEEKUSER";
    case PTRACE_POKETEXT: return "PTRACE_POKETEXT";
    case PTRACE_POKEDATA: return "PTRACE_POKEDATA";
    case PTRACE_POKEUSER: return "PTRACE_POKEUSER";
    case PTRACE_CONT: return "PTRACE_CONT";
    case PTRACE_KILL: return "PTRACE_KILL";
    case PTRACE_SINGLESTEP: return "PTRACE_SINGLESTEP";
    case PTRACE_GETREGS: return "PTRACE_GETREGS";
    case PTRACE_SETREGS: return "PTRACE_SETREGS";
    case PTRACE_GETFPREGS: return "PTRACE_GETFPREGS";
    case PTRACE_SETFPREGS: return "PTRACE_SETFPREGS";
    case PTRACE_ATTACH: return "PTRACE_ATTACH";
    case PTRACE_DETACH: return "PTRACE_DETACH";
    case PTRACE_SYSCALL: return "PTRACE_SYSCALL";
    case PTRACE_SETOPTIONS: return "PTRACE_SETOPTIONS";
    case PTRACE_GETEVENTMSG: return "PTRACE_GETEVENTMSG";
    case PTRACE_GETSIGINFO: return "PTRACE_GETSIGINFO";
    case PTRACE_SETSIGINFO: return "PTRACE_SETSIGINFO";
    case PTRACE_GETREGSET: return "PTRACE_GETREGSET";
    case PTRACE_SETREGSET: return "PTRACE_SETREGSET";
    case PTRACE_SEIZE: return "PTRACE_SEIZE";
    case PTRACE_INTERRUPT: return "PTRACE_INTERRUPT";
    case PTRACE_LISTEN: return "PTRACE_LISTEN";
    default: return fmt::format("request {}", request);
  }
}

template <typename T>
std::string bytes_of(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

Result<os::Registers> RecordSession::registers_for_emulated_tracer(Thread& target) {
  // A thread inside a blocking syscall runs in the kernel and cannot be
  // read: it shows the registers of its syscall's entry, which hold what
  // it had in user space (a real attach would show the same but for rax).
  if (target.state == Thread::State::kInSyscall) {
    return target.entry_regs;
  }
  return os::get_registers(target.tid);
}

Status RecordSession::answer_in_place(Thread& t, int64_t result) {
  // Requires: t stopped at the syscall's entry; event_ holds its writes.
  // The kernel skips a syscall whose number is -1 at a seccomp stop and
  // the program sees rax as its result.
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  regs.orig_rax = static_cast<uint64_t>(-1);
  regs.rax = static_cast<uint64_t>(result);
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  for (const format::MemoryWrite& write : event_.writes) {
    REPRO_RETURN_IF_ERROR(
        os::write_memory(t.tid, write.address, write.bytes.data(), write.bytes.size()));
  }
  event_.kind = format::EventKind::kSyscall;
  event_.thread = t.index;
  event_.syscall_number = t.syscall_number;
  event_.args = t.args;
  event_.result = result;
  event_.syscall_flags = format::kSyscallDenied;
  REPRO_RETURN_IF_ERROR(log(event_));
  return resume_user(t);
}

void RecordSession::warn_once(const std::string& key, const std::string& message) {
  if (options_.on_warning && warned_.insert(key).second) {
    options_.on_warning(message);
  }
}

bool RecordSession::strip_clone_untraced(Thread& t, os::Registers& regs) {
  if (t.syscall_number != SYS_clone || !(regs.rdi & CLONE_UNTRACED)) {
    return false;
  }
  regs.rdi &= ~static_cast<uint64_t>(CLONE_UNTRACED);
  return true;  // t.args keep the program's flags: the event shows what it asked for
}

void RecordSession::stop_for_emulated_tracer(Thread& target, int wait_status) {
  target.emulated_stop_status = wait_status;
  target.emulated_stop_reported = false;
  if (target.state == Thread::State::kReady) {
    std::erase(ready_, target.tid);
    target.state = Thread::State::kEmulatedStop;
  }
  // Running in the kernel, starting or held: make_ready parks it instead.
}

void RecordSession::park_for_emulated_tracer(Thread& t, int wait_status) {
  t.emulated_stop_status = wait_status;
  t.emulated_stop_reported = false;
  std::erase(ready_, t.tid);
  release_cpu(t);
  t.state = Thread::State::kEmulatedStop;
  wake_waiting_tracers(t.emulated_tracer);
}

void RecordSession::wake_waiting_tracers(pid_t tracer_tid) {
  Thread* tracer = find(tracer_tid);
  if (tracer == nullptr) {
    return;
  }
  for (auto& [tid, other] : threads_) {
    if (other->pid != tracer->pid) {
      continue;
    }
    if (other->held_for_tracee && other->state == Thread::State::kHeld) {
      make_ready(*other);
    } else if (other->state == Thread::State::kInSyscall && !other->interrupt_requested &&
               (other->syscall_number == SYS_wait4 || other->syscall_number == SYS_waitid)) {
      // Waiting in the kernel, which knows nothing of emulated stops: break
      // the wait off; the kernel restarts it, and its entry comes back to
      // us (on_syscall_entry) to be answered.
      other->interrupt_requested = true;
      other->tracee_wait_interrupted = true;
      (void)ptrace(PTRACE_INTERRUPT, other->tid, nullptr, nullptr);
    }
  }
}

void RecordSession::release_from_emulated_stop(Thread& target) {
  target.emulated_stop_status = 0;
  if (target.state == Thread::State::kEmulatedStop) {
    make_ready(target);
  }
}

void RecordSession::release_emulated_tracees(pid_t tracer_tid) {
  for (auto& [tid, other] : threads_) {
    if (other->emulated_tracer == tracer_tid) {
      other->emulated_tracer = 0;
      if (other->emulated_exitkill) {
        (void)syscall(SYS_tgkill, other->pid, other->tid, SIGKILL);
      }
      if (other->emulated_signal && other->emulated_signal_is_pending) {
        // Its tracer gone at a signal-delivery-stop: the signal is not lost.
        other->signal_to_deliver = other->emulated_signal->si_signo;
      }
      release_from_emulated_stop(*other);
    }
  }
}

Status RecordSession::deliver_signal_from_emulated_tracer(Thread& t) {
  int signal = t.signal_to_deliver;
  t.signal_to_deliver = 0;
  siginfo_t info = t.emulated_signal.value_or(siginfo_t{});
  t.emulated_signal.reset();
  if (info.si_signo != signal) {
    // The tracer passed on another signal than the one that stopped t.
    info = siginfo_t{};
    info.si_signo = signal;
    info.si_code = SI_USER;
  }
  REPRO_RETURN_IF_ERROR(os::set_siginfo(t.tid, info));
  t.state = Thread::State::kRunning;  // holds the CPU, at its delivery-stop
  return deliver_signal(t, signal, info);
}

bool RecordSession::stop_after_exec_for_emulated_tracer(Thread& t) {
  if (t.emulated_tracer == 0 || !t.emulated_exec_sigtrap) {
    return false;
  }
  // The kernel sends the SIGTRAP: a real signal, which the tracer usually
  // drops. At our syscall-exit stop there is no delivery-stop to pass it
  // on from, so passing it on sends it anew (signal_let_through).
  siginfo_t info{};
  info.si_signo = SIGTRAP;
  info.si_code = SI_USER;
  t.emulated_signal = info;
  t.emulated_signal_is_pending = false;
  park_for_emulated_tracer(t, (SIGTRAP << 8) | 0x7f);
  return true;
}

void RecordSession::end_stuck_tracer_waits() {
  if (current_ != 0 || !ready_.empty()) {
    return;
  }
  bool stuck = false;
  for (const auto& [tid, t] : threads_) {
    bool waiting = t->state == Thread::State::kHeld && t->held_for_tracee;
    if (!waiting && t->state != Thread::State::kEmulatedStop &&
        t->state != Thread::State::kJobStopped) {
      return;  // something may still run, and stop a tracee
    }
    stuck |= waiting;
  }
  for (auto& [tid, t] : threads_) {
    if (stuck && t->state == Thread::State::kHeld && t->held_for_tracee) {
      t->tracee_wait_gives_up = true;
      make_ready(*t);
    }
  }
}

Status RecordSession::retry_wait_for_ptrace_stop(Thread& t) {
  t.held_for_tracee = false;
  REPRO_ASSIGN_OR_RETURN(bool answered, emulate_wait_for_ptrace_stop(t));
  return answered ? Status::ok() : enter_syscall(t);
}

Status RecordSession::pass_on_signal(Thread& target, int signal) {
  std::optional<siginfo_t> stop_signal = target.emulated_signal;
  bool pending = target.emulated_signal_is_pending;
  target.emulated_signal.reset();
  target.emulated_signal_is_pending = false;
  if (pending) {
    target.signal_to_deliver = signal;  // 0: dropped, as the tracer wants
    return Status::ok();
  }
  if (signal == 0 || !stop_signal) {
    return Status::ok();  // nothing to pass on, or an event stop's data
  }
  // Not at a real delivery-stop (attach, exec): the signal is sent anew,
  // and arrives as one from a sibling would.
  target.signal_let_through = signal;
  if (syscall(SYS_tgkill, target.pid, target.tid, signal) != 0 && errno != ESRCH) {
    return Status::from_errno(errno, "passing on a signal for an emulated ptrace");
  }
  return Status::ok();
}

Status RecordSession::emulate_traceme(Thread& t, const std::function<Status(int)>& refuse) {
  // The tracer is the parent process, as the kernel has it; repro records
  // its thread group leader, whose tid is its pid.
  std::ifstream status(fmt::format("/proc/{}/status", t.pid));
  pid_t parent = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("PPid:")) {
      parent = static_cast<pid_t>(std::stol(line.substr(5)));
    }
  }
  Thread* tracer = find(parent);
  if (tracer == nullptr || tracer->pid != parent) {
    return refuse(EPERM);  // a parent outside the recording
  }
  if (t.emulated_tracer != 0) {
    return answer_in_place(t, -EPERM);
  }
  t.emulated_tracer = parent;
  t.emulated_exec_sigtrap = true;
  t.emulated_exitkill = false;
  return answer_in_place(t, 0);
}

Status RecordSession::emulate_ptrace(Thread& t) {
  const long request = static_cast<long>(t.args[0]);
  const pid_t target_tid = static_cast<pid_t>(t.args[1]);
  const uint64_t addr = t.args[2];
  const uint64_t data = t.args[3];
  event_.clear();

  auto refuse = [&](int error) -> Status {
    warn_once("ptrace " + request_name(request),
              fmt::format("the program called ptrace({}); repro emulates ptrace only between "
                          "recorded threads for TRACEME, ATTACH, SEIZE, INTERRUPT, GETREGS, "
                          "GETFPREGS, GETREGSET, PEEK*, GETSIGINFO, SETOPTIONS (EXITKILL, "
                          "TRACESYSGOOD), CONT, DETACH and KILL: it got {}",
                          request_name(request), strerrorname_np(error)));
    return answer_in_place(t, -error);
  };
  if (request == PTRACE_TRACEME) {
    return emulate_traceme(t, refuse);
  }
  Thread* target = find(target_tid);
  if (target == nullptr || target == &t || target->state == Thread::State::kExiting) {
    return refuse(target == nullptr ? EPERM : ESRCH);
  }
  // The tracer is a thread; any thread of its process may use the tracee.
  Thread* tracer = target->emulated_tracer ? find(target->emulated_tracer) : nullptr;
  bool ours = tracer != nullptr && tracer->pid == t.pid;
  bool stopped = ours && target->emulated_stop_status != 0;

  switch (request) {
    case PTRACE_ATTACH:
    case PTRACE_SEIZE:
      if (target->emulated_tracer != 0) {
        return answer_in_place(t, -EPERM);
      }
      target->emulated_tracer = t.tid;
      target->emulated_exec_sigtrap = request == PTRACE_ATTACH;
      target->emulated_exitkill = false;
      if (request == PTRACE_ATTACH) {
        // The kernel sends SIGSTOP; its delivery-stop is the attach stop.
        siginfo_t info{};
        info.si_signo = SIGSTOP;
        info.si_code = SI_USER;
        target->emulated_signal = info;
        target->emulated_signal_is_pending = false;
        stop_for_emulated_tracer(*target, kAttachStopStatus);
      }
      return answer_in_place(t, 0);
    case PTRACE_INTERRUPT:
      if (!ours) {
        return answer_in_place(t, -ESRCH);
      }
      if (target->emulated_stop_status == 0) {
        target->emulated_signal.reset();
        stop_for_emulated_tracer(*target, kInterruptStopStatus);
      }
      return answer_in_place(t, 0);
    case PTRACE_SETOPTIONS: {
      if (!ours) {
        return answer_in_place(t, -ESRCH);
      }
      const uint64_t emulated = PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD;
      if (data & ~emulated) {
        return refuse(EINVAL);  // events repro would never report: refuse, not hang
      }
      target->emulated_exitkill = data & PTRACE_O_EXITKILL;
      return answer_in_place(t, 0);
    }
    case PTRACE_GETSIGINFO:
      if (!stopped) {
        return answer_in_place(t, -ESRCH);
      }
      if (!target->emulated_signal) {
        return answer_in_place(t, -EINVAL);  // an event stop: no signal
      }
      event_.writes.push_back({data, bytes_of(*target->emulated_signal)});
      return answer_in_place(t, 0);
    case PTRACE_DETACH:
    case PTRACE_CONT:
      if (!stopped) {
        return answer_in_place(t, -ESRCH);
      }
      if (request == PTRACE_DETACH) {
        target->emulated_tracer = 0;
      }
      REPRO_RETURN_IF_ERROR(pass_on_signal(*target, data < NSIG ? static_cast<int>(data) : 0));
      release_from_emulated_stop(*target);
      return answer_in_place(t, 0);
    case PTRACE_KILL:
      if (!ours) {
        return answer_in_place(t, -ESRCH);
      }
      release_from_emulated_stop(*target);
      if (syscall(SYS_tgkill, target->pid, target->tid, SIGKILL) != 0 && errno != ESRCH) {
        return Status::from_errno(errno, "killing a thread for an emulated ptrace");
      }
      return answer_in_place(t, 0);
    default:
      break;
  }

  // The requests that read a stopped tracee.
  switch (request) {
    case PTRACE_GETREGS: {
      if (!stopped) {
        return answer_in_place(t, -ESRCH);
      }
      REPRO_ASSIGN_OR_RETURN(os::Registers regs, registers_for_emulated_tracer(*target));
      event_.writes.push_back({data, bytes_of(regs)});
      return answer_in_place(t, 0);
    }
    case PTRACE_GETFPREGS:
    case PTRACE_GETREGSET: {
      if (!stopped) {
        return answer_in_place(t, -ESRCH);
      }
      iovec request_iov{nullptr, sizeof(user_fpregs_struct)};
      uint64_t regset = request == PTRACE_GETFPREGS ? NT_PRFPREG : addr;
      if (request == PTRACE_GETREGSET) {
        REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, data, &request_iov, sizeof request_iov));
      }
      std::string bytes(std::min(request_iov.iov_len, kMaxRegsetBytes), '\0');
      if (regset == NT_PRSTATUS) {
        REPRO_ASSIGN_OR_RETURN(os::Registers regs, registers_for_emulated_tracer(*target));
        bytes = bytes_of(regs).substr(0, bytes.size());
      } else {
        // Only a thread stopped in user space has its FPU state at hand: one
        // inside a blocking syscall is running in the kernel.
        iovec iov{bytes.data(), bytes.size()};
        if (target->state == Thread::State::kInSyscall ||
            ptrace(PTRACE_GETREGSET, target->tid, regset, &iov) != 0) {
          return answer_in_place(t, target->state == Thread::State::kInSyscall ? -ESRCH : -errno);
        }
        bytes.resize(iov.iov_len);
      }
      if (request == PTRACE_GETFPREGS) {
        event_.writes.push_back({data, std::move(bytes)});
        return answer_in_place(t, 0);
      }
      uint64_t base = reinterpret_cast<uint64_t>(request_iov.iov_base);
      request_iov.iov_len = bytes.size();
      event_.writes.push_back({base, std::move(bytes)});
      event_.writes.push_back({data, bytes_of(request_iov)});
      return answer_in_place(t, 0);
    }
    case PTRACE_PEEKTEXT:
    case PTRACE_PEEKDATA:
    case PTRACE_PEEKUSER: {
      if (!stopped) {
        return answer_in_place(t, -ESRCH);
      }
      // The raw syscall stores the word at `data` (glibc's wrapper returns it).
      uint64_t word = 0;
      if (request == PTRACE_PEEKUSER) {
        if (addr % sizeof word != 0 || addr + sizeof word > sizeof(os::Registers)) {
          return answer_in_place(t, -EIO);  // only the general registers of struct user
        }
        REPRO_ASSIGN_OR_RETURN(os::Registers regs, registers_for_emulated_tracer(*target));
        std::memcpy(&word, reinterpret_cast<const char*>(&regs) + addr, sizeof word);
      } else if (!os::read_memory(target->tid, addr, &word, sizeof word).is_ok()) {
        return answer_in_place(t, -EIO);
      }
      event_.writes.push_back({data, bytes_of(word)});
      return answer_in_place(t, 0);
    }
    default:
      return refuse(EPERM);
  }
}

Result<bool> RecordSession::emulate_wait_for_ptrace_stop(Thread& t) {
  // wait4(pid, wstatus, options, rusage) and waitid(idtype, id, infop,
  // options, rusage) of a tracer whose tracee's stop is not yet reported.
  bool is_wait4 = t.syscall_number == SYS_wait4;
  pid_t wanted = 0;
  int options = 0;
  if (is_wait4) {
    wanted = static_cast<pid_t>(t.args[0]);
    options = static_cast<int>(t.args[2]);
  } else {
    if (t.args[0] != P_PID && t.args[0] != P_ALL) {
      return false;
    }
    wanted = t.args[0] == P_ALL ? -1 : static_cast<pid_t>(t.args[1]);
    options = static_cast<int>(t.args[3]);
  }
  Thread* stopped = nullptr;
  bool any_tracee = false;
  for (auto& [tid, other] : threads_) {
    Thread* tracer = other->emulated_tracer ? find(other->emulated_tracer) : nullptr;
    if (tracer == nullptr || tracer->pid != t.pid || (wanted != -1 && wanted != tid) ||
        other->state == Thread::State::kExiting) {
      continue;  // an exiting tracee's end is the kernel's to report
    }
    any_tracee = true;
    if (other->emulated_stop_status != 0 && !other->emulated_stop_reported) {
      stopped = other.get();
      break;
    }
  }
  if (!any_tracee) {
    return false;  // a real child: the kernel answers
  }
  event_.clear();
  if (stopped == nullptr) {
    if (options & WNOHANG) {
      REPRO_RETURN_IF_ERROR(answer_in_place(t, 0));
      return true;
    }
    if (t.tracee_wait_gives_up) {
      // Nothing recorded can run, and so nothing can stop: a stop the
      // program waits for would come from a request repro refused.
      t.tracee_wait_gives_up = false;
      warn_once("ptrace wait", "the program waits for a thread it traces with ptrace to stop, "
                               "but every thread is stopped or waiting: the wait failed with "
                               "ECHILD");
      REPRO_RETURN_IF_ERROR(answer_in_place(t, -ECHILD));
      return true;
    }
    // Blocks until a tracee stops or ends (wake_waiting_tracers). Its entry
    // is logged: replay takes it into this syscall, where it stands while
    // the others run.
    if (!t.entered_logged) {
      REPRO_RETURN_IF_ERROR(log_entered(t));
    }
    t.held_for_tracee = true;
    t.state = Thread::State::kHeld;
    release_cpu(t);
    return true;
  }
  if (!(options & WNOWAIT)) {
    stopped->emulated_stop_reported = true;
  }
  int status = stopped->emulated_stop_status;
  if (is_wait4) {
    if (t.args[1] != 0) {
      event_.writes.push_back({t.args[1], bytes_of(status)});
    }
    REPRO_RETURN_IF_ERROR(answer_in_place(t, stopped->tid));
    return true;
  }
  if (t.args[2] != 0) {
    siginfo_t info{};
    info.si_signo = SIGCHLD;
    info.si_code = CLD_TRAPPED;
    info.si_pid = stopped->tid;
    info.si_status = (status >> 8) & 0xff;
    event_.writes.push_back({t.args[2], bytes_of(info)});
  }
  REPRO_RETURN_IF_ERROR(answer_in_place(t, 0));
  return true;
}

}  // namespace repro::tracer
