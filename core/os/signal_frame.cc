#include "core/os/signal_frame.h"

#include "core/os/tracee.h"

namespace repro::os {
namespace {

// rt_sigframe: pretcode (8) + ucontext { uc_flags (8), uc_link (8),
// uc_stack (24), uc_mcontext }; sigcontext: 18 registers (144), then
// cs/gs/fs/ss (8), err, trapno, oldmask, cr2 (arch/x86/include/uapi/asm/
// sigcontext.h). A wrong offset shows as preemption points after signal
// handlers that replay cannot find.
constexpr uint64_t kMcontextOffset = 8 + 8 + 8 + 24;
constexpr uint64_t kErrOffset = kMcontextOffset + 152;
constexpr uint64_t kTrapnoOffset = kMcontextOffset + 160;
constexpr uint64_t kCr2Offset = kMcontextOffset + 176;

}  // namespace

Status clear_frame_trap_info(pid_t tid, uint64_t handler_rsp) {
  const uint64_t zero = 0;
  for (uint64_t offset : {kErrOffset, kTrapnoOffset, kCr2Offset}) {
    REPRO_RETURN_IF_ERROR(write_memory(tid, handler_rsp + offset, &zero, sizeof zero));
  }
  return Status::ok();
}

}  // namespace repro::os
