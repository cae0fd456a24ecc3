// How replay answers one recorded syscall: emulate it from the trace, or
// run it for real where it shapes the process.

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "core/base/scoped_fd.h"
#include "core/format/file_copy_check.h"
#include "core/format/file_util.h"
#include "core/format/sparse_copy.h"
#include "core/format/trace_format.h"
#include "core/syscalls/syscall_table.h"
#include "replayer/divergence.h"
#include "replayer/replay_session.h"

namespace repro::replayer {

namespace {

using syscalls::is_restart_result;

// An address, or the errno of a failed syscall.
std::string describe_result(int64_t result) {
  if (result < 0 && result >= -4095) {
    return fmt::format("errno {} ({})", -result, std::strerror(static_cast<int>(-result)));
  }
  return fmt::format("{:#x}", static_cast<uint64_t>(result));
}

// Executed syscalls whose result must match the recording, because the
// program will use it as an address.
bool result_is_address(int number) {
  constexpr int kSysMapShadowStack = 453;  // newer than some <sys/syscall.h>
  return number == SYS_mmap || number == SYS_mremap || number == SYS_brk || number == SYS_shmat ||
         number == kSysMapShadowStack;
}

// seccomp(SET_MODE_FILTER or SET_MODE_STRICT) and prctl(PR_SET_SECCOMP):
// the program restricts its own syscalls.
bool installs_seccomp_filter(int number, const std::array<uint64_t, 6>& args) {
  if (number == SYS_seccomp) {
    return args[0] == SECCOMP_SET_MODE_STRICT || args[0] == SECCOMP_SET_MODE_FILTER;
  }
  return number == SYS_prctl && args[0] == PR_SET_SECCOMP;
}

// setrlimit or prlimit64 on the calling process, setting the limit of its
// stack: where a growing stack faults depends on it, so replay must set it
// too. (RLIMIT_AS counts too, but replay maps a few pages of its own, which
// a tight limit would refuse; mmaps it refused when recorded are replayed
// as failures anyway.)
bool sets_stack_limit(int number, const std::array<uint64_t, 6>& args) {
  uint64_t resource = number == SYS_setrlimit ? args[0] : args[1];
  bool sets = number == SYS_setrlimit || (number == SYS_prlimit64 && args[0] == 0 && args[2] != 0);
  return sets && resource == RLIMIT_STACK;
}

// Up to 40 bytes from `from` (near where two outputs first differ), as a C
// string literal with escapes: enough to recognise a line of output.
std::string quote_bytes(const std::string& bytes, size_t from) {
  constexpr size_t kShown = 40;
  std::string text = from > 0 ? "...\"" : "\"";
  for (size_t i = from; i < bytes.size() && i < from + kShown; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n') {
      text += "\\n";
    } else if (c == '"' || c == '\\') {
      text += '\\';
      text += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      text += static_cast<char>(c);
    } else {
      text += fmt::format("\\x{:02x}", c);
    }
  }
  text += bytes.size() > from + kShown ? "\"..." : "\"";
  return text;
}

}  // namespace

Status ReplaySession::wait_syscall_exit(ReplayThread& t) {
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    if (WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80)) {
      return Status::ok();
    }
    if (!WIFSTOPPED(status) || (static_cast<unsigned>(status) >> 16) == PTRACE_EVENT_EXIT) {
      stashed_stops_[t.tid].push_front(status);
      t.where = ReplayThread::Where::kExiting;
      return diverged(t, fmt::format("the end of {}", syscalls::syscall_name(t.syscall_number)),
                      "the thread exited");
    }
    // A signal or event on the way: keep it from the program, carry on.
    REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  }
}

