// The recorder's side of the in-process fast path (core/fastpath).
//
// The preloaded library logs the syscalls it makes without a stop into a
// buffer per thread. Only one tracee thread runs user code at a time, and
// the records of a thread can only have been added while it ran, so
// copying them into the trace at that thread's next stop, before the
// stop's own event, puts every syscall in its exact place in the one
// ordered stream. The one write the recorder makes into the buffer, the
// reset of its end offset at a flush call, is logged as that call's memory
// write, so replay (which runs the same library) makes it at the same
// point and memory stays the same.

#include <fmt/core.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <csignal>

#include <cstddef>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "core/fastpath/fastpath_abi.h"
#include "core/fastpath/syscall_batch.h"
#include "core/os/tracee.h"
#include "core/patch/syscall_sites.h"
#include "core/syscalls/syscall_table.h"
#include "tracer/file_read_references.h"
#include "tracer/process_memory_writes.h"
#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {

Status RecordSession::drain_fast_path(Thread& t) {
  if (!t.fast_path) {
    return Status::ok();
  }
  FastPathBuffer& buffer = *t.fast_path;
  repro_fastpath_header header;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, buffer.address, &header, sizeof header));
  if (header.end_offset == buffer.drained_offset) {
    return Status::ok();
  }
  if (header.magic != REPRO_FASTPATH_BUFFER_MAGIC || header.capacity != REPRO_FASTPATH_BUFFER_BYTES ||
      header.end_offset < buffer.drained_offset || header.end_offset > header.capacity) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("thread t{}: the fast-path buffer at {:#x} was overwritten "
                                     "(end offset {}, {} drained)",
                                     t.index, buffer.address, header.end_offset,
                                     buffer.drained_offset));
  }
  REPRO_ASSIGN_OR_RETURN(std::string data,
                         os::read_memory(t.tid, buffer.address + buffer.drained_offset,
                                         header.end_offset - buffer.drained_offset));
  buffer.drained_offset = header.end_offset;
  return log_syscall_batch(t, data);
}

