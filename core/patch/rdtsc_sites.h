#pragma once
// Finding the rdtsc and rdtscp instructions of an ELF file, for patching
// mode (docs/recording.md, "rdtsc").
//
// Some hosts accept prctl(PR_SET_TSC, PR_TSC_SIGSEGV) and still let rdtsc
// run, so its value would go unrecorded (ld.so alone reads it at every
// program start). There repro replaces each rdtsc/rdtscp in the code a
// program loads by a trap of the same length. Replacing bytes that merely
// look like rdtsc (0f 31 inside a longer instruction's immediate, or data
// in a text segment) would corrupt the program, so a site counts only
// where capstone, decoding forward from a known instruction boundary,
// lands on it. Known boundaries are the starts of functions: the FDE
// ranges of .eh_frame (every function the compiler emitted has one) and
// the function symbols of .symtab and .dynsym. A byte pattern only says
// which functions to decode.
//
// Stateless functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace repro::patch {

/// One rdtsc or rdtscp instruction in a file.
struct RdtscSite {
  uint64_t file_offset = 0;  // where its first byte is in the file
  uint64_t vaddr = 0;        // its address in the ELF's own address space
  uint8_t length = 0;        // instruction length (2 for rdtsc, 3 for rdtscp, more with prefixes)
  bool rdtscp = false;
  bool operator==(const RdtscSite&) const = default;
};

struct RdtscScan {
  std::vector<RdtscSite> sites;  // by file offset
  /// Byte patterns of rdtsc/rdtscp in executable segments that no decode
  /// from a known boundary confirmed (left alone: maybe not code).
  uint64_t unconfirmed = 0;
};

/// Scans the executable PT_LOAD segments of the ELF file at `path`.
/// A file that is not an ELF object gives an empty scan (nothing to patch).
/// Errors: io_error (cannot read the file), corruption (a malformed ELF).
Result<RdtscScan> scan_for_rdtsc(const std::string& path);

/// Offsets in `bytes` where the bytes of rdtsc (0f 31) or rdtscp
/// (0f 01 f9) start: places to look, not sites (they may lie inside other
/// instructions or data).
std::vector<size_t> rdtsc_byte_patterns(const uint8_t* bytes, size_t size);

/// The bytes that replace a site of `length` bytes: ud2 (0f 0b, raising
/// SIGILL with rip at the site), then nops. Requires: length >= 2.
std::string rdtsc_trap_bytes(size_t length);

/// True if `bytes` (the original instruction) is rdtsc or rdtscp, with any
/// prefixes; sets *rdtscp.
bool is_rdtsc_instruction(const std::string& bytes, bool* rdtscp);

}  // namespace repro::patch