Status ReplaySession::answer_syscall(ReplayThread& t, const format::Event& event) {
  int number = event.syscall_number;
  if (event.syscall_flags & format::kSyscallDenied) {
    return emulate(t, event);
  }
  if (event.syscall_flags & format::kSyscallEffectsUnknown) {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("event #{}: {} (thread t{}) wrote memory "
                                     "that repro does not know how to "
                                     "record; replay refuses to guess",
                                     event_index_, describe_syscall(number, event.args), t.index));
  }
  if (number == SYS_exit || number == SYS_exit_group) {
    return resume(t);
  }
  REPRO_ASSIGN_OR_RETURN(std::optional<SignalMask> mask, temporary_signal_mask(t, event));
  if (mask) {
    return wait_under_temporary_mask(t, event, *mask);
  }
  if (number == SYS_rt_sigreturn) {
    return execute(t, event);  // its "result" is the restored rax
  }
  if (execute_for_real_.count(number) != 0) {
    return execute_for_real(t, event);  // the test hook of replay_isolation.cc
  }
  if (event.result < 0) {
    return emulate(t, event);  // a failure: nothing to reproduce but its errno
  }
  if (number == SYS_mmap) {
    return execute_mmap(t, event);
  }
  if (number == SYS_clone || number == SYS_fork || number == SYS_vfork || number == SYS_execve ||
      number == SYS_execveat) {
    return diverged(t,
                    "the thread-creation events that precede a successful " +
                        std::string(syscalls::syscall_name(number)),
                    describe_syscall(number, t.args));
  }
  if (installs_seccomp_filter(number, event.args)) {
    // The program's own filter acts before repro's (its ERRNO, TRAP or KILL
    // outrank TRACE), so the syscalls it answers never reached the recorder:
    // replay needs the same filter in the kernel to answer them alike.
    return execute(t, event);
  }
  if (sets_stack_limit(number, event.args)) {
    REPRO_RETURN_IF_ERROR(execute(t, event));
    return write_recorded_memory(t, event);  // prlimit64's old limit, as recorded
  }
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(number);
  if (info != nullptr && info->policy == syscalls::ReplayPolicy::kExecute) {
    return execute(t, event);
  }
  return emulate(t, event);
}

Result<std::string> ReplaySession::written_bytes(ReplayThread& t, const format::Event& event) {
  const auto total = static_cast<size_t>(event.result);
  if (event.syscall_number != SYS_writev && event.syscall_number != SYS_pwritev) {
    return os::read_memory(t.tid, event.args[1], total);
  }
  // The iovecs in order, until the result's count of bytes (IOV_MAX of them at most).
  std::vector<iovec> iovecs(std::min<uint64_t>(event.args[2], IOV_MAX));
  REPRO_RETURN_IF_ERROR(
      os::read_memory(t.tid, event.args[1], iovecs.data(), iovecs.size() * sizeof(iovec)));
  std::string bytes;
  for (const iovec& v : iovecs) {
    size_t n = std::min(total - bytes.size(), v.iov_len);
    REPRO_ASSIGN_OR_RETURN(std::string part,
                           os::read_memory(t.tid, reinterpret_cast<uint64_t>(v.iov_base), n));
    bytes += part;
  }
  return bytes;
}