namespace {

// Whether `number` moves its descriptor's position by its result.
bool moves_file_position(int number) {
  return number == SYS_read || number == SYS_write || number == SYS_writev;
}

// Where each read or write at the current position among `syscalls` (made
// in this order, just now) left its descriptor: counted back from where
// the descriptor stands now, or from an lseek(fd, 0, SEEK_CUR) that the
// library logs before it closes a regular file, over the reads and writes
// after it. Unknown before any other lseek, or a close without that lseek
// (the number may name another file now). Wrong if something else moved
// the position meanwhile (a sibling thread sharing it): then a read's
// bytes do not match the copy there, and stay in the trace.
std::vector<std::optional<uint64_t>> positions_after(
    pid_t tid, const std::vector<fastpath::BatchedSyscall>& syscalls) {
  std::vector<std::optional<uint64_t>> after(syscalls.size());
  std::map<int, std::optional<uint64_t>> position;  // by descriptor, going back
  for (size_t i = syscalls.size(); i-- > 0;) {
    const fastpath::BatchedSyscall& syscall = syscalls[i];
    int fd = static_cast<int>(syscall.args[0]);
    if (syscall.syscall_number == SYS_close) {
      position[fd] = std::nullopt;
      continue;
    }
    if (!moves_file_position(syscall.syscall_number) && syscall.syscall_number != SYS_lseek) {
      continue;
    }
    auto [at, fresh] = position.try_emplace(fd);
    if (fresh) {
      at->second = file_position(tid, fd);
    }
    if (syscall.syscall_number == SYS_lseek) {
      bool tells = syscall.args[1] == 0 && syscall.args[2] == SEEK_CUR && syscall.result >= 0;
      at->second = tells ? std::optional<uint64_t>(syscall.result) : std::nullopt;
    } else if (at->second && syscall.result >= 0 &&
               *at->second >= static_cast<uint64_t>(syscall.result)) {
      after[i] = at->second;
      *at->second -= static_cast<uint64_t>(syscall.result);
    } else {
      at->second.reset();
    }
  }
  return after;
}

// What a statx(fd, "", AT_EMPTY_PATH) of the batch said of `fd`, as a
// struct stat; without a size the kernel vouches for, nullopt. Its time
// stamps, which the library does not ask for, are there all the same on
// the file systems that fill in all they have, else zero: they only tell
// when to take a new copy of the file, whose bytes every reference is
// compared with.
std::optional<struct stat> stat_of_statx(const fastpath::BatchedSyscall& syscall) {
  struct statx stx;
  // The library's probe logs no path; a program's own call, its path,
  // which names another file unless empty.
  bool empty_path = syscall.inputs.empty() || syscall.inputs.front().bytes.empty();
  if (syscall.result != 0 || (syscall.args[2] & AT_EMPTY_PATH) == 0 || !empty_path ||
      syscall.output.size() != sizeof stx) {
    return std::nullopt;
  }
  std::memcpy(&stx, syscall.output.data(), sizeof stx);
  if ((stx.stx_mask & (STATX_TYPE | STATX_INO | STATX_SIZE)) !=
      (STATX_TYPE | STATX_INO | STATX_SIZE)) {
    return std::nullopt;
  }
  struct stat st {};
  st.st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  st.st_ino = stx.stx_ino;
  st.st_mode = stx.stx_mode;
  st.st_size = static_cast<off_t>(stx.stx_size);
  if (stx.stx_mask & STATX_MTIME) {
    st.st_mtim = {stx.stx_mtime.tv_sec, stx.stx_mtime.tv_nsec};
  }
  if (stx.stx_mask & STATX_CTIME) {
    st.st_ctim = {stx.stx_ctime.tv_sec, stx.stx_ctime.tv_nsec};
  }
  return st;
}

// What the library's probe of `fd` just before syscall `i` said (it asks
// before each read of a file, with statx or, where that is refused,
// fstat), if that is in the batch.
std::optional<struct stat> logged_stat(const std::vector<fastpath::BatchedSyscall>& syscalls,
                                       size_t i, int fd) {
  for (size_t j = i; j-- > 0;) {
    const fastpath::BatchedSyscall& syscall = syscalls[j];
    if (syscall.syscall_number == SYS_openat && syscall.result == fd) {
      break;  // opened here: what came before was of another file
    }
    if (static_cast<int>(syscall.args[0]) != fd) {
      continue;
    }
    if (syscall.syscall_number == SYS_fstat && syscall.result == 0 &&
        syscall.output.size() == sizeof(struct stat)) {
      struct stat st;
      std::memcpy(&st, syscall.output.data(), sizeof st);
      return st;
    }
    if (syscall.syscall_number == SYS_statx && syscall.result == 0) {
      std::optional<struct stat> st = stat_of_statx(syscall);
      if (st) {
        return st;
      }
    }
    if (syscall.syscall_number == SYS_close) {
      break;
    }
  }
  return std::nullopt;
}

// Where the file `fd` named at syscall `i` can be opened for its copy when
// the batch closes `fd` after `i`: the target of /proc/self/fd/N that the
// library reads before such a close. Nullopt while `fd` stays open (then
// /proc/PID/fd/N serves) or without that record.
std::optional<std::string> closed_file_path(
    const std::vector<fastpath::BatchedSyscall>& syscalls, size_t i, int fd) {
  const std::string link = fmt::format("/proc/self/fd/{}", fd);
  for (size_t j = i + 1; j < syscalls.size(); ++j) {
    const fastpath::BatchedSyscall& close = syscalls[j];
    if (close.syscall_number != SYS_close || static_cast<int>(close.args[0]) != fd) {
      continue;
    }
    for (size_t k = j; k-- > i + 1;) {
      const fastpath::BatchedSyscall& readlink = syscalls[k];
      if (readlink.syscall_number == SYS_readlinkat && readlink.result > 0 &&
          !readlink.inputs.empty() && readlink.inputs.front().bytes == link) {
        return readlink.output.substr(0, static_cast<size_t>(readlink.result));
      }
      if (static_cast<int>(readlink.args[0]) == fd) {
        break;  // the lseek the library logs between them
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Status RecordSession::log_syscall_batch(Thread& t, const std::string& data) {
  // A read of a regular file comes out of the batch as a syscall event of
  // its own when its bytes can be stored by reference to the file's copy,
  // as on the slow path; the records around it stay batches.
  auto syscalls = fastpath::parse_syscall_batch(data);
  if (!syscalls.is_ok()) {
    return syscalls.status().context(fmt::format("thread t{}: the fast-path buffer", t.index));
  }
  std::vector<std::optional<uint64_t>> positions;
  auto position_after = [&](size_t i) {
    if (positions.empty()) {
      positions = positions_after(t.tid, *syscalls);
    }
    return positions[i];
  };
  // What stat says of each descriptor read from: the library's own fstat
  // before the read where the batch holds it (a descriptor may be closed
  // and its number given to another file inside one), else one lookup per
  // batch.
  std::map<int, std::optional<struct stat>> files;
  auto file_of = [&](int fd) -> const struct stat* {
    auto [at, fresh] = files.try_emplace(fd);
    if (fresh) {
      struct stat st;
      if (stat(fmt::format("/proc/{}/fd/{}", t.tid, fd).c_str(), &st) == 0) {
        at->second = st;
      }
    }
    return at->second ? &*at->second : nullptr;
  };
  std::optional<struct stat> logged;
  size_t batch_start = 0;
  auto log_batch_until = [&](size_t end) -> Status {
    if (end == batch_start) {
      return Status::ok();
    }
    event_.clear();
    event_.kind = format::EventKind::kSyscallBatch;
    event_.thread = t.index;
    event_.data.assign(data, batch_start, end - batch_start);
    return log(event_);
  };
  format::Event single;
  for (size_t i = 0; i < syscalls->size(); ++i) {
    const fastpath::BatchedSyscall& syscall = (*syscalls)[i];
    const int number = syscall.syscall_number;
    if (writes_at_file_position(number) && syscall.result > 0) {
      REPRO_RETURN_IF_ERROR(refuse_fast_path_memory_write(t, syscall.args));
      continue;
    }
    if ((number != SYS_read && number != SYS_pread64) ||
        syscall.result < kMinReferencedReadBytes) {
      continue;
    }
    fastpath::to_syscall_event(syscall, t.index, &single);
    single.syscall_flags = 0;
    const int fd = static_cast<int>(syscall.args[0]);
    logged = logged_stat(*syscalls, i, fd);
    const struct stat* file = logged ? &*logged : file_of(fd);
    std::optional<std::string> source = closed_file_path(*syscalls, i, fd);
    if (file == nullptr ||
        !file_reads_->reference(t.tid, &single, position_after(i), file,
                                source ? &*source : nullptr)) {
      continue;
    }
    single.syscall_flags |= format::kSyscallFastPath;
    REPRO_RETURN_IF_ERROR(log_batch_until(syscall.record_offset));
    REPRO_RETURN_IF_ERROR(log(single));
    batch_start = syscall.record_offset + syscall.record_bytes;
  }
  return log_batch_until(data.size());
}

Status RecordSession::stop_fast_path_writes(Thread& t) {
  FastPathWrites& writes = fast_path_writes_[t.pid];
  writes.shared_file_mapped = true;
  if (writes.exclusions_address == 0) {
    return Status::ok();  // told when the library asks (a mapping made before its constructor)
  }
  const uint64_t flag_address =
      writes.exclusions_address + offsetof(repro_fastpath_write_exclusions, shared_file_mapped);
  uint32_t flag = 0;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, flag_address, &flag, sizeof flag));
  if (flag != 0) {
    return Status::ok();
  }
  flag = 1;
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, flag_address, &flag, sizeof flag));
  event_.writes.push_back(
      {flag_address, std::string(reinterpret_cast<const char*>(&flag), sizeof flag)});
  return Status::ok();
}

Status RecordSession::refuse_fast_path_memory_write(const Thread& t,
                                                    const std::array<uint64_t, 6>& args) {
  // The library leaves the recorder's /proc alone (write_exclusions), so
  // only a /proc mounted elsewhere gets here; its write changed memory
  // that the trace cannot say how, so the recording cannot go on.
  if (!proc_mem_opened_) {
    return Status::ok();
  }
  std::optional<pid_t> owner = proc_mem_owner(t.pid, static_cast<int>(args[0]));
  if (!owner) {
    return Status::ok();
  }
  return Status::error(StatusCode::kUnsupported,
                       fmt::format("thread t{} wrote into /proc/{}/mem on the fast path (a /proc "
                                   "mount other than repro's); record with --no-fast-path",
                                   t.index, *owner));
}

repro_fastpath_write_exclusions RecordSession::write_exclusions() const {
  repro_fastpath_write_exclusions exclusions{};
  exclusions.known = 1;
  for (const auto& [device, inode] : recorder_.output_files()) {
    if (exclusions.output_count < REPRO_FASTPATH_MAX_OUTPUT_FILES) {
      exclusions.output_device[exclusions.output_count] = device;
      exclusions.output_inode[exclusions.output_count] = inode;
      ++exclusions.output_count;
    }
  }
  // Where /proc cannot be looked at, no device number matches it: then a
  // write into /proc/PID/mem on the fast path is caught when drained.
  struct stat proc;
  exclusions.procfs_device = stat("/proc/self", &proc) == 0 ? proc.st_dev : ~uint64_t{0};
  exclusions.pipes_nowait = fast_path_pipes_ ? 1 : 0;
  return exclusions;
}

Result<bool> RecordSession::on_fast_path_control(Thread& t) {
  if (t.syscall_number != REPRO_FASTPATH_CONTROL_SYSCALL) {
    return false;
  }
  int64_t result = -ENOSYS;
  event_.clear();
  if (fast_path_on_ && t.args[0] == REPRO_FASTPATH_OP_REGISTER) {
    t.fast_path = std::make_shared<FastPathBuffer>();
    t.fast_path->address = t.args[1];
    t.fast_path->drained_offset = sizeof(repro_fastpath_header);
    result = 0;
  } else if (fast_path_on_ && t.args[0] == REPRO_FASTPATH_OP_SYSCALL_STUBS) {
    if (patch_syscall_sites_) {
      site_patcher_.offer_stubs(t.pid, t.args[1], t.args[2], t.args[3]);
    }
    record_published_points_[t.pid] = t.args[4];
    result = 0;
  } else if (fast_path_on_ && t.args[0] == REPRO_FASTPATH_OP_WRITE_EXCLUSIONS) {
    if (t.args[2] == sizeof(repro_fastpath_write_exclusions)) {
      repro_fastpath_write_exclusions exclusions = write_exclusions();
      FastPathWrites& writes = fast_path_writes_[t.pid];
      writes.exclusions_address = t.args[1];
      exclusions.shared_file_mapped = writes.shared_file_mapped ? 1 : 0;
      event_.writes.push_back(
          {t.args[1], std::string(reinterpret_cast<const char*>(&exclusions), sizeof exclusions)});
      result = 0;
    } else {
      result = -EINVAL;  // a library of another layout: its writes stay slow
    }
  } else if (t.fast_path && t.args[0] == REPRO_FASTPATH_OP_FLUSH) {
    // Drained at this stop already (step()): start the buffer over.
    uint32_t start = sizeof(repro_fastpath_header);
    uint64_t end_offset_address = t.fast_path->address + offsetof(repro_fastpath_header, end_offset);
    // answer_in_place makes the write and logs it with the answer.
    event_.writes.push_back(
        {end_offset_address, std::string(reinterpret_cast<const char*>(&start), sizeof start)});
    t.fast_path->drained_offset = start;
    result = 0;
  }
  REPRO_RETURN_IF_ERROR(answer_in_place(t, result));
  return true;
}

Result<bool> RecordSession::inside_fast_path_syscall(Thread& t) {
  if (!t.fast_path) {
    return false;
  }
  uint32_t busy = 0;
  REPRO_RETURN_IF_ERROR(os::read_memory(
      t.tid, t.fast_path->address + offsetof(repro_fastpath_header, busy), &busy, sizeof busy));
  return busy != 0;
}

Result<RecordSession::StepOutcome> RecordSession::step_out_of_fast_path_syscall(Thread& t) {
  // The library's code from its busy mark to the record's publication
  // makes one untraced syscall and copies its output (up to 16 KiB, a few
  // thousand steps): run it to the library's point past the publication
  // at once, with a breakpoint. Without that point, step it. Stepping over
  // a syscall leaves the trap flag in the rflags the kernel saves in r11;
  // replay's syscall (answered at a stop) does not, so it is cleared to
  // keep the registers the same.
  auto published = record_published_points_.find(t.pid);
  if (published != record_published_points_.end()) {
    REPRO_ASSIGN_OR_RETURN(bool inside, inside_fast_path_syscall(t));
    if (inside) {
      // Asynchronous signals stay blocked on the way, as while stepping: a
      // pending one (the signal held back and sent again, a timer that
      // fired meanwhile) would stop the thread at once, every time, and
      // two of them would take turns forever. They come after.
      REPRO_ASSIGN_OR_RETURN(const uint64_t mask, os::signal_mask(t.tid));
      uint64_t synchronous = 0;
      for (int signal : {SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS}) {
        synchronous |= uint64_t{1} << (signal - 1);
      }
      REPRO_RETURN_IF_ERROR(os::set_signal_mask(t.tid, mask | ~synchronous));
      Result<bool> there = run_to_breakpoint(t, published->second);
      Status restored = os::set_signal_mask(t.tid, mask);
      REPRO_RETURN_IF_ERROR(there.status());
      REPRO_RETURN_IF_ERROR(restored);
      if (!*there) {
        return StepOutcome::kStoppedOtherwise;
      }
    }
  }
  REPRO_ASSIGN_OR_RETURN(const uint64_t program_mask, os::signal_mask(t.tid));
  bool stepped = false;
  while (true) {
    REPRO_ASSIGN_OR_RETURN(bool inside, inside_fast_path_syscall(t));
    if (!inside) {
      break;
    }
    stepped = true;
    REPRO_ASSIGN_OR_RETURN(os::Registers before, os::get_registers(t.tid));
    uint8_t code[2] = {};
    REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, before.rip, code, sizeof code));
    bool over_syscall = code[0] == 0x0f && code[1] == 0x05;
    REPRO_ASSIGN_OR_RETURN(os::SingleStep step, os::single_step(t.tid));
    int status = step.wait_status;
    bool step_trap = step.trapped;
    if (!step_trap) {
      (void)os::set_signal_mask(t.tid, program_mask);
      t.step_trap_may_be_queued = true;
      deferred_stops_.emplace_back(t.tid, status);
      return StepOutcome::kStoppedOtherwise;
    }
    if (over_syscall) {
      constexpr uint64_t kTrapFlag = 0x100;
      REPRO_ASSIGN_OR_RETURN(os::Registers after, os::get_registers(t.tid));
      after.r11 &= ~kTrapFlag;
      REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, after));
    }
  }
  if (stepped) {
    REPRO_RETURN_IF_ERROR(os::set_signal_mask(t.tid, program_mask));  // a step's trap unblocks SIGTRAP
  }
  return StepOutcome::kAtRelocatable;
}

