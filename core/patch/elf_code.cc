#include "core/patch/elf_code.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/base/scoped_fd.h"

namespace repro::patch {
namespace {

// Bounded little-endian reads over one section's bytes; every read checks
// what is left, so a malformed .eh_frame ends the walk instead of reading
// past it.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool ok() const { return ok_; }
  size_t offset() const { return pos_; }
  void seek(size_t offset) {
    pos_ = offset;
    ok_ = ok_ && offset <= size_;
  }
  uint64_t fixed(size_t bytes) {
    if (!ok_ || size_ - pos_ < bytes) {
      ok_ = false;
      return 0;
    }
    uint64_t value = 0;
    std::memcpy(&value, data_ + pos_, bytes);  // x86-64 is little-endian
    pos_ += bytes;
    return value;
  }
  int64_t signed_fixed(size_t bytes) {
    uint64_t value = fixed(bytes);
    unsigned shift = static_cast<unsigned>(64 - 8 * bytes);
    return static_cast<int64_t>(value << shift) >> shift;
  }
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; ok_ && shift < 64; shift += 7) {
      uint64_t byte = fixed(1);
      value |= (byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        return value;
      }
    }
    ok_ = false;
    return 0;
  }
  int64_t sleb() {
    int64_t value = 0;
    for (unsigned shift = 0; ok_ && shift < 64; shift += 7) {
      uint64_t byte = fixed(1);
      value |= static_cast<int64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        if (shift + 7 < 64 && (byte & 0x40)) {
          value |= -(int64_t{1} << (shift + 7));
        }
        return value;
      }
    }
    ok_ = false;
    return 0;
  }
  std::string_view c_string() {
    if (!ok_) {
      return {};
    }
    const void* nul = std::memchr(data_ + pos_, 0, size_ - pos_);
    if (nul == nullptr) {
      ok_ = false;
      return {};
    }
    size_t length = static_cast<size_t>(static_cast<const uint8_t*>(nul) - (data_ + pos_));
    std::string_view text(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length + 1;
    return text;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// DWARF pointer encodings (DW_EH_PE_*), as .eh_frame uses them.
constexpr uint8_t kEncodingOmit = 0xff;
constexpr uint8_t kEncodingPcRel = 0x10;

// Reads a pointer of `encoding` at the reader's position, which is at
// `field_vaddr` in memory. Only absolute and pc-relative values occur in
// the FDE addresses compilers emit; anything else gives false.
bool read_encoded(ByteReader& in, uint8_t encoding, uint64_t field_vaddr, uint64_t* out) {
  if (encoding == kEncodingOmit) {
    return false;
  }
  uint64_t value = 0;
  switch (encoding & 0x0f) {
    case 0x00: value = in.fixed(8); break;                                   // absptr
    case 0x01: value = in.uleb(); break;                                     // uleb128
    case 0x02: value = in.fixed(2); break;                                   // udata2
    case 0x03: value = in.fixed(4); break;                                   // udata4
    case 0x04: value = in.fixed(8); break;                                   // udata8
    case 0x09: value = static_cast<uint64_t>(in.sleb()); break;              // sleb128
    case 0x0a: value = static_cast<uint64_t>(in.signed_fixed(2)); break;     // sdata2
    case 0x0b: value = static_cast<uint64_t>(in.signed_fixed(4)); break;     // sdata4
    case 0x0c: value = in.fixed(8); break;                                   // sdata8
    default: return false;
  }
  switch (encoding & 0x70) {
    case 0x00: break;
    case kEncodingPcRel: value += field_vaddr; break;
    default: return false;
  }
  *out = value;
  return in.ok();
}

// Skips the augmentation data of a CIE, returning its FDE pointer
// encoding ('R'), absptr if it names none.
uint8_t cie_fde_encoding(ByteReader in, uint64_t section_vaddr) {
  uint8_t version = static_cast<uint8_t>(in.fixed(1));
  std::string_view augmentation = in.c_string();
  if (augmentation.find("eh") != std::string_view::npos) {
    in.fixed(8);  // an old GCC's eh pointer
  }
  in.uleb();  // code alignment
  in.sleb();  // data alignment
  if (version == 1) {
    in.fixed(1);
  } else {
    in.uleb();  // return address register
  }
  if (augmentation.empty() || augmentation[0] != 'z') {
    return 0x00;
  }
  in.uleb();  // augmentation data length
  for (char c : augmentation.substr(1)) {
    if (c == 'R') {
      return static_cast<uint8_t>(in.fixed(1));
    }
    if (c == 'P') {
      uint8_t personality = static_cast<uint8_t>(in.fixed(1));
      uint64_t ignored = 0;
      if (!read_encoded(in, personality, section_vaddr + in.offset(), &ignored)) {
        return kEncodingOmit;
      }
    } else if (c == 'L') {
      in.fixed(1);
    } else if (c != 'S' && c != 'B' && c != 'G') {
      return kEncodingOmit;  // unknown augmentation: cannot go on
    }
  }
  return 0x00;
}

// The code ranges of the FDEs in an .eh_frame section at `section_vaddr`.
void eh_frame_ranges(const uint8_t* data, size_t size, uint64_t section_vaddr,
                     std::vector<FunctionRange>* ranges) {
  ByteReader in(data, size);
  while (in.ok() && in.offset() + 4 <= size) {
    uint64_t length = in.fixed(4);
    if (length == 0) {
      break;  // terminator
    }
    if (length == 0xffffffff) {
      length = in.fixed(8);
    }
    size_t body = in.offset();
    if (!in.ok() || length > size - body) {
      break;
    }
    uint32_t cie_pointer = static_cast<uint32_t>(in.fixed(4));
    if (cie_pointer != 0 && cie_pointer <= body) {
      // An FDE: its CIE sits cie_pointer bytes before this field.
      ByteReader cie(data, size);
      cie.seek(body - cie_pointer);
      uint64_t cie_length = cie.fixed(4);
      if (cie_length == 0xffffffff) {
        cie.fixed(8);
      }
      cie.fixed(4);  // the CIE id (0)
      uint8_t encoding = cie_fde_encoding(cie, section_vaddr);
      uint64_t start = 0;
      uint64_t range = 0;
      if (cie.ok() && read_encoded(in, encoding, section_vaddr + in.offset(), &start) &&
          read_encoded(in, encoding & 0x0f, 0, &range) && range > 0) {
        ranges->push_back({start, start + range});
      }
    }
    in.seek(body + length);
  }
}

// Function symbols of a symbol table section.
void symbol_ranges(Elf_Scn* section, const GElf_Shdr& header, std::vector<FunctionRange>* ranges) {
  Elf_Data* data = elf_getdata(section, nullptr);
  if (data == nullptr || header.sh_entsize == 0) {
    return;
  }
  size_t count = header.sh_size / header.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym symbol;
    if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) {
      break;
    }
    int type = GELF_ST_TYPE(symbol.st_info);
    if ((type == STT_FUNC || type == STT_GNU_IFUNC) && symbol.st_size > 0 &&
        symbol.st_shndx != SHN_UNDEF) {
      ranges->push_back({symbol.st_value, symbol.st_value + symbol.st_size});
    }
  }
}

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

}  // namespace

