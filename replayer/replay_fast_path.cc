// Replay of kSyscallBatch events: the syscalls the preloaded library made
// without a stop while recording (core/fastpath).
//
// Replay runs the same library (LD_PRELOAD is in the recorded
// environment). The replayer puts a batch's records into the replay queue
// of the thread's process and code into the library's page that answers
// the calls from it inside the program (fast_path_answers.h); after the
// thread's next event the queue must have been used up. Where the process
// has no queue, or with REPRO_REPLAY_FAST_PATH=stop, each of those
// syscalls stops here instead (the filter lets nothing through), at the
// library's own syscall instruction, and is answered from the batch like
// any emulated syscall (result and the bytes the kernel wrote). Either
// way the library then logs the call into its buffer as it did while
// recording, so memory stays the same byte for byte.

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "core/fastpath/fastpath_abi.h"
#include "core/fastpath/syscall_batch.h"
#include "core/os/tracee.h"
#include "replayer/divergence.h"
#include "replayer/fast_path_answers.h"
#include "replayer/replay_session.h"
#include "replayer/replay_thread.h"

namespace repro::replayer {

Status ReplaySession::on_syscall_batch(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  auto syscalls = fastpath::parse_syscall_batch(event.data);
  if (!syscalls.is_ok()) {
    return syscalls.status().context(fmt::format("event #{}", event_index_));
  }
  // The test hook REPRO_REPLAY_EXECUTE_FOR_REAL (replay_isolation.cc)
  // needs every call at a stop, where it can run one for real.
  if (answer_fast_path_in_process_ && watcher_ == nullptr && execute_for_real_.empty()) {
    REPRO_ASSIGN_OR_RETURN(bool queued, queue_fast_path_batch(t, event.data));
    if (queued) {
      return Status::ok();
    }
  }
  format::Event answer;
  for (const fastpath::BatchedSyscall& syscall : *syscalls) {
    fastpath::to_syscall_event(syscall, event.thread, &answer);
    REPRO_RETURN_IF_ERROR(answer_fast_path_syscall(t, answer));
  }
  return Status::ok();
}

Status ReplaySession::answer_fast_path_syscall(ReplayThread& t, const format::Event& answer) {
  REPRO_RETURN_IF_ERROR(advance_to_syscall(t));
  bool from_fallback = t.entry_regs.rip == REPRO_FASTPATH_REPLAY_FALLBACK_IP;
  if (t.entry_regs.rip != REPRO_FASTPATH_UNTRACED_IP && !from_fallback) {
    return diverged(t, describe_syscall(answer.syscall_number, answer.args) + " (fast path)",
                    describe_syscall(t.syscall_number, t.args) +
                        fmt::format(" at {:#x}", t.entry_regs.rip));
  }
  REPRO_RETURN_IF_ERROR(check_syscall(t, answer));
  if (from_fallback) {
    t.entry_regs.rcx = REPRO_FASTPATH_UNTRACED_IP;  // as the page's own `syscall` left it
  }
  if (execute_for_real_.count(answer.syscall_number) != 0) {
    return execute_for_real(t, answer);
  }
  return emulate(t, answer);
}

namespace {

constexpr uint64_t kPage = REPRO_FASTPATH_PAGE_ADDRESS;
constexpr uint64_t kQueue = REPRO_FASTPATH_REPLAY_QUEUE_ADDRESS;

// The replay queue's first 8 bytes (fastpath_abi.h): both 0 once used up.
struct QueueHeader {
  uint32_t next = 0;  // offset of the next record to answer
  uint32_t end = 0;   // offset past the last record
  bool used_up() const { return next == 0 && end == 0; }
};

}  // namespace

Result<bool> ReplaySession::queue_fast_path_batch(ReplayThread& t, const std::string& data) {
  if (data.size() > REPRO_FASTPATH_REPLAY_QUEUE_BYTES - REPRO_FASTPATH_REPLAY_QUEUE_RECORDS) {
    return false;
  }
  uint8_t code[3] = {};
  QueueHeader header;
  if (!os::read_memory(t.tid, kPage, code, sizeof code).is_ok() ||
      !os::read_memory(t.tid, kQueue, &header, sizeof header).is_ok()) {
    return false;  // no page or no queue (the library could not map them)
  }
  bool patched = code[0] == fast_path_page_jump()[0] && code[1] == fast_path_page_jump()[1];
  bool as_made = std::equal(code, code + sizeof code, fast_path_page_fallback().begin());
  if (!patched && !as_made) {
    return false;  // not the library's page: someone else's memory is there
  }
  if (!header.used_up()) {
    if (!t.fast_path_queued) {
      return diverged(t, "the previous batch of fast-path syscalls used up",
                      fmt::format("its syscalls from queue offset {} on not made", header.next));
    }
    // A second batch before the thread ran (the recorder drained its
    // buffer at a stop that left no event): after the first, if it fits;
    // else answered at stops, once the thread has used up the queue.
    uint32_t end = header.end;
    if (data.size() > REPRO_FASTPATH_REPLAY_QUEUE_BYTES - end) {
      return false;
    }
    REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, kQueue + end, data.data(), data.size()));
    end += static_cast<uint32_t>(data.size());
    REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, kQueue + sizeof(uint32_t), &end, sizeof end));
    return true;
  }
  if (as_made) {
    // The page as the library made it (in this process image): code first.
    REPRO_RETURN_IF_ERROR(os::write_memory_forced(t.pid, kPage + kCodeOffset, fast_path_answer_code().data(),
                                                  fast_path_answer_code().size()));
    REPRO_RETURN_IF_ERROR(os::write_memory_forced(t.pid, kPage + kFallbackOffset,
                                                  fast_path_page_fallback().data(),
                                                  fast_path_page_fallback().size()));
    REPRO_RETURN_IF_ERROR(os::write_memory_forced(t.pid, kPage, fast_path_page_jump().data(),
                                                  fast_path_page_jump().size()));
  }
  std::string queue(REPRO_FASTPATH_REPLAY_QUEUE_RECORDS, '\0');
  QueueHeader filled{REPRO_FASTPATH_REPLAY_QUEUE_RECORDS,
                     static_cast<uint32_t>(REPRO_FASTPATH_REPLAY_QUEUE_RECORDS + data.size())};
  std::memcpy(queue.data(), &filled, sizeof filled);
  queue += data;
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, kQueue, queue.data(), queue.size()));
  t.fast_path_queued = true;
  return true;
}