Status RecordSession::patch_syscall_site(Thread& t, int64_t result) {
  if (!SyscallSitePatcher::worth_patching(t.syscall_number) ||
      syscalls::is_restart_result(result)) {
    return Status::ok();
  }
  auto occupied = [&](uint64_t start, uint64_t end) {
    for (const auto& [tid, other] : threads_) {
      if (tid == t.tid || other->pid != t.pid) {
        continue;
      }
      uint64_t rip = other->entry_regs.rip;
      if (other->state != Thread::State::kInSyscall) {
        auto regs = os::get_registers(tid);
        if (!regs.is_ok()) {
          return true;  // cannot tell where it stands
        }
        rip = regs->rip;
      }
      if (rip >= start && rip < end) {
        return true;
      }
    }
    return false;
  };
  REPRO_ASSIGN_OR_RETURN(std::optional<SitePatch> patch,
                         site_patcher_.plan(t.tid, t.pid, t.syscall_number, t.entry_regs.rip,
                                            occupied));
  if (!patch) {
    return Status::ok();
  }
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  auto compare = patch::site_compare_at(
      reinterpret_cast<const uint8_t*>(patch->original.data()) + 2, patch->original.size() - 2);
  if (regs.rip != patch->site + 2 || !compare) {
    return Status::ok();  // not standing past the syscall: another time
  }
  REPRO_RETURN_IF_ERROR(
      os::write_memory(t.tid, patch->stub, patch->stub_bytes.data(), patch->stub_bytes.size()));
  REPRO_RETURN_IF_ERROR(
      os::write_memory(t.tid, patch->site, patch->jump_bytes.data(), patch->jump_bytes.size()));
  patch::finish_site_compare(regs, compare->first, static_cast<uint8_t>(patch->original.size()));
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  site_patcher_.made(t.pid, *patch);
  event_.clear();
  event_.kind = format::EventKind::kSyscallPatch;
  event_.thread = t.index;
  event_.path = patch->path;
  event_.address = patch->site;
  event_.data = patch->original;
  event_.writes.push_back({patch->stub, patch->stub_bytes});
  event_.writes.push_back({patch->site, patch->jump_bytes});
  return log(event_);
}

void RecordSession::inherit_fast_path(const Thread& parent, Thread& child, uint64_t clone_flags) {
  if (!parent.fast_path || (clone_flags & CLONE_THREAD)) {
    return;  // a new thread maps and registers its own buffer
  }
  if (clone_flags & CLONE_VM) {
    child.fast_path = parent.fast_path;  // vfork: the child logs into the parent's buffer
  } else {
    child.fast_path = std::make_shared<FastPathBuffer>(*parent.fast_path);  // a copy, as the memory
  }
}

}  // namespace repro::tracer