Status ReplaySession::apply_write_to_shared_file(ReplayThread& t, const format::Event& event) {
  auto it = shared_files_.find(mapped_path_);
  if (it == shared_files_.end()) {
    return Status::ok();  // not mapped shared in replay: nothing can see it
  }
  REPRO_ASSIGN_OR_RETURN(std::string bytes, written_bytes(t, event));
  ScopedFd fd(::open(it->second.first.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid() ||
      pwrite(fd.get(), bytes.data(), bytes.size(), static_cast<off_t>(mapped_offset_)) !=
          static_cast<ssize_t>(bytes.size())) {
    return Status::from_errno(errno, fmt::format("updating '{}'", it->second.first));
  }
  return Status::ok();
}

Status ReplaySession::write_recorded_memory(ReplayThread& t, const format::Event& event) {
  // A write into a pipe: its bytes, for the reads of the pipe to come.
  REPRO_RETURN_IF_ERROR(pipe_streams_.feed(t.tid, event));
  bool output = event.syscall_flags & (format::kSyscallOutputStdout | format::kSyscallOutputStderr);
  if (output) {
    return Status::ok();  // its "writes" are the bytes it wrote out
  }
  if (event.syscall_flags & format::kSyscallReadsPipe) {
    return pipe_streams_.fill_read(t.tid, event);
  }
  for (const format::MemoryWrite& write : event.writes) {
    REPRO_RETURN_IF_ERROR(
        os::write_memory(t.tid, write.address, write.bytes.data(), write.bytes.size()));
  }
  return Status::ok();
}

Status ReplaySession::emulate(ReplayThread& t, const format::Event& event) {
  if (event.syscall_flags & format::kSyscallWritesMappedFile) {
    REPRO_RETURN_IF_ERROR(apply_write_to_shared_file(t, event));
  }
  REPRO_RETURN_IF_ERROR(write_recorded_memory(t, event));
  os::Registers regs = t.entry_regs;
  if (is_restart_result(event.result)) {
    // The recorded syscall was interrupted by a signal. The kernel decides
    // between EINTR and a restart only while it still sees the syscall's
    // number, so run a harmless syscall in its place and put the number
    // back at its exit.
    regs.orig_rax = SYS_getpid;
    return run_in_place(t, event, regs);
  }
  // At a seccomp stop, syscall number -1 skips the syscall and the program
  // sees rax as its result.
  regs.orig_rax = static_cast<uint64_t>(-1);
  regs.rax = static_cast<uint64_t>(event.result);
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  t.where = ReplayThread::Where::kParked;
  return Status::ok();
}

Result<std::optional<ReplaySession::SignalMask>> ReplaySession::temporary_signal_mask(
    const ReplayThread& t, const format::Event& event) {
  const auto& a = event.args;
  SignalMask mask;
  switch (event.syscall_number) {
    case SYS_rt_sigsuspend:
      mask = {a[0], a[1]};
      break;
    case SYS_ppoll:
      mask = {a[3], a[4]};
      break;
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2:
      mask = {a[4], a[5]};
      break;
    case SYS_pselect6: {
      if (a[5] == 0) {
        return std::optional<SignalMask>{};
      }
      // The sixth argument points at { const sigset_t* set; size_t size; }.
      uint64_t pair[2];
      REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, a[5], pair, sizeof pair));
      mask = {pair[0], pair[1]};
      break;
    }
    default:
      return std::optional<SignalMask>{};
  }
  if (mask.address == 0) {
    return std::optional<SignalMask>{};
  }
  return std::optional<SignalMask>{mask};
}

Status ReplaySession::wait_under_temporary_mask(ReplayThread& t, const format::Event& event,
                                                const SignalMask& mask) {
  // These syscalls install a signal mask for as long as they wait, and a
  // signal they were interrupted by runs its handler under that mask (the
  // old one comes back at rt_sigreturn). The signal may be blocked
  // otherwise, so it cannot be delivered after a skipped syscall: send the
  // thread's next recorded signal first, then run rt_sigsuspend with the
  // same mask for real in the syscall's place. It returns at once, with the
  // kernel set to restore the old mask after the handler.
  REPRO_ASSIGN_OR_RETURN(const format::Event* next, peek_next_of_thread(t.index));
  bool interrupted = event.result == -EINTR || is_restart_result(event.result);
  if (!interrupted || next == nullptr || next->kind != format::EventKind::kSignal ||
      (next->signal_flags & format::kSignalSynchronous)) {
    return emulate(t, event);
  }
  if (syscall(SYS_tgkill, t.pid, t.tid, next->signal_number) != 0) {
    return Status::from_errno(
        errno, fmt::format("sending signal {} to thread t{}", next->signal_number, t.index));
  }
  t.queued_signal = next->signal_number;
  if (event.syscall_number == SYS_rt_sigsuspend) {
    return execute(t, event);
  }
  REPRO_RETURN_IF_ERROR(write_recorded_memory(t, event));
  os::Registers regs = t.entry_regs;
  regs.orig_rax = SYS_rt_sigsuspend;
  regs.rdi = mask.address;
  regs.rsi = mask.size;
  return run_in_place(t, event, regs);
}

Status ReplaySession::run_in_place(ReplayThread& t, const format::Event& event,
                                   const os::Registers& substitute) {
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, substitute));
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
  // Back to the recorded syscall and result before a signal is handled:
  // the kernel turns a restart result into EINTR or a restart by them.
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  regs.orig_rax = static_cast<uint64_t>(event.syscall_number);
  regs.rax = static_cast<uint64_t>(event.result);
  os::set_syscall_args(regs, t.args);
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  t.where = ReplayThread::Where::kParked;
  return Status::ok();
}