Status ReplaySession::check_fast_path_queue_used(ReplayThread& t) {
  if (!t.fast_path_queued || t.where == ReplayThread::Where::kGone) {
    return Status::ok();
  }
  QueueHeader header;
  if (!os::read_memory(t.tid, kQueue, &header, sizeof header).is_ok()) {
    return Status::ok();  // its process is gone (or exec'd): nothing left to use
  }
  if (!header.used_up()) {
    return diverged(t, "the recorded fast-path syscalls made before this event",
                    fmt::format("those from queue offset {} on not made", header.next));
  }
  t.fast_path_queued = false;
  return Status::ok();
}

Status ReplaySession::check_fast_path_fallback(ReplayThread& t) {
  if (!t.fast_path_queued || t.entry_regs.rip != REPRO_FASTPATH_REPLAY_FALLBACK_IP) {
    return Status::ok();
  }
  QueueHeader header;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, kQueue, &header, sizeof header));
  if (header.next == 0 || header.next >= header.end) {
    return Status::ok();  // used up: this call is the next event's
  }
  repro_fastpath_record record;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, kQueue + header.next, &record, sizeof record));
  std::array<uint64_t, 6> args;
  std::memcpy(args.data(), record.args, sizeof record.args);
  return diverged(t, describe_syscall(record.syscall_number, args) + " (fast path)",
                  describe_syscall(t.syscall_number, t.args));
}

}  // namespace repro::replayer