struct ElfCode::Handle {
  ScopedFd fd;
  std::unique_ptr<Elf, ElfCloser> elf;
};

ElfCode::ElfCode(ElfCode&&) noexcept = default;
ElfCode& ElfCode::operator=(ElfCode&&) noexcept = default;
ElfCode::~ElfCode() = default;

Result<std::optional<ElfCode>> ElfCode::open(const std::string& path) {
  ElfCode code;
  code.path_ = path;
  code.handle_ = std::make_unique<Handle>();
  code.handle_->fd = ScopedFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!code.handle_->fd.valid()) {
    return Status::from_errno(errno, fmt::format("opening '{}'", path));
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(code.handle_->fd.get(), ELF_C_READ_MMAP, nullptr);
  code.handle_->elf.reset(elf);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64) {
    return std::optional<ElfCode>{};
  }
  size_t file_size = 0;
  code.file_ = reinterpret_cast<const uint8_t*>(elf_rawfile(elf, &file_size));
  code.file_size_ = file_size;
  size_t segment_count = 0;
  if (code.file_ == nullptr || elf_getphdrnum(elf, &segment_count) != 0) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("'{}': unreadable ELF program headers", path));
  }
  for (size_t i = 0; i < segment_count; ++i) {
    GElf_Phdr header;
    if (gelf_getphdr(elf, static_cast<int>(i), &header) == nullptr) {
      continue;
    }
    if (header.p_type == PT_LOAD && (header.p_flags & PF_X) && header.p_offset <= file_size) {
      uint64_t bytes = std::min<uint64_t>(header.p_filesz, file_size - header.p_offset);
      code.segments_.push_back({header.p_vaddr, header.p_offset, bytes});
    }
  }
  return std::optional<ElfCode>{std::move(code)};
}

Result<std::vector<FunctionRange>> ElfCode::function_ranges() const {
  Elf* elf = handle_->elf.get();
  std::vector<FunctionRange> ranges;
  size_t names_index = 0;
  if (elf_getshdrstrndx(elf, &names_index) != 0) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("'{}': unreadable ELF section names", path_));
  }
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr;
       section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) {
      continue;
    }
    if (header.sh_type == SHT_SYMTAB || header.sh_type == SHT_DYNSYM) {
      symbol_ranges(section, header, &ranges);
      continue;
    }
    const char* name = elf_strptr(elf, names_index, header.sh_name);
    if (name != nullptr && std::strcmp(name, ".eh_frame") == 0 && header.sh_type == SHT_PROGBITS &&
        header.sh_offset <= file_size_ && header.sh_size <= file_size_ - header.sh_offset) {
      eh_frame_ranges(file_ + header.sh_offset, header.sh_size, header.sh_addr, &ranges);
    }
  }
  std::sort(ranges.begin(), ranges.end());
  ranges.erase(std::unique(ranges.begin(), ranges.end(),
                           [](const FunctionRange& a, const FunctionRange& b) {
                             return a.start == b.start && a.end == b.end;
                           }),
               ranges.end());
  return ranges;
}

const uint8_t* ElfCode::code_at(uint64_t start, uint64_t end, size_t* size) const {
  for (const CodeSegment& segment : segments_) {
    if (start < segment.vaddr || start >= segment.vaddr + segment.file_bytes) {
      continue;
    }
    *size = std::min(end, segment.vaddr + segment.file_bytes) - start;
    return file_ + segment.file_offset + (start - segment.vaddr);
  }
  *size = 0;
  return nullptr;
}

}  // namespace repro::patch