Status ReplaySession::execute(ReplayThread& t, const format::Event& event) {
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
  t.where = ReplayThread::Where::kParked;
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  int64_t result = static_cast<int64_t>(regs.rax);
  if (result == event.result || event.syscall_number == SYS_rt_sigreturn) {
    return Status::ok();
  }
  if (result_is_address(event.syscall_number)) {
    return diverged(t,
                    fmt::format("{} = {:#x}", describe_syscall(event.syscall_number, event.args),
                                static_cast<uint64_t>(event.result)),
                    fmt::format("result {:#x}", static_cast<uint64_t>(result)));
  }
  // The result names something of this run (set_tid_address returns the
  // live tid): the program must see the recorded one.
  regs.rax = static_cast<uint64_t>(event.result);
  return os::set_registers(t.tid, regs);
}

Result<int64_t> ReplaySession::inject_syscall(ReplayThread& t, int number,
                                              const std::array<uint64_t, 6>& args) {
  HiddenFromWatcher hidden(this);  // replay's own code, not the program's
  // Requires: t is at a syscall-exit stop, so rip is just past a syscall
  // instruction; point rip back at it and run it with new registers.
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  regs.rip -= 2;
  regs.rax = static_cast<uint64_t>(number);
  os::set_syscall_args(regs, args);
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  // PTRACE_CONT: with PTRACE_SYSCALL a syscall-entry stop would come first.
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_CONT));
  REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
  if (!WIFSTOPPED(status) || (static_cast<unsigned>(status) >> 16) != PTRACE_EVENT_SECCOMP) {
    stashed_stops_[t.tid].push_front(status);
    return Status::error(StatusCode::kIoError, fmt::format("injected {} did not stop at its entry",
                                                           syscalls::syscall_name(number)));
  }
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
  t.where = ReplayThread::Where::kParked;
  REPRO_ASSIGN_OR_RETURN(regs, os::get_registers(t.tid));
  return static_cast<int64_t>(regs.rax);
}

Result<std::string> ReplaySession::stored_copy(const std::string& content_id,
                                               const std::string& recorded_path) {
  auto checked = checked_copies_.find(content_id);
  if (checked == checked_copies_.end()) {
    Result<std::string> path = reader_->file_path(content_id);
    bool missing = !path.is_ok();
    Status verdict = missing ? path.status() : format::check_file_copy(*path, content_id);
    if (verdict.code() == StatusCode::kCorruption || verdict.code() == StatusCode::kNotFound) {
      // A copy the events name is part of the trace: without it, or with
      // other bytes in it, the trace is damaged. Going on would run the
      // program on bytes it never had.
      verdict = Status::error(
          StatusCode::kCorruption,
          fmt::format("the trace's copy of '{}' is {}, so replay stops: {}", recorded_path,
                      missing || verdict.code() == StatusCode::kNotFound ? "missing" : "damaged",
                      verdict.message()));
    }
    checked = checked_copies_.emplace(content_id, verdict).first;
  }
  if (!checked->second.is_ok()) {
    return checked->second;
  }
  return reader_->file_path(content_id);
}

