#pragma once
// Priority-inheritance futexes (FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, ...): the
// kernel itself writes their futex words (the owner's tid, FUTEX_WAITERS),
// unlike those of the other futex ops, which only user space writes. Replay
// does not run futexes, so the recorder captures those words:
// - at the exit of every PI op (SyscallRecorder);
// - for a lock that blocks, when it has blocked: the kernel set
//   FUTEX_WAITERS on the way in, which makes the owner's unlock go to the
//   kernel (the syscall-entered event carries the word);
// - the ops that never block (unlock, trylock, requeue) keep the CPU until
//   they return: a word read at their exit while another thread runs user
//   code could hold that thread's later change;
// - and a lock handed over by an unlock can return before the unlock does:
//   the unlocking thread's entry is logged first, so that replay hands the
//   word over after the unlocker's user code, as the kernel did.
// See record_pi_futex.cc.

#include <array>
#include <cstdint>
#include <vector>

namespace repro::tracer {

/// The futex words that syscall `number` with `args` may have the kernel
/// write: empty unless it is futex(2) with a PI op.
std::vector<uint64_t> pi_futex_words(int number, const std::array<uint64_t, 6>& args);

/// Whether the syscall is a PI lock (FUTEX_LOCK_PI, FUTEX_LOCK_PI2), which
/// writes its word before it blocks.
bool is_pi_futex_lock(int number, const std::array<uint64_t, 6>& args);

/// Whether the syscall is a PI op that never blocks (FUTEX_UNLOCK_PI,
/// FUTEX_TRYLOCK_PI, FUTEX_CMP_REQUEUE_PI).
bool is_nonblocking_pi_futex(int number, const std::array<uint64_t, 6>& args);

}  // namespace repro::tracer
