#include "core/diag/data_address.h"

#include <elfutils/libdwfl.h>
#include <fmt/core.h>
#include <gelf.h>

#include "core/diag/tracee_dwfl.h"

namespace repro::diag {
namespace {

// The allocated section of the module's file that holds `address`, and
// the address's offset in it; "" if none. Thread-local sections (.tdata,
// .tbss) are skipped: their addresses are a template's, and .tbss shares
// them with the sections that follow it.
std::string section_of(Dwfl_Module* module, uint64_t address, uint64_t* offset) {
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  size_t names = 0;
  if (elf == nullptr || elf_getshdrstrndx(elf, &names) != 0) {
    return "";
  }
  const uint64_t file_address = address - bias;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr;
       section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr || (header.sh_flags & SHF_ALLOC) == 0 ||
        (header.sh_flags & SHF_TLS) != 0) {
      continue;
    }
    if (file_address >= header.sh_addr && file_address - header.sh_addr < header.sh_size) {
      const char* name = elf_strptr(elf, names, header.sh_name);
      *offset = file_address - header.sh_addr;
      return name != nullptr ? name : "";
    }
  }
  return "";
}

}  // namespace

std::string describe_data_address(pid_t pid, uint64_t address,
                                  const std::vector<MappedModule>& modules) {
  std::string error;
  std::string maps_error;
  TraceeDwfl dwfl = report_tracee_modules(pid, modules, &error, &maps_error);
  if (dwfl == nullptr) {
    return "";
  }
  Dwfl_Module* module = dwfl_addrmodule(dwfl.get(), address);
  if (module == nullptr) {
    return "";
  }
  const char* module_name =
      dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  std::string file = module_name != nullptr ? module_name : "??";
  uint64_t section_offset = 0;
  std::string section = section_of(module, address, &section_offset);
  GElf_Off symbol_offset = 0;
  GElf_Sym symbol;
  const char* symbol_name = dwfl_module_addrinfo(module, address, &symbol_offset, &symbol, nullptr,
                                                 nullptr, nullptr);
  // libdw falls back to the nearest symbol before the address, which for
  // data is usually an unrelated variable: name only one that covers it.
  bool covers = symbol_name != nullptr && *symbol_name != '\0' &&
                (symbol_offset < symbol.st_size || symbol_offset == 0);
  if (covers) {
    return fmt::format("{}+{:#x} in {}{}", symbol_name, symbol_offset, file,
                       section.empty() ? "" : fmt::format(" ({})", section));
  }
  if (!section.empty()) {
    return fmt::format("in {} ({}+{:#x})", file, section, section_offset);
  }
  return fmt::format("in {}", file);
}

}  // namespace repro::diag