Result<std::string> ReplaySession::shared_file_for(const std::string& path,
                                                   const std::string& content_id,
                                                   uint64_t offset, uint64_t length) {
  auto& entry = shared_files_[path];
  const bool first = entry.first.empty();
  if (first) {
    entry.first = fmt::format("{}/shared-{}", exec_paths_.dir(), shared_files_.size());
  }
  if (entry.second != content_id) {
    // The file's content where this mmap maps it, when it mapped it;
    // existing shared mappings of that part see the change, as they did
    // when recorded. Only that range: the stored copy of a file over
    // kWholeFileLimitBytes holds no more, and the rest of the scratch copy
    // is what the replay made of it. Holes are not copied, so a 1 GiB
    // sparse file costs what it holds.
    REPRO_ASSIGN_OR_RETURN(std::string stored, stored_copy(content_id, path));
    ScopedFd source(::open(stored.c_str(), O_RDONLY | O_CLOEXEC));
    ScopedFd dest(::open(entry.first.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    struct stat st;
    if (!source.valid() || !dest.valid() || ::fstat(source.get(), &st) != 0) {
      return Status::from_errno(errno, fmt::format("preparing shared file '{}'", entry.first));
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    uint64_t from = 0, to = size;  // the first time: all the copy holds
    if (!first) {
      from = offset;
      to = offset + ((length + 4095) & ~uint64_t{4095});
    }
    REPRO_RETURN_IF_ERROR(
        format::copy_range_sparse(source.get(), size, from, to, dest.get(), entry.first));
    entry.second = content_id;
  }
  return entry.first;
}

Result<int64_t> ReplaySession::map_file_in_tracee(ReplayThread& t, const format::Event& event,
                                                  const std::string& path, int open_flags) {
  // The mmap's entry stop becomes the open: the tracee opens the file (its
  // name written below the stack for the while), maps it with the recorded
  // protection and flags at the recorded address, and closes it again.
  // The bytes below the stack are put back afterwards: memory hashes of
  // later preemption points cover the stack below rsp too.
  const os::Registers entry = t.entry_regs;
  const uint64_t scratch = (entry.rsp - 8192) & ~uint64_t{15};  // below the red zone and frames
  std::string saved(path.size() + 1, '\0');
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, scratch, saved.data(), saved.size()));
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, scratch, path.c_str(), path.size() + 1));
  os::Registers regs = entry;
  regs.orig_rax = SYS_openat;
  os::set_syscall_args(regs, {static_cast<uint64_t>(AT_FDCWD), scratch,
                              static_cast<uint64_t>(open_flags | O_CLOEXEC), 0, 0, 0});
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
  t.where = ReplayThread::Where::kParked;
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, scratch, saved.data(), saved.size()));
  REPRO_ASSIGN_OR_RETURN(regs, os::get_registers(t.tid));
  const auto fd = static_cast<int64_t>(regs.rax);
  if (fd < 0) {
    return fd;
  }
  uint64_t flags = (event.args[3] & ~uint64_t{MAP_FIXED_NOREPLACE}) | MAP_FIXED;
  REPRO_ASSIGN_OR_RETURN(
      int64_t mapped,
      inject_syscall(t, SYS_mmap,
                     {static_cast<uint64_t>(event.result), event.args[1], event.args[2], flags,
                      static_cast<uint64_t>(fd), event.args[5]}));
  REPRO_ASSIGN_OR_RETURN(int64_t closed,
                         inject_syscall(t, SYS_close, {static_cast<uint64_t>(fd), 0, 0, 0, 0, 0}));
  (void)closed;
  return mapped;
}

Status ReplaySession::execute_shared_file_mmap(ReplayThread& t, const format::Event& event,
                                               const std::string& content_id) {
  // Shared mappings of one file must share pages, as they did when
  // recorded: map a scratch copy of the file for real.
  REPRO_ASSIGN_OR_RETURN(std::string path,
                         shared_file_for(mapped_path_, content_id, event.args[5], event.args[1]));
  REPRO_ASSIGN_OR_RETURN(int64_t mapped, map_file_in_tracee(t, event, path, O_RDWR));
  const uint64_t address = static_cast<uint64_t>(event.result);
  if (static_cast<uint64_t>(mapped) != address) {
    return diverged(t, fmt::format("shared mmap at {:#x}", address),
                    fmt::format("mapping '{}' there: {}", path, describe_result(mapped)));
  }
  // The scratch copy is what is really mapped, so backtraces read it.
  mapped_files_.note({.start = address,
                      .length_bytes = event.args[1],
                      .file_offset = event.args[5],
                      .recorded_path = mapped_path_,
                      .file_path = path});
  return finish_executed_mmap(t, address);
}

Status ReplaySession::execute_dev_zero_mmap(ReplayThread& t, const format::Event& event) {
  // Zero-filled memory by another name: map /dev/zero itself, so the
  // kernel makes of it what it made when recorded (anonymous memory if
  // private, shared memory if shared).
  REPRO_ASSIGN_OR_RETURN(int64_t mapped, map_file_in_tracee(t, event, "/dev/zero", O_RDWR));
  const uint64_t address = static_cast<uint64_t>(event.result);
  if (static_cast<uint64_t>(mapped) != address) {
    return diverged(t, fmt::format("mmap of /dev/zero at {:#x}", address),
                    fmt::format("mmap returned {}", describe_result(mapped)));
  }
  return finish_executed_mmap(t, address);
}

