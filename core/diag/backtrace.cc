#include "core/diag/backtrace.h"

#include "core/diag/tracee_dwfl.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace repro::diag {
namespace {

// Why libdw unwinds as well as names: libunwind's ptrace unwinder finds
// unwind tables only through /proc/PID/maps, which names no file where
// replay mapped one as anonymous memory. libdw's unwinder reads them from
// whatever modules we report, so one Dwfl serves both jobs.

// "child_leaf()" for "_Z10child_leafv"; C names are left alone.
std::string demangle(const char* name) {
  if (name == nullptr) {
    return "??";
  }
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && readable != nullptr ? readable.get() : name;
}

// Names `address` with libdw: function (from debug information or else
// the symbol table), source file and line where known, module path.
std::string symbolize(Dwfl* dwfl, uint64_t address) {
  Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
  if (module == nullptr) {
    return "";
  }
  std::string text = demangle(dwfl_module_addrname(module, address));
  if (Dwfl_Line* line = dwfl_module_getsrc(module, address); line != nullptr) {
    int line_number = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr)) {
      text += fmt::format(" at {}:{}", file, line_number);
    }
  }
  const char* module_name =
      dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (module_name != nullptr) {
    text += fmt::format(" ({})", module_name);
  }
  return text;
}

struct Walk {
  Dwfl* dwfl = nullptr;
  int max_frames = 0;
  int frames = 0;
  std::string text;
};

int on_frame(Dwfl_Frame* frame, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  Dwarf_Addr pc = 0;
  bool is_activation = false;
  if (!dwfl_frame_pc(frame, &pc, &is_activation)) {
    return DWARF_CB_ABORT;
  }
  // A return address points after the call; name the call itself.
  uint64_t lookup = is_activation || pc == 0 ? pc : pc - 1;
  std::string name = symbolize(walk->dwfl, lookup);
  walk->text += fmt::format("  #{} {:#x}{}{}\n", walk->frames, pc, name.empty() ? "" : " ", name);
  ++walk->frames;
  return walk->frames < walk->max_frames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

}  // namespace

std::string backtrace(pid_t pid, pid_t tid, const std::vector<MappedModule>& modules,
                      int max_frames) {
  std::string dwfl_error;
  std::string maps_error;
  TraceeDwfl dwfl = report_tracee_modules(pid, modules, &dwfl_error, &maps_error);
  if (dwfl == nullptr) {
    return fmt::format("  (no backtrace: {})\n", dwfl_error);
  }
  std::string text;
  if (!maps_error.empty()) {
    // Frames in the executable or ld.so will be missing or unnamed.
    text += fmt::format("  (reading /proc/{}/maps: {})\n", pid, maps_error);
  }
  // The thread is already in our ptrace-stop: libdw must not attach.
  int error = dwfl_linux_proc_attach(dwfl.get(), pid, /*assume_ptrace_stopped=*/true);
  if (error != 0) {
    return text + fmt::format("  (no backtrace: libdw cannot attach to pid {}: {})\n", pid,
                              error > 0 ? std::strerror(error) : dwfl_errmsg(-1));
  }
  Walk walk;
  walk.dwfl = dwfl.get();
  walk.max_frames = max_frames;
  int result = dwfl_getthread_frames(dwfl.get(), tid, on_frame, &walk);
  text += walk.text;
  // On x86-64 Linux the outermost frame (_start, whose return address the
  // unwind tables mark undefined) ends the walk with 0; -1 means libdw
  // could go no further (no unwind table for a frame, unreadable stack).
  if (result == -1) {
    text += fmt::format("  ({}: {})\n", walk.frames == 0 ? "no backtrace" : "unwinding stopped",
                        dwfl_errmsg(-1));
  } else if (walk.frames == max_frames) {
    text += fmt::format("  (stopped after {} frames)\n", max_frames);
  }
  return text;
}

}  // namespace repro::diag
