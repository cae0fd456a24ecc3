#include "core/diag/tracee_dwfl.h"

#include <fmt/core.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace repro::diag {
namespace {

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

}  // namespace

TraceeDwfl report_tracee_modules(pid_t pid, const std::vector<MappedModule>& modules,
                                 std::string* error, std::string* maps_error) {
  // Static: libdw keeps a pointer to the callbacks for the Dwfl's life.
  static const Dwfl_Callbacks callbacks = {
      .find_elf = dwfl_linux_proc_find_elf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = nullptr,
      .debuginfo_path = nullptr,
  };
  TraceeDwfl dwfl(dwfl_begin(&callbacks), &dwfl_end);
  if (dwfl == nullptr) {
    *error = fmt::format("libdw: {}", dwfl_errmsg(-1));
    return dwfl;
  }
  std::vector<Range> taken = report_mapped_modules(dwfl.get(), modules);
  *maps_error = report_proc_maps(dwfl.get(), pid, taken);
  if (dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0) {
    *error = fmt::format("libdw: {}", dwfl_errmsg(-1));
    dwfl.reset();
  }
  return dwfl;
}

}  // namespace repro::diag