Status ReplaySession::execute_private_file_mmap(ReplayThread& t, const format::Event& event,
                                                const std::string& content_id) {
  // The file may have changed or gone since: map the trace's copy of it.
  // Pages the program does not write stay shared with the page cache, as
  // they were when recorded, so a new process maps its libraries cheaply.
  REPRO_ASSIGN_OR_RETURN(std::string stored, stored_copy(content_id, mapped_path_));
  std::error_code ec;
  std::string path = std::filesystem::absolute(stored, ec).string();
  const uint64_t address = static_cast<uint64_t>(event.result);
  const uint64_t length = event.args[1];
  if (shared_files_.count(mapped_path_) != 0) {
    // The file is mapped shared too: its pages this mapping has not
    // written show the stores made through the shared mappings, as they
    // did when recorded, so map the same scratch copy.
    REPRO_ASSIGN_OR_RETURN(path, shared_file_for(mapped_path_, content_id, event.args[5], length));
  }
  REPRO_ASSIGN_OR_RETURN(int64_t mapped, map_file_in_tracee(t, event, path, O_RDONLY));
  if (static_cast<uint64_t>(mapped) != address) {
    // The copy cannot be mapped (a trace on a noexec file system refuses
    // PROT_EXEC): anonymous memory filled from it holds the same bytes.
    REPRO_ASSIGN_OR_RETURN(mapped, inject_syscall(t, SYS_mmap,
                                                  {address, length, event.args[2],
                                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                                                   static_cast<uint64_t>(-1), 0}));
    if (static_cast<uint64_t>(mapped) != address) {
      return diverged(t, fmt::format("mmap at {:#x}", address),
                      fmt::format("mmap returned {}", describe_result(mapped)));
    }
    REPRO_RETURN_IF_ERROR(copy_file_into(t, path, event.args[5], address, length));
  }
  mapped_files_.note({.start = address,
                      .length_bytes = length,
                      .file_offset = event.args[5],
                      .recorded_path = mapped_path_,
                      .file_path = path});
  return finish_executed_mmap(t, address);
}

Status ReplaySession::copy_file_into(ReplayThread& t, const std::string& path, uint64_t offset,
                                     uint64_t address, uint64_t length) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::from_errno(errno, fmt::format("opening stored file '{}'", path));
  }
  std::vector<char> buffer(1 << 20);
  for (uint64_t done = 0; done < length;) {
    // Holes of the copy are zeros, which the fresh mapping holds already.
    off_t data = ::lseek(fd.get(), static_cast<off_t>(offset + done), SEEK_DATA);
    if (data < 0 && errno == ENXIO) {
      break;
    }
    if (data > static_cast<off_t>(offset + done)) {
      done = static_cast<uint64_t>(data) - offset;
      continue;
    }
    ssize_t n = pread(fd.get(), buffer.data(), std::min<uint64_t>(buffer.size(), length - done),
                      static_cast<off_t>(offset + done));
    if (n < 0) {
      return Status::from_errno(errno, fmt::format("reading stored file '{}'", path));
    }
    if (n == 0) {
      break;  // past the end of the file the mapping stays zero, as it was
    }
    REPRO_RETURN_IF_ERROR(
        os::write_memory_forced(t.tid, address + done, buffer.data(), static_cast<size_t>(n)));
    done += static_cast<uint64_t>(n);
  }
  return Status::ok();
}

Status ReplaySession::finish_executed_mmap(ReplayThread& t, uint64_t address) {
  // The program sees its mmap return the recorded address, with the
  // registers of its entry.
  os::Registers regs = t.entry_regs;
  regs.rax = address;
  return os::set_registers(t.tid, regs);
}

Status ReplaySession::execute_mmap(ReplayThread& t, const format::Event& event) {
  const uint64_t address = static_cast<uint64_t>(event.result);
  const uint64_t flags = event.args[3];
  if (!(flags & MAP_ANONYMOUS)) {
    if (t.mapped_content_id.empty()) {
      return Status::error(
          StatusCode::kCorruption,
          fmt::format("event #{}: file mmap without its mapped-file event", event_index_));
    }
    const std::string content_id = std::exchange(t.mapped_content_id, "");
    REPRO_RETURN_IF_ERROR(content_id == format::kDevZeroContentId
                              ? execute_dev_zero_mmap(t, event)
                          : (flags & MAP_SHARED) ? execute_shared_file_mmap(t, event, content_id)
                                                 : execute_private_file_mmap(t, event, content_id));
    // A shared mapping's event carries the recorder's note to the fast-path
    // library that the process maps a file shared (its writes take the
    // slow path from then on).
    return (flags & MAP_SHARED) ? write_recorded_memory(t, event) : Status::ok();
  }
  os::Registers regs = t.entry_regs;
  regs.rdi = address;
  regs.r10 = (flags & ~uint64_t{MAP_FIXED_NOREPLACE}) | MAP_FIXED;
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
  t.where = ReplayThread::Where::kParked;
  REPRO_ASSIGN_OR_RETURN(regs, os::get_registers(t.tid));
  if (regs.rax != address) {
    return diverged(t, fmt::format("mmap at {:#x}", address),
                    fmt::format("mmap returned {:#x}", regs.rax));
  }
  os::set_syscall_args(regs, t.args);
  return os::set_registers(t.tid, regs);
}

