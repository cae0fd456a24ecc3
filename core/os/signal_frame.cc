#include "core/os/signal_frame.h"

#include "core/os/tracee.h"

#include <algorithm>
#include <cstring>

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
constexpr uint64_t kFpstatePointerOffset = kMcontextOffset + 184;
// Then: reserved1[8] (64 bytes, never written), uc_sigmask (8), and the
// 128-byte siginfo, written only for SA_SIGINFO; 440 bytes in all. The
// interrupted rsp is the sigcontext's 16th register; uc_stack holds the
// alternate stack (ss_sp, ss_flags, ss_size).
constexpr uint64_t kReservedOffset = kMcontextOffset + 192;
constexpr uint64_t kReservedBytes = 64;
constexpr uint64_t kSiginfoOffset = kMcontextOffset + 256 + 8;
constexpr uint64_t kFrameBytes = kSiginfoOffset + 128;
constexpr uint64_t kInterruptedRspOffset = kMcontextOffset + 15 * 8;
constexpr uint64_t kEflagsOffset = kMcontextOffset + 17 * 8;
constexpr uint64_t kResumeFlag = 0x10000;
constexpr uint64_t kAltStackOffset = 8 + 8 + 8;
// The kernel's red zone skip, and the largest alignment gaps it leaves:
// below the FPU state (64-byte aligned) and below the frame (16).
constexpr uint64_t kRedZoneBytes = 128;
constexpr uint64_t kFpstateAlignment = 64;

// The XSAVE area in a frame (arch/x86/include/uapi/asm/sigcontext.h): the
// 512-byte legacy (FXSAVE) region, whose bytes 464..511 hold the kernel's
// struct _fpx_sw_bytes, then the 64-byte XSAVE header (XSTATE_BV first),
// then the extended components at their standard offsets.
constexpr size_t kSwBytesOffset = 464;
constexpr size_t kLegacyBytes = 512;
constexpr size_t kHeaderBytes = 64;
constexpr uint32_t kFpXstateMagic1 = 0x46505853;  // FP_XSTATE_MAGIC1

struct SwBytes {
  uint32_t magic1;
  uint32_t extended_size;
  uint64_t xfeatures;
  uint32_t xstate_size;
};

Status fill_zeros(pid_t tid, uint64_t start, uint64_t end) {
  if (end <= start) {
    return Status::ok();
  }
  std::string zeros(end - start, '\0');
  return write_memory(tid, start, zeros.data(), zeros.size());
}

}  // namespace

Status clear_frame_trap_info(pid_t tid, uint64_t handler_rsp) {
  const uint64_t zero = 0;
  for (uint64_t offset : {kErrOffset, kTrapnoOffset, kCr2Offset}) {
    REPRO_RETURN_IF_ERROR(write_memory(tid, handler_rsp + offset, &zero, sizeof zero));
  }
  return Status::ok();
}

Status normalize_frame_fpu_state(pid_t tid, uint64_t handler_rsp, const std::string& xstate) {
  uint64_t fpstate = 0;
  REPRO_RETURN_IF_ERROR(
      read_memory(tid, handler_rsp + kFpstatePointerOffset, &fpstate, sizeof fpstate));
  if (fpstate == 0 || xstate.size() < kLegacyBytes) {
    return Status::ok();  // no FPU state in the frame
  }
  SwBytes sw{};
  REPRO_RETURN_IF_ERROR(read_memory(tid, fpstate + kSwBytesOffset, &sw, sizeof sw));
  if (sw.magic1 != kFpXstateMagic1) {
    // An FXSAVE-only frame: the legacy region, less the software bytes.
    return write_memory(tid, fpstate, xstate.data(), kSwBytesOffset);
  }
  size_t size = std::min<size_t>(sw.xstate_size, xstate.size());
  if (size < kLegacyBytes + kHeaderBytes) {
    return Status::ok();
  }
  std::string area = xstate.substr(0, size);
  REPRO_ASSIGN_OR_RETURN(std::string frame_sw,
                         read_memory(tid, fpstate + kSwBytesOffset, kLegacyBytes - kSwBytesOffset));
  area.replace(kSwBytesOffset, frame_sw.size(), frame_sw);
  // Every user component present (ptrace gives the initial values of
  // those not in use), in the standard format.
  std::memset(area.data() + kLegacyBytes, 0, kHeaderBytes);
  std::memcpy(area.data() + kLegacyBytes, &sw.xfeatures, sizeof sw.xfeatures);
  return write_memory(tid, fpstate, area.data(), area.size());
}

Status fill_frame_slack(pid_t tid, uint64_t handler_rsp, const siginfo_t& info) {
  uint64_t interrupted_rsp = 0;
  uint64_t fpstate = 0;
  struct {
    uint64_t sp;
    int32_t flags;
    int32_t pad;
    uint64_t size;
  } alt{};
  REPRO_RETURN_IF_ERROR(read_memory(tid, handler_rsp + kInterruptedRspOffset, &interrupted_rsp,
                                    sizeof interrupted_rsp));
  REPRO_RETURN_IF_ERROR(
      read_memory(tid, handler_rsp + kFpstatePointerOffset, &fpstate, sizeof fpstate));
  REPRO_RETURN_IF_ERROR(read_memory(tid, handler_rsp + kAltStackOffset, &alt, sizeof alt));
  // The top the kernel built the frame down from: the alternate stack's,
  // or the interrupted stack's below its red zone.
  bool on_alt_stack = alt.size != 0 && handler_rsp >= alt.sp && handler_rsp < alt.sp + alt.size;
  uint64_t top = on_alt_stack ? alt.sp + alt.size : interrupted_rsp - kRedZoneBytes;
  uint64_t bottom = on_alt_stack ? alt.sp : 0;

  // Each part on its own: one that cannot be written (a red zone below a
  // small alternate stack's mapping) does not keep the others as they were.
  (void)fill_zeros(tid, std::max(handler_rsp - kRedZoneBytes, bottom), handler_rsp);
  (void)fill_zeros(tid, handler_rsp + kReservedOffset,
                   handler_rsp + kReservedOffset + kReservedBytes);
  (void)write_memory(tid, handler_rsp + kSiginfoOffset, &info, sizeof info);
  // RF, which the processor sets for a thread stopped inside a rep string
  // instruction, and which replay, reaching that point otherwise, lacks.
  uint64_t eflags = 0;
  if (read_memory(tid, handler_rsp + kEflagsOffset, &eflags, sizeof eflags).is_ok() &&
      (eflags & kResumeFlag)) {
    eflags &= ~kResumeFlag;
    (void)write_memory(tid, handler_rsp + kEflagsOffset, &eflags, sizeof eflags);
  }
  if (fpstate == 0) {
    return Status::ok();
  }
  uint64_t frame_end = handler_rsp + kFrameBytes;
  if (fpstate >= frame_end && fpstate - frame_end < kFpstateAlignment) {
    (void)fill_zeros(tid, frame_end, fpstate);
  }
  SwBytes sw{};
  REPRO_RETURN_IF_ERROR(read_memory(tid, fpstate + kSwBytesOffset, &sw, sizeof sw));
  if (sw.magic1 == kFpXstateMagic1) {
    uint64_t fpstate_end = fpstate + sw.extended_size;
    if (top >= fpstate_end && top - fpstate_end < kFpstateAlignment) {
      (void)fill_zeros(tid, fpstate_end, top);
    }
  }
  return Status::ok();
}

}  // namespace repro::os
