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
#include <sys/wait.h>

#include <csignal>

#include <cstddef>
#include <cstring>

#include "core/fastpath/fastpath_abi.h"
#include "core/os/tracee.h"
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
  event_.clear();
  event_.kind = format::EventKind::kSyscallBatch;
  event_.thread = t.index;
  REPRO_ASSIGN_OR_RETURN(event_.data,
                         os::read_memory(t.tid, buffer.address + buffer.drained_offset,
                                         header.end_offset - buffer.drained_offset));
  buffer.drained_offset = header.end_offset;
  return log(event_);
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
  // makes one untraced syscall and does not loop long (at most one output
  // copy): step it. Stepping over a syscall leaves the trap flag in the
  // rflags the kernel saves in r11; replay's syscall (answered at a stop)
  // does not, so it is cleared to keep the registers the same.
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