Status ReplaySession::finish_clone(ReplayThread& t, const format::Event& event) {
  REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
  t.where = ReplayThread::Where::kParked;
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  int64_t replayed = static_cast<int64_t>(regs.rax);
  if (replayed < 0 && replayed == event.result) {
    return Status::ok();  // refused as when recorded (bad flags): nothing was made
  }
  if (replayed < 0 || event.result < 0) {
    return diverged(
        t, fmt::format("{} = {}", describe_syscall(event.syscall_number, event.args),
                       describe_result(event.result)),
        fmt::format("it returned {}", describe_result(replayed)));
  }
  regs.rax = static_cast<uint64_t>(event.result);
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  if (event.syscall_number != SYS_clone) {
    return Status::ok();
  }
  // The kernel wrote the live tid where the program asked for it; the
  // program must find the recorded one.
  uint64_t flags = event.args[0];
  int32_t recorded_tid = static_cast<int32_t>(event.result);
  if ((flags & CLONE_PARENT_SETTID) && event.args[2] != 0) {
    REPRO_RETURN_IF_ERROR(
        os::write_memory(t.tid, event.args[2], &recorded_tid, sizeof recorded_tid));
  }
  if ((flags & CLONE_CHILD_SETTID) && event.args[3] != 0) {
    for (auto& [index, child] : threads_) {
      if (child.recorded_tid == recorded_tid && child.where != ReplayThread::Where::kGone) {
        REPRO_RETURN_IF_ERROR(ensure_started(child));
        REPRO_RETURN_IF_ERROR(
            os::write_memory(child.tid, event.args[3], &recorded_tid, sizeof recorded_tid));
      }
    }
  }
  return Status::ok();
}

Status ReplaySession::check_output(ReplayThread& t, const format::Event& event) {
  if (!(event.syscall_flags & (format::kSyscallOutputStdout | format::kSyscallOutputStderr))) {
    return Status::ok();
  }
  // Each recorded write names the program's buffer it was read from.
  uint64_t offset = 0;
  for (const format::MemoryWrite& write : event.writes) {
    REPRO_ASSIGN_OR_RETURN(std::string replayed,
                           os::read_memory(t.tid, write.address, write.bytes.size()));
    if (replayed != write.bytes) {
      size_t at = 0;
      while (at < replayed.size() && replayed[at] == write.bytes[at]) {
        ++at;
      }
      size_t shown_from = at > 16 ? at - 16 : 0;  // a little context before the difference
      std::string call = describe_syscall(event.syscall_number, event.args);
      const char* stream =
          (event.syscall_flags & format::kSyscallOutputStdout) ? "stdout" : "stderr";
      return diverged(t,
                      fmt::format("{} of {} to {}", call, quote_bytes(write.bytes, shown_from),
                                  stream),
                      fmt::format("the program's buffer holds {} (first difference at byte {})",
                                  quote_bytes(replayed, shown_from), offset + at));
    }
    offset += write.bytes.size();
  }
  return Status::ok();
}

Status ReplaySession::emit_output(const format::Event& event) {
  int fd = (event.syscall_flags & format::kSyscallOutputStdout)   ? STDOUT_FILENO
           : (event.syscall_flags & format::kSyscallOutputStderr) ? STDERR_FILENO
                                                                  : -1;
  if (fd < 0) {
    return Status::ok();
  }
  for (const format::MemoryWrite& write : event.writes) {
    REPRO_RETURN_IF_ERROR(format::write_all(fd, write.bytes.data(), write.bytes.size(),
                                            fd == STDOUT_FILENO ? "stdout" : "stderr"));
  }
  return Status::ok();
}

}  // namespace repro::replayer
