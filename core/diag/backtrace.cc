#include "core/diag/backtrace.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fmt/core.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace repro::diag {
namespace {

// Why libdw unwinds as well as names: libunwind's ptrace unwinder finds
// unwind tables only through /proc/PID/maps, which names no file where
// replay mapped one as anonymous memory. libdw's unwinder reads them from
// whatever modules we report, so one Dwfl serves both jobs.

using DwflHandle = std::unique_ptr<Dwfl, decltype(&dwfl_end)>;

// An address range [low, high) that a reported module covers.
struct Range {
  uint64_t low = 0;
  uint64_t high = 0;
};

bool overlaps_any(const std::vector<Range>& ranges, uint64_t low, uint64_t high) {
  for (const Range& range : ranges) {
    if (low < range.high && range.low < high) {
      return true;
    }
  }
  return false;
}

// Reports each ELF file of `modules` at its mapping of file offset 0, the
// one its first PT_LOAD is loaded at (`modules` is sorted by address, so
// the first such mapping is the lowest). With add_p_vaddr false, libdw
// takes that address as the module's start and computes the load bias from
// the file's first PT_LOAD itself. Files that are not ELF (locale archives,
// data) are skipped, as is a file whose range would overlap one already
// reported: libdw assumes modules do not overlap. Returns the ranges.
std::vector<Range> report_mapped_modules(Dwfl* dwfl, const std::vector<MappedModule>& modules) {
  std::vector<Range> reported;
  for (const MappedModule& module : modules) {
    if (module.file_offset != 0 ||
        overlaps_any(reported, module.start, module.start + module.length_bytes)) {
      continue;
    }
    Dwfl_Module* reported_module =
        dwfl_report_elf(dwfl, module.recorded_path.c_str(), module.file_path.c_str(), -1,
                        module.start, /*add_p_vaddr=*/false);
    if (reported_module == nullptr) {
      continue;
    }
    Range range;
    dwfl_module_info(reported_module, nullptr, &range.low, &range.high, nullptr, nullptr, nullptr,
                     nullptr);
    reported.push_back(range);
  }
  return reported;
}

// Reports the files the kernel really mapped, from /proc/PID/maps, except
// where a module from the caller's list already is. Returns "" or why not.
std::string report_proc_maps(Dwfl* dwfl, pid_t pid, const std::vector<Range>& taken) {
  if (taken.empty()) {
    // Recording, or nothing mapped by replay: libdw reads the maps itself,
    // and also finds the vDSO.
    int error = dwfl_linux_proc_report(dwfl, pid);
    if (error != 0) {
      return error > 0 ? std::strerror(error) : dwfl_errmsg(-1);
    }
    return "";
  }
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  if (!maps) {
    return fmt::format("cannot read /proc/{}/maps", pid);
  }
  std::string kept;
  for (std::string line; std::getline(maps, line);) {
    uint64_t low = 0;
    uint64_t high = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &low, &high) == 2 &&
        !overlaps_any(taken, low, high)) {
      kept += line + "\n";
    }
  }
  if (kept.empty()) {
    return "";  // every mapping is one of the caller's
  }
  // libdw parses maps from a FILE*; hand it the kept lines from memory.
  std::unique_ptr<FILE, decltype(&std::fclose)> file(fmemopen(kept.data(), kept.size(), "r"),
                                                     &std::fclose);
  if (file == nullptr) {
    return fmt::format("fmemopen: {}", std::strerror(errno));
  }
  if (dwfl_linux_proc_maps_report(dwfl, file.get()) != 0) {
    return dwfl_errmsg(-1);
  }
  return "";
}

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
  static const Dwfl_Callbacks callbacks = {
      .find_elf = dwfl_linux_proc_find_elf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = nullptr,
      .debuginfo_path = nullptr,
  };
  DwflHandle dwfl(dwfl_begin(&callbacks), &dwfl_end);
  if (dwfl == nullptr) {
    return fmt::format("  (no backtrace: libdw: {})\n", dwfl_errmsg(-1));
  }
  std::vector<Range> taken = report_mapped_modules(dwfl.get(), modules);
  std::string maps_error = report_proc_maps(dwfl.get(), pid, taken);
  if (dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0) {
    return fmt::format("  (no backtrace: libdw: {})\n", dwfl_errmsg(-1));
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
