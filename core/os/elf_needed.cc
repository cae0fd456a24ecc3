#include "core/os/elf_needed.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/base/scoped_fd.h"

namespace repro::os {
namespace {

// Caps on what a sane executable holds, so a damaged file cannot make us
// read much.
constexpr size_t kMaxProgramHeaders = 256;
constexpr size_t kMaxDynamicEntries = 4096;
constexpr size_t kMaxStringTableBytes = 1 << 20;

bool read_exactly(int fd, void* buffer, size_t length, uint64_t offset) {
  return pread(fd, buffer, length, static_cast<off_t>(offset)) == static_cast<ssize_t>(length);
}

Status not_elf(const std::string& path, const char* why) {
  return Status::error(StatusCode::kInvalidArgument, fmt::format("{}: {}", path, why));
}

// The file offset of virtual address `address`, through the PT_LOAD that
// maps it.
std::optional<uint64_t> file_offset(const std::vector<Elf64_Phdr>& headers, uint64_t address) {
  for (const Elf64_Phdr& header : headers) {
    if (header.p_type == PT_LOAD && address >= header.p_vaddr &&
        address < header.p_vaddr + header.p_filesz) {
      return address - header.p_vaddr + header.p_offset;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<std::string>> needed_libraries(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::from_errno(errno, fmt::format("opening {}", path));
  }
  Elf64_Ehdr elf;
  if (!read_exactly(fd.get(), &elf, sizeof elf, 0) || std::memcmp(elf.e_ident, ELFMAG, SELFMAG) != 0 ||
      elf.e_ident[EI_CLASS] != ELFCLASS64 || elf.e_ident[EI_DATA] != ELFDATA2LSB ||
      elf.e_phentsize != sizeof(Elf64_Phdr) || elf.e_phnum > kMaxProgramHeaders) {
    return not_elf(path, "not a 64-bit little-endian ELF file");
  }
  std::vector<Elf64_Phdr> headers(elf.e_phnum);
  if (!read_exactly(fd.get(), headers.data(), headers.size() * sizeof(Elf64_Phdr), elf.e_phoff)) {
    return not_elf(path, "its program headers are cut short");
  }
  std::vector<std::string> needed;
  for (const Elf64_Phdr& dynamic : headers) {
    if (dynamic.p_type != PT_DYNAMIC) {
      continue;
    }
    size_t count = dynamic.p_filesz / sizeof(Elf64_Dyn);
    if (count > kMaxDynamicEntries) {
      return not_elf(path, "its dynamic section is too long");
    }
    std::vector<Elf64_Dyn> entries(count);
    if (!read_exactly(fd.get(), entries.data(), count * sizeof(Elf64_Dyn), dynamic.p_offset)) {
      return not_elf(path, "its dynamic section is cut short");
    }
    uint64_t strtab = 0, strsz = 0;
    for (const Elf64_Dyn& entry : entries) {
      if (entry.d_tag == DT_STRTAB) {
        strtab = entry.d_un.d_ptr;
      } else if (entry.d_tag == DT_STRSZ) {
        strsz = entry.d_un.d_val;
      }
    }
    std::optional<uint64_t> strings_at = file_offset(headers, strtab);
    if (!strings_at || strsz == 0 || strsz > kMaxStringTableBytes) {
      return not_elf(path, "its dynamic string table is not in the file");
    }
    std::string strings(strsz, '\0');
    if (!read_exactly(fd.get(), strings.data(), strsz, *strings_at)) {
      return not_elf(path, "its dynamic string table is cut short");
    }
    for (const Elf64_Dyn& entry : entries) {
      if (entry.d_tag == DT_NEEDED && entry.d_un.d_val < strsz) {
        needed.emplace_back(strings.c_str() + entry.d_un.d_val);
      }
    }
  }
  return needed;
}

}  // namespace repro::os
