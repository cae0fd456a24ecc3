#pragma once
// Patchable syscall sites: where the recorder replaces a `syscall`
// instruction inside libc (or any library) by a jump into the in-process
// fast path (preload/fastpath.c), so that the calls libc makes inside
// itself (readdir's getdents64, opendir's open, fstat and fcntl,
// closedir's close) can be logged without a ptrace stop.
//
// A site is a `syscall` whose number is a constant loaded just before it
// (`mov $N,%eax`, or `xor %eax,%eax` for 0), followed by libc's test of
// the result, one of the compares of enum repro_site_compare
// (core/fastpath/fastpath_abi.h). The two instructions, 7 or 8 bytes,
// become a 5-byte jump to a stub of the site's own, then int3s: the stub
// stores the address past the compare as a return address below the red
// zone and jumps to the library's entry for that compare, which makes the
// call (fast or traced), runs the compare and returns past the site.
//
// Replacing bytes that are not that pair of instructions, or that code
// jumps into the middle of, would corrupt the program. So a site counts
// only where capstone, decoding a whole function forward from its start
// (ElfCode's function ranges), meets the three instructions in a row, and
// no direct branch of that function lands on the syscall or inside the
// pair; a function with an indirect jump (a jump table could land
// anywhere) has no sites. The recorder also checks, before it patches a
// site, that no thread stands inside it (tracer/syscall_site_patching.h).
//
// Stateless functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/fastpath/fastpath_abi.h"
#include "core/os/tracee.h"

namespace repro::patch {

/// One patchable syscall instruction in a file.
struct SyscallSite {
  uint64_t file_offset = 0;   // where the syscall instruction is in the file
  uint64_t vaddr = 0;         // and in the ELF's own address space
  int syscall_number = -1;    // the constant loaded into eax before it
  repro_site_compare compare = REPRO_SITE_CMP_RAX_4096;
  uint8_t length = 0;         // syscall and compare: 7 or 8 bytes
  bool operator==(const SyscallSite&) const = default;
};

/// The patchable sites of the ELF file at `path`, by address. A file that
/// is not an ELF object has none. Errors: io_error (cannot read the file),
/// corruption (a malformed ELF).
Result<std::vector<SyscallSite>> scan_for_syscall_sites(const std::string& path);

/// The sites in `code` (one function, at `address`, starting at an
/// instruction boundary), by the rules above; their file_offset is 0.
std::vector<SyscallSite> syscall_sites_in_function(const uint8_t* code, size_t size,
                                                   uint64_t address);

/// The compare at the start of `bytes`, and its length, if it is one of
/// enum repro_site_compare's.
std::optional<std::pair<repro_site_compare, uint8_t>> site_compare_at(const uint8_t* bytes,
                                                                      size_t size);

/// Bytes per stub in the library's stub area.
inline constexpr uint64_t kSyscallStubBytes = 32;

/// The stub at `stub_address` for a site that returns to `return_address`
/// (past its compare) through the entry at `entry_address`: kSyscallStubBytes
/// bytes. Requires: the entry within reach of a 32-bit jump.
std::string syscall_stub_bytes(uint64_t stub_address, uint64_t return_address,
                               uint64_t entry_address);

/// The bytes that replace a site of `length` bytes at `site_address`: a jump
/// to `stub_address`, then int3. Requires: the stub within reach of a
/// 32-bit jump, length >= 5.
std::string site_jump_bytes(uint64_t site_address, uint64_t stub_address, uint8_t length);

/// Whether a 32-bit relative jump from the end of a 5-byte jump at `from`
/// reaches `to`.
bool within_jump_reach(uint64_t from, uint64_t to);

/// A thread that has made the syscall at a site (rip just past it, the
/// result in rax) goes on as though the compare after it ran too: rip past
/// the site, rflags' arithmetic flags as the compare sets them. This is
/// how the thread whose syscall made the recorder patch the site gets past
/// it, in record and replay alike.
void finish_site_compare(os::Registers& regs, repro_site_compare compare, uint8_t length);

}  // namespace repro::patch
