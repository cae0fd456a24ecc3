// Replay of kSyscallBatch events: the syscalls the preloaded library made
// without a stop while recording (core/fastpath).
//
// Replay runs the same library (LD_PRELOAD is in the recorded
// environment), but its filter lets nothing through: each of those
// syscalls stops here, at the library's own syscall instruction, and is
// answered from the batch like any emulated syscall (result and the
// bytes the kernel wrote). The library then logs it into its buffer as it
// did while recording, so memory stays the same byte for byte.

#include <fmt/core.h>

#include "core/fastpath/fastpath_abi.h"
#include "core/fastpath/syscall_batch.h"
#include "replayer/divergence.h"
#include "replayer/replay_session.h"
#include "replayer/replay_thread.h"

namespace repro::replayer {

Status ReplaySession::on_syscall_batch(const format::Event& event) {
  ReplayThread& t = thread(event.thread);
  auto syscalls = fastpath::parse_syscall_batch(event.data);
  if (!syscalls.is_ok()) {
    return syscalls.status().context(fmt::format("event #{}", event_index_));
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
  if (t.entry_regs.rip != REPRO_FASTPATH_UNTRACED_IP) {
    return diverged(t, describe_syscall(answer.syscall_number, answer.args) + " (fast path)",
                    describe_syscall(t.syscall_number, t.args) +
                        fmt::format(" at {:#x}", t.entry_regs.rip));
  }
  REPRO_RETURN_IF_ERROR(check_syscall(t, answer));
  return emulate(t, answer);
}

}  // namespace repro::replayer
