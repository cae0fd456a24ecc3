#include "replayer/divergence.h"

#include <fmt/core.h>

#include "core/os/tracee.h"
#include "core/syscalls/syscall_table.h"
#ifdef REPRO_HAVE_DIAG
#include "core/diag/backtrace.h"
#include "core/diag/disassembly.h"
#endif

namespace repro::replayer {

std::string describe_syscall(int number, const std::array<uint64_t, 6>& args) {
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(number);
  int count = info ? info->arg_count : 6;
  std::string text = fmt::format("{}(", syscalls::syscall_name(number));
  for (int i = 0; i < count; ++i) {
    int64_t value = static_cast<int64_t>(args[i]);
    text += (i ? ", " : "");
    text += (value > -4096 && value < 65536) ? fmt::format("{}", value)
                                             : fmt::format("{:#x}", args[i]);
  }
  return text + ")";
}

Status divergence(const DivergenceReport& report) {
  std::string text = fmt::format(
      "replay diverged from the trace at event #{} (thread t{}, live tid {})\n"
      "  expected: {}\n"
      "  observed: {}\n",
      report.event_index, report.thread, report.live_tid, report.expected, report.observed);
#ifdef REPRO_HAVE_DIAG
  auto regs = os::get_registers(report.live_tid);
  if (regs.is_ok()) {
    text +=
        "backtrace:\n" + diag::backtrace(report.live_pid, report.live_tid, report.mapped_modules);
    text += "code:\n" + diag::disassemble(report.live_tid, regs->rip);
  }
#endif
  while (!text.empty() && text.back() == '\n') {
    text.pop_back();
  }
  return Status::error(StatusCode::kDivergence, text);
}

}  // namespace repro::replayer
