#include "core/os/elf_needed.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <gelf.h>
#include <libelf.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "core/base/scoped_fd.h"

namespace repro::os {
namespace {

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

Status not_elf(const std::string& path, const char* why) {
  return Status::error(StatusCode::kInvalidArgument, fmt::format("{}: {}", path, why));
}

// The file offset of virtual address `address`, through the PT_LOAD that
// maps it.
std::optional<uint64_t> file_offset(Elf* elf, size_t segments, uint64_t address) {
  for (size_t i = 0; i < segments; ++i) {
    GElf_Phdr segment;
    if (gelf_getphdr(elf, static_cast<int>(i), &segment) != nullptr && segment.p_type == PT_LOAD &&
        address >= segment.p_vaddr && address < segment.p_vaddr + segment.p_filesz) {
      return address - segment.p_vaddr + segment.p_offset;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<std::string>> needed_libraries(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    return Status::error(StatusCode::kUnsupported, "libelf is unusable");
  }
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::from_errno(errno, fmt::format("opening {}", path));
  }
  // Mapped, not read: only the pages of the headers and the dynamic
  // section are touched, whatever the file's size.
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  size_t segments = 0;
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF || gelf_getclass(elf.get()) != ELFCLASS64 ||
      elf_getphdrnum(elf.get(), &segments) != 0) {
    return not_elf(path, "not a 64-bit ELF file");
  }
  std::vector<std::string> needed;
  for (size_t i = 0; i < segments; ++i) {
    GElf_Phdr dynamic_segment;
    if (gelf_getphdr(elf.get(), static_cast<int>(i), &dynamic_segment) == nullptr ||
        dynamic_segment.p_type != PT_DYNAMIC) {
      continue;
    }
    Elf_Data* dynamic = elf_getdata_rawchunk(elf.get(), static_cast<int64_t>(dynamic_segment.p_offset),
                                             dynamic_segment.p_filesz, ELF_T_DYN);
    if (dynamic == nullptr) {
      return not_elf(path, "its dynamic section is not in the file");
    }
    size_t count = dynamic_segment.p_filesz / sizeof(Elf64_Dyn);
    uint64_t strtab = 0, strsz = 0;
    for (size_t j = 0; j < count; ++j) {
      GElf_Dyn entry;
      if (gelf_getdyn(dynamic, static_cast<int>(j), &entry) == nullptr) {
        break;
      }
      if (entry.d_tag == DT_STRTAB) {
        strtab = entry.d_un.d_ptr;
      } else if (entry.d_tag == DT_STRSZ) {
        strsz = entry.d_un.d_val;
      }
    }
    std::optional<uint64_t> strings_at = file_offset(elf.get(), segments, strtab);
    Elf_Data* strings = strings_at && strsz != 0
                            ? elf_getdata_rawchunk(elf.get(), static_cast<int64_t>(*strings_at), strsz,
                                                   ELF_T_BYTE)
                            : nullptr;
    if (strings == nullptr) {
      return not_elf(path, "its dynamic string table is not in the file");
    }
    const char* text = static_cast<const char*>(strings->d_buf);
    for (size_t j = 0; j < count; ++j) {
      GElf_Dyn entry;
      if (gelf_getdyn(dynamic, static_cast<int>(j), &entry) == nullptr) {
        break;
      }
      if (entry.d_tag == DT_NEEDED && entry.d_un.d_val < strsz) {
        needed.emplace_back(text + entry.d_un.d_val, strnlen(text + entry.d_un.d_val, strsz - entry.d_un.d_val));
      }
    }
  }
  return needed;
}

}  // namespace repro::os
