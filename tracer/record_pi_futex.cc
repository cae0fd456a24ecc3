// How the recorder keeps the kernel's writes to priority-inheritance futex
// words in the trace (see pi_futex.h for why).

#include "tracer/pi_futex.h"

#include <fmt/core.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>

#include "core/os/tracee.h"
#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {
namespace {

#ifndef FUTEX_LOCK_PI2
constexpr int FUTEX_LOCK_PI2 = 13;  // Linux 5.14
#endif

// How long a PI lock may take to block once let into the kernel. It runs
// a few microseconds of kernel code; this much only covers a loaded host.
// Too short shows as syscall-entered events of FUTEX_LOCK_PI without the
// futex word, and replays that diverge at the owner's unlock.
constexpr auto kPiLockBlockLimit = std::chrono::milliseconds(200);

int futex_op(const std::array<uint64_t, 6>& args) {
  return static_cast<int>(args[1]) & FUTEX_CMD_MASK;  // without PRIVATE / CLOCK_REALTIME
}

}  // namespace

std::vector<uint64_t> pi_futex_words(int number, const std::array<uint64_t, 6>& args) {
  if (number != SYS_futex) {
    return {};
  }
  switch (futex_op(args)) {
    case FUTEX_LOCK_PI:
    case FUTEX_LOCK_PI2:
    case FUTEX_UNLOCK_PI:
    case FUTEX_TRYLOCK_PI:
      return {args[0]};
    case FUTEX_WAIT_REQUEUE_PI:  // waits on uaddr, returns owning uaddr2
    case FUTEX_CMP_REQUEUE_PI:   // takes uaddr2 for a waiter, or marks it
      return {args[4]};
    default:
      return {};
  }
}

bool is_pi_futex_lock(int number, const std::array<uint64_t, 6>& args) {
  return number == SYS_futex &&
         (futex_op(args) == FUTEX_LOCK_PI || futex_op(args) == FUTEX_LOCK_PI2);
}

bool is_nonblocking_pi_futex(int number, const std::array<uint64_t, 6>& args) {
  return number == SYS_futex &&
         (futex_op(args) == FUTEX_UNLOCK_PI || futex_op(args) == FUTEX_TRYLOCK_PI ||
          futex_op(args) == FUTEX_CMP_REQUEUE_PI);
}

Status RecordSession::enter_until_asleep(Thread& t) {
  // It keeps the CPU until it has blocked; then it passes the CPU on like
  // any syscall that blocks. If it returns at once, it just keeps it.
  REPRO_RETURN_IF_ERROR(resume_in_kernel(t));
  REPRO_ASSIGN_OR_RETURN(bool asleep, wait_until_asleep(t));
  if (asleep && !ready_.empty()) {
    if (!t.entered_logged) {
      REPRO_RETURN_IF_ERROR(log_entered(t));
    }
    release_cpu(t);
  }
  return Status::ok();
}

Result<bool> RecordSession::wait_until_asleep(Thread& t) {
  auto deadline = std::chrono::steady_clock::now() + kPiLockBlockLimit;
  while (true) {
    int status = 0;
    pid_t got = waitpid(t.tid, &status, __WALL | WNOHANG);
    if (got == t.tid) {
      deferred_stops_.emplace_back(t.tid, status);  // it returned (or stopped) instead
      return false;
    }
    // 'S' also while the kernel looks whether it must sleep at all (wait4
    // scanning its children), preempted there: os::asleep_in_kernel.
    char state = os::scheduler_state(t.tid);
    if (state == 'D' || (state == 'S' && os::asleep_in_kernel(t.tid))) {
      return true;
    }
    if (state == 0 || std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    // Let it run (it shares our CPU when pinned).
    timespec pause{0, 20 * 1000};
    nanosleep(&pause, nullptr);
  }
}

Status RecordSession::add_pi_lock_word(Thread& t) {
  if (t.state != Thread::State::kInSyscall || !is_pi_futex_lock(t.syscall_number, t.args)) {
    return Status::ok();
  }
  format::MemoryWrite word;
  word.address = t.args[0];
  word.bytes.resize(sizeof(uint32_t));
  if (os::read_memory(t.tid, word.address, word.bytes.data(), word.bytes.size()).is_ok()) {
    event_.writes.push_back(std::move(word));
  }
  return Status::ok();
}

Status RecordSession::log_handover_order(Thread& t) {
  Thread* current = current_ != 0 ? find(current_) : nullptr;
  if (current == nullptr || current == &t || current->state != Thread::State::kInSyscall ||
      current->entered_logged || pi_futex_words(t.syscall_number, t.args).empty() ||
      !is_nonblocking_pi_futex(current->syscall_number, current->args)) {
    return Status::ok();
  }
  // t's PI op returned while the current thread is inside the PI unlock
  // (or requeue) that may have handed it the word: log that entry first.
  // The current thread keeps the CPU (its op finishes alone).
  return log_entered(*current);
}

}  // namespace repro::tracer
