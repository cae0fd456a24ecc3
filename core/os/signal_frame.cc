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

}  // namespace repro::os
