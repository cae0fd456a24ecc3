#include "core/os/vdso.h"

#include <elf.h>
#include <fmt/core.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "core/os/proc_maps.h"
#include "core/os/tracee.h"

namespace repro::os {
namespace {

// The vDSO functions whose syscall takes the same arguments and gives the
// same result, by their name without the "__vdso_" prefix.
std::optional<int> same_syscall(std::string name) {
  if (name.starts_with("__vdso_")) {
    name = name.substr(7);
  }
  static const std::map<std::string, int> kSyscalls = {
      {"clock_gettime", SYS_clock_gettime}, {"gettimeofday", SYS_gettimeofday},
      {"time", SYS_time},                   {"getcpu", SYS_getcpu},
      {"clock_getres", SYS_clock_getres},
  };
  auto found = kSyscalls.find(name);
  return found == kSyscalls.end() ? std::nullopt : std::optional(found->second);
}

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

Status corrupt(const std::string& what) {
  return Status::error(StatusCode::kCorruption, "the vDSO image: " + what);
}

}  // namespace

std::string vdso_stub(int syscall_number) {
  if (syscall_number < 0) {
    // mov rax, -ENOSYS; ret
    const int32_t error = -ENOSYS;
    std::string stub = "\x48\xc7\xc0";
    stub.append(reinterpret_cast<const char*>(&error), 4);
    return stub + "\xc3";
  }
  // mov eax, NR; syscall; ret
  const uint32_t number = static_cast<uint32_t>(syscall_number);
  std::string stub = "\xb8";
  stub.append(reinterpret_cast<const char*>(&number), 4);
  return stub + "\x0f\x05\xc3";
}

Result<std::vector<VdsoPatch>> plan_vdso_patches(const std::string& image, uint64_t base) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    return corrupt("libelf is unusable");
  }
  std::string copy = image;  // elf_memory may not write, but takes a char*
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(copy.data(), copy.size()));
  GElf_Ehdr header;
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF || gelf_getehdr(elf.get(), &header) == nullptr ||
      header.e_machine != EM_X86_64) {
    return corrupt("not an x86-64 ELF image");
  }
  // Symbol values are link-time addresses; the image's first byte (file
  // offset 0, in its first PT_LOAD) is mapped at `base`.
  std::optional<uint64_t> link_base;
  for (size_t i = 0; i < header.e_phnum && !link_base; ++i) {
    GElf_Phdr segment;
    if (gelf_getphdr(elf.get(), static_cast<int>(i), &segment) != nullptr &&
        segment.p_type == PT_LOAD) {
      link_base = segment.p_vaddr - segment.p_offset;
    }
  }
  if (!link_base) {
    return corrupt("no PT_LOAD segment");
  }
  std::map<uint64_t, VdsoPatch> by_address;  // aliases share an entry
  for (Elf_Scn* section = elf_nextscn(elf.get(), nullptr); section != nullptr;
       section = elf_nextscn(elf.get(), section)) {
    GElf_Shdr section_header;
    if (gelf_getshdr(section, &section_header) == nullptr ||
        section_header.sh_type != SHT_DYNSYM) {
      continue;
    }
    Elf_Data* data = elf_getdata(section, nullptr);
    size_t count = section_header.sh_entsize ? section_header.sh_size / section_header.sh_entsize : 0;
    for (size_t i = 0; data != nullptr && i < count; ++i) {
      GElf_Sym symbol;
      if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr ||
          GELF_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_shndx == SHN_UNDEF) {
        continue;
      }
      const char* name = elf_strptr(elf.get(), section_header.sh_link, symbol.st_name);
      if (name == nullptr) {
        return corrupt("a symbol without a name");
      }
      std::optional<int> number = same_syscall(name);
      if (symbol.st_size < vdso_stub(number.value_or(-1)).size()) {
        return corrupt(fmt::format("{} is {} bytes long, too short for a stub", name,
                                   symbol.st_size));
      }
      uint64_t address = base + (symbol.st_value - *link_base);
      VdsoPatch& patch = by_address[address];
      if (patch.symbol.empty() || std::string_view(name).starts_with("__vdso_")) {
        patch = VdsoPatch{name, address, number.value_or(-1)};
      }
    }
  }
  std::vector<VdsoPatch> patches;
  for (auto& [address, patch] : by_address) {
    patches.push_back(std::move(patch));
  }
  return patches;
}

Result<std::vector<VdsoPatch>> patch_vdso(pid_t pid, uint64_t base) {
  REPRO_ASSIGN_OR_RETURN(std::vector<Mapping> mappings, read_mappings(pid));
  auto vdso = std::find_if(mappings.begin(), mappings.end(),
                           [&](const Mapping& m) { return m.start == base; });
  if (vdso == mappings.end()) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("no mapping at AT_SYSINFO_EHDR {:#x}", base));
  }
  REPRO_ASSIGN_OR_RETURN(std::string image, read_memory(pid, base, vdso->end - vdso->start));
  REPRO_ASSIGN_OR_RETURN(std::vector<VdsoPatch> patches, plan_vdso_patches(image, base));
  for (const VdsoPatch& patch : patches) {
    if (patch.address < vdso->start || patch.address + 16 > vdso->end) {
      return corrupt(fmt::format("{} lies outside the image", patch.symbol));
    }
    std::string stub = vdso_stub(patch.syscall_number);
    // The vDSO is mapped read-only (and may write for ptrace): a forced write
    // gives this process its own copy of the page.
    REPRO_RETURN_IF_ERROR(write_memory_forced(pid, patch.address, stub.data(), stub.size()));
  }
  return patches;
}

}  // namespace repro::os
