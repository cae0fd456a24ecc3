// RecordSession: what the program looked like when a fatal signal ended
// it. At the delivery-stop of a signal whose action ends the process, every
// thread of that process still exists and can be read: the faulting
// instruction and one backtrace per thread go into a kFailureStacks event
// (core/format/failure_stacks.h), so `repro report` can say where the
// program failed without replaying it. Replay has nothing to do for it.

#include <fmt/core.h>

#include <algorithm>
#include <csignal>
#include <vector>

#include "core/diag/backtrace.h"
#include "core/diag/disassembly.h"
#include "core/format/failure_stacks.h"
#include "core/os/tracee.h"
#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {
namespace {

// Backtraces of at most this many threads per failure: each thread asleep
// in a syscall may cost up to a second to stop, and a report of hundreds of
// identical worker stacks helps nobody. Symptom of too small: the thread
// that held the lock a crash was about missing from `repro report`.
constexpr size_t kMaxFailureThreads = 64;
// Frames per thread, as for the deadlock report.
constexpr int kMaxFailureFrames = 24;

// Signals whose siginfo carries the faulting address in si_addr.
bool has_fault_address(const siginfo_t& info) {
  bool fault = info.si_signo == SIGSEGV || info.si_signo == SIGBUS || info.si_signo == SIGILL ||
               info.si_signo == SIGFPE || info.si_signo == SIGTRAP;
  return fault && info.si_code > 0;  // sent by the kernel for a fault, not by kill()
}

format::StackFrame stored_frame(const diag::Frame& frame) {
  format::StackFrame stored;
  stored.pc = frame.pc;
  stored.function = frame.function;
  stored.file = frame.file;
  stored.line = frame.line > 0 ? static_cast<uint32_t>(frame.line) : 0;
  stored.module = frame.module;
  return stored;
}

}  // namespace

Status RecordSession::log_failure_stacks(Thread& t, const siginfo_t& info) {
  format::FailureStacks stacks;
  stacks.signal_number = info.si_signo;
  stacks.signal_code = info.si_code;
  stacks.fault_address = has_fault_address(info) ? reinterpret_cast<uint64_t>(info.si_addr) : 0;
  if (Result<os::Registers> regs = os::get_registers(t.tid); regs.is_ok()) {
    stacks.instruction_address = regs->rip;
    diag::Instruction instruction = diag::disassemble_one(t.tid, regs->rip);
    stacks.instruction_bytes = instruction.bytes;
    stacks.instruction = instruction.text;
  }

  // The failing thread first, then its siblings in order of appearance.
  std::vector<Thread*> threads{&t};
  for (const auto& [tid, sibling] : threads_) {
    if (sibling.get() != &t && sibling->pid == t.pid && !sibling->exit_logged &&
        sibling->state != Thread::State::kExiting) {
      threads.push_back(sibling.get());
    }
  }
  std::sort(threads.begin() + 1, threads.end(),
            [](const Thread* a, const Thread* b) { return a->index < b->index; });
  std::string left_out;
  if (threads.size() > kMaxFailureThreads) {
    left_out = fmt::format("{} more threads not shown", threads.size() - kMaxFailureThreads);
    threads.resize(kMaxFailureThreads);
  }

  std::vector<pid_t> tids;
  for (Thread* thread : threads) {
    format::ThreadStack stack;
    stack.thread = thread->index;
    stack.recorded_tid = thread->tid;
    // The process ends with this signal, so the stops this consumes are
    // never missed: each of these threads' next event is its exit.
    stack.note = stop_for_backtrace(*thread);
    if (stack.note.empty()) {
      tids.push_back(thread->tid);
    } else {
      stack.note = "no backtrace: " + stack.note;
    }
    stacks.threads.push_back(std::move(stack));
  }
  std::vector<diag::Unwound> unwound = diag::unwind_threads(t.pid, tids, {}, kMaxFailureFrames);
  size_t next = 0;
  for (format::ThreadStack& stack : stacks.threads) {
    if (!stack.note.empty()) {
      continue;
    }
    for (const diag::Frame& frame : unwound[next].frames) {
      stack.frames.push_back(stored_frame(frame));
    }
    stack.note = unwound[next].note;
    ++next;
  }
  if (!left_out.empty()) {
    stacks.threads.back().note += stacks.threads.back().note.empty() ? left_out : "; " + left_out;
  }

  event_.clear();
  event_.kind = format::EventKind::kFailureStacks;
  event_.thread = t.index;
  event_.data = format::encode_failure_stacks(stacks);
  return log(event_);
}

}  // namespace repro::tracer
