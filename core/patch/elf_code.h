#pragma once
// An ELF file's code, opened for decoding: its executable segments, and the
// ranges known to start at an instruction boundary (functions). Decoding
// forward from such a start is the one reliable way to tell an
// instruction from bytes that merely look like one (core/patch/rdtsc_sites.h,
// core/patch/syscall_sites.h). The boundaries are the FDE ranges of
// .eh_frame (every function the compiler emitted has one) and the function
// symbols of .symtab and .dynsym.
//
// Not thread-safe; the file stays mapped while the object lives.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"

struct Elf;

namespace repro::patch {

/// An executable PT_LOAD segment: where its file bytes sit in memory.
struct CodeSegment {
  uint64_t vaddr = 0;
  uint64_t file_offset = 0;
  uint64_t file_bytes = 0;
};

/// A range of code that starts at an instruction boundary (a function).
struct FunctionRange {
  uint64_t start = 0;  // vaddr
  uint64_t end = 0;
  bool operator<(const FunctionRange& other) const {
    return start != other.start ? start < other.start : end < other.end;
  }
};

class ElfCode {
 public:
  /// Opens the file at `path`; nullopt if it is not a 64-bit ELF object
  /// (nothing repro can decode). Errors: io_error (cannot read the file),
  /// corruption (unreadable program headers).
  static Result<std::optional<ElfCode>> open(const std::string& path);

  ElfCode(ElfCode&&) noexcept;
  ElfCode& operator=(ElfCode&&) noexcept;
  ~ElfCode();

  const std::vector<CodeSegment>& segments() const { return segments_; }
  /// The whole file's bytes.
  const uint8_t* file() const { return file_; }

  /// Function ranges, sorted, without duplicates. Errors: corruption
  /// (unreadable section names).
  Result<std::vector<FunctionRange>> function_ranges() const;

  /// The bytes of [start, end) (vaddrs) if one executable segment holds
  /// `start`, cut at that segment's end; nullptr otherwise. *size: their count.
  const uint8_t* code_at(uint64_t start, uint64_t end, size_t* size) const;

 private:
  ElfCode() = default;
  struct Handle;
  std::unique_ptr<Handle> handle_;
  const uint8_t* file_ = nullptr;
  size_t file_size_ = 0;
  std::vector<CodeSegment> segments_;
  std::string path_;
};

}  // namespace repro::patch
