#include "core/diag/backtrace.h"

#include <elfutils/libdwfl.h>
#include <fmt/core.h>
#include <libunwind-ptrace.h>

#include <memory>

namespace repro::diag {
namespace {

// Names `address` with libdw: function, source file and line, module path.
std::string symbolize(Dwfl* dwfl, uint64_t address) {
  if (dwfl == nullptr) {
    return "";
  }
  Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
  if (module == nullptr) {
    return "";
  }
  std::string text;
  if (const char* name = dwfl_module_addrname(module, address); name != nullptr) {
    text += name;
  } else {
    text += "??";
  }
  if (Dwfl_Line* line = dwfl_module_getsrc(module, address); line != nullptr) {
    int line_number = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr)) {
      text += fmt::format(" at {}:{}", file, line_number);
    }
  }
  const char* module_name = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr,
                                             nullptr, nullptr);
  if (module_name != nullptr) {
    text += fmt::format(" ({})", module_name);
  }
  return text;
}

}  // namespace

std::string backtrace(pid_t pid, pid_t tid, int max_frames) {
  static const Dwfl_Callbacks callbacks = {
      .find_elf = dwfl_linux_proc_find_elf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = nullptr,
      .debuginfo_path = nullptr,
  };
  std::unique_ptr<Dwfl, void (*)(Dwfl*)> dwfl(dwfl_begin(&callbacks), &dwfl_end);
  if (dwfl && dwfl_linux_proc_report(dwfl.get(), pid) == 0) {
    dwfl_report_end(dwfl.get(), nullptr, nullptr);
  }

  unw_addr_space_t space = unw_create_addr_space(&_UPT_accessors, 0);
  if (space == nullptr) {
    return "  (no backtrace: libunwind address space)\n";
  }
  void* context = _UPT_create(tid);
  std::string text;
  unw_cursor_t cursor;
  if (context == nullptr || unw_init_remote(&cursor, space, context) < 0) {
    text = "  (no backtrace: cannot unwind this thread)\n";
  } else {
    for (int frame = 0; frame < max_frames; ++frame) {
      unw_word_t ip = 0;
      if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0) {
        break;
      }
      // Return addresses point after the call; look up the call itself.
      uint64_t lookup = frame == 0 || ip == 0 ? ip : ip - 1;
      text += fmt::format("  #{} {:#x} {}\n", frame, ip, symbolize(dwfl.get(), lookup));
      if (unw_step(&cursor) <= 0) {
        break;
      }
    }
  }
  if (context != nullptr) {
    _UPT_destroy(context);
  }
  unw_destroy_addr_space(space);
  return text;
}

}  // namespace repro::diag
