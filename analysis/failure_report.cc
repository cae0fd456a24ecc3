#include "analysis/failure_report.h"
#include "analysis/value_names.h"

#include <fmt/format.h>

#include <csignal>

#include "analysis/trace_summary.h"

namespace repro::analysis {
namespace {

// What the kernel's si_code says about a fault; "" when it says nothing
// worth printing.
const char* signal_code_text(int signal, int code) {
  if (code == SI_USER) {
    return "sent by kill";
  }
  if (code == SI_TKILL) {
    return "sent by tkill or raise";
  }
  if (code == SI_QUEUE) {
    return "sent by sigqueue";
  }
  switch (signal) {
    case SIGSEGV:
      return code == SEGV_MAPERR ? "address not mapped" : code == SEGV_ACCERR ? "no permission" : "";
    case SIGBUS:
      return code == BUS_ADRALN ? "misaligned address" : code == BUS_ADRERR ? "no such physical address"
                                                                            : "";
    case SIGFPE:
      return code == FPE_INTDIV ? "integer divide by zero" : code == FPE_INTOVF ? "integer overflow" : "";
    case SIGILL:
      return code == ILL_ILLOPC ? "illegal opcode" : "";
    default:
      return "";
  }
}

std::string hex_bytes(const std::string& bytes) {
  std::string text;
  for (unsigned char byte : bytes) {
    text += fmt::format("{}{:02x}", text.empty() ? "" : " ", byte);
  }
  return text;
}

}  // namespace

std::string describe_signal_cause(const format::FailureStacks& stacks) {
  std::string text = signal_number_name(stacks.signal_number);
  const char* code = signal_code_text(stacks.signal_number, stacks.signal_code);
  if (code[0] != '\0') {
    text += fmt::format(" ({})", code);
  }
  if (stacks.signal_code > 0 && (stacks.fault_address != 0 || stacks.signal_number == SIGSEGV)) {
    text += fmt::format(" at {:#x}", stacks.fault_address);
  }
  return text;
}

std::string describe_instruction(const format::FailureStacks& stacks) {
  if (stacks.instruction_bytes.empty()) {
    return fmt::format("{:#x}: (code not readable)", stacks.instruction_address);
  }
  return fmt::format("{:#x}: {}  ({})", stacks.instruction_address,
                     stacks.instruction.empty() ? "(not an instruction)" : stacks.instruction,
                     hex_bytes(stacks.instruction_bytes));
}

const char* instruction_label(const format::FailureStacks& stacks) {
  return stacks.signal_code > 0 ? "faulting instruction" : "stopped at";
}

std::string describe_frame(size_t number, const format::StackFrame& frame) {
  std::string text = fmt::format("#{} {:#x}", number, frame.pc);
  if (!frame.function.empty() || !frame.module.empty()) {
    text += " " + (frame.function.empty() ? std::string("??") : frame.function);
  }
  if (!frame.file.empty()) {
    text += fmt::format(" at {}:{}", frame.file, frame.line);
  }
  if (!frame.module.empty()) {
    text += fmt::format(" ({})", frame.module);
  }
  return text;
}

std::string describe_failure_stacks(const format::FailureStacks& stacks, const std::string& indent) {
  std::string text = fmt::format("{}{}\n", indent, describe_signal_cause(stacks));
  text += fmt::format("{}{} {}\n", indent, instruction_label(stacks), describe_instruction(stacks));
  for (const format::ThreadStack& thread : stacks.threads) {
    text += fmt::format("{}t{} (tid {}){}:\n", indent, thread.thread, thread.recorded_tid,
                        &thread == &stacks.threads.front() ? ", which got the signal" : "");
    for (size_t i = 0; i < thread.frames.size(); ++i) {
      text += fmt::format("{}  {}\n", indent, describe_frame(i, thread.frames[i]));
    }
    if (!thread.note.empty()) {
      text += fmt::format("{}  ({})\n", indent, thread.note);
    }
  }
  return text;
}

nlohmann::ordered_json failure_stacks_json(const format::FailureStacks& stacks) {
  nlohmann::ordered_json threads = nlohmann::ordered_json::array();
  for (const format::ThreadStack& thread : stacks.threads) {
    nlohmann::ordered_json frames = nlohmann::ordered_json::array();
    for (const format::StackFrame& frame : thread.frames) {
      frames.push_back({{"pc", frame.pc},
                        {"function", frame.function},
                        {"file", frame.file},
                        {"line", frame.line},
                        {"module", frame.module}});
    }
    threads.push_back({{"thread", thread.thread},
                       {"recorded_tid", thread.recorded_tid},
                       {"frames", std::move(frames)},
                       {"note", thread.note}});
  }
  return {{"signal", stacks.signal_number},
          {"signal_name", signal_number_name(stacks.signal_number)},
          {"signal_code", stacks.signal_code},
          {"cause", describe_signal_cause(stacks)},
          {"fault_address", stacks.fault_address},
          {"instruction_address", stacks.instruction_address},
          {"instruction", stacks.instruction},
          {"instruction_bytes", hex_bytes(stacks.instruction_bytes)},
          {"threads", std::move(threads)}};
}

}  // namespace repro::analysis
