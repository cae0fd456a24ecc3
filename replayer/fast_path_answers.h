#pragma once
// The code replay writes into the fast-path page (core/fastpath) in place
// of its `syscall; ret`, so that the preloaded library's calls are
// answered inside the program from the replay queue, without a stop.
//
// Recording, the library made each call through the page with no stop and
// logged it. Replaying, each of them used to stop at the replayer to be
// answered: a ptrace round trip per call, so replay of a program that the
// fast path records at native speed ran several times slower than its
// recording. Now, at a batch event, the replayer copies the batch's
// records into the queue and the code below answers the calls from it, in
// order: it checks that the call is the recorded one (number, rdi, rdx,
// r10), writes the recorded output, returns the recorded result, and
// leaves the registers as the kernel would (rcx the address after the
// page's `syscall`, r11 the flags). A call that does not match, or that
// finds the queue empty, makes a real syscall at
// REPRO_FASTPATH_REPLAY_FALLBACK_IP, which stops at the replayer: it then
// answers it from the trace or reports the divergence.
//
// Nothing of it is seen by the program's memory: the code saves rsi and
// rdi in the queue, not on the stack, puts back the 8 stack bytes below
// rsp that pushf borrows, and zeroes each record it used (and the queue's
// header once the last one is used), so the queue reads as zeros again,
// as it always does while recording.

#include <cstdint>
#include <span>

namespace repro::replayer {

/// Where the code goes in the page: a jump at the page's start, the
/// fallback `syscall; ret` at kFallbackOffset, the code at kCodeOffset.
inline constexpr uint64_t kFallbackOffset = 0x10;
inline constexpr uint64_t kCodeOffset = 0x40;

/// The page's first bytes, a `jmp` to kCodeOffset, and the fallback.
std::span<const uint8_t> fast_path_page_jump();
std::span<const uint8_t> fast_path_page_fallback();
/// The answering code (x86-64, position-dependent: it runs at kCodeOffset
/// in the page at REPRO_FASTPATH_PAGE_ADDRESS and addresses the queue
/// absolutely).
std::span<const uint8_t> fast_path_answer_code();

}  // namespace repro::replayer
