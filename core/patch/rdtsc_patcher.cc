#include "core/patch/rdtsc_patcher.h"

#include <fmt/core.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/os/proc_maps.h"
#include "core/patch/instruction.h"

namespace repro::patch {
namespace {

// A private, executable mapping of a file.
struct CodeMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;
  std::string path;        // as /proc/PID/maps shows it
  std::string open_path;   // where to read the mapped file itself
};

// The private executable file mappings of `pid` that overlap [start, end).
// Shared ones are left alone: a write would reach the file.
Result<std::vector<CodeMapping>> code_mappings(pid_t pid, uint64_t start, uint64_t end) {
  REPRO_ASSIGN_OR_RETURN(std::vector<os::Mapping> all, os::read_mappings(pid));
  std::vector<CodeMapping> mappings;
  for (const os::Mapping& mapping : all) {
    if (!mapping.is_file() || !mapping.executable() || !mapping.is_private() ||
        mapping.end <= start || mapping.start >= end) {
      continue;
    }
    // map_files opens the very file that is mapped, even if it was
    // replaced or deleted since; it needs privileges a tracer may lack.
    std::string by_mapping =
        fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, mapping.start, mapping.end);
    std::string open_path = access(by_mapping.c_str(), R_OK) == 0 ? by_mapping : mapping.name;
    mappings.push_back(
        {mapping.start, mapping.end, mapping.file_offset, mapping.name, open_path});
  }
  return mappings;
}

}  // namespace

Result<const RdtscScan*> RdtscPatcher::scan(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return Status::from_errno(errno, fmt::format("stat '{}'", path));
  }
  FileKey key{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  auto it = scans_.find(key);
  if (it == scans_.end()) {
    REPRO_ASSIGN_OR_RETURN(RdtscScan scan, scan_for_rdtsc(path));
    it = scans_.emplace(key, std::move(scan)).first;
  }
  return &it->second;
}

Result<std::vector<PatchedFile>> RdtscPatcher::patch_mappings(pid_t tid, pid_t pid, uint64_t start,
                                                             uint64_t end) {
  REPRO_ASSIGN_OR_RETURN(std::vector<CodeMapping> mappings, code_mappings(pid, start, end));
  std::vector<PatchedFile> patched;
  for (const CodeMapping& mapping : mappings) {
    REPRO_ASSIGN_OR_RETURN(const RdtscScan* found, scan(mapping.open_path));
    PatchedFile file{mapping.path, {}};
    uint64_t mapped_bytes = mapping.end - mapping.start;
    for (const RdtscSite& site : found->sites) {
      if (site.file_offset < mapping.file_offset ||
          site.file_offset + site.length > mapping.file_offset + mapped_bytes) {
        continue;
      }
      uint64_t address = mapping.start + (site.file_offset - mapping.file_offset);
      if (address < start || address >= end) {
        continue;
      }
      std::string bytes(site.length, '\0');
      REPRO_RETURN_IF_ERROR(os::read_memory(tid, address, bytes.data(), bytes.size()));
      bool rdtscp = false;
      if (!is_rdtsc_instruction(bytes, &rdtscp)) {
        continue;  // patched already (mprotect of patched code), or changed
      }
      std::string trap = rdtsc_trap_bytes(site.length);
      REPRO_RETURN_IF_ERROR(os::write_memory(tid, address, trap.data(), trap.size()));
      sites_[pid][address] = TscStop{site.length, rdtscp};
      file.sites.push_back({address, std::move(bytes)});
      ++sites_patched_;
    }
    if (!file.sites.empty()) {
      patched.push_back(std::move(file));
    }
  }
  return patched;
}

Status RdtscPatcher::patch_site(pid_t tid, pid_t pid, const PatchedSite& site) {
  bool rdtscp = false;
  if (site.original.size() < 2 || !is_rdtsc_instruction(site.original, &rdtscp)) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("the site at {:#x} is not an rdtsc or rdtscp", site.address));
  }
  std::string bytes(site.original.size(), '\0');
  REPRO_RETURN_IF_ERROR(os::read_memory(tid, site.address, bytes.data(), bytes.size()));
  if (bytes != site.original) {
    std::string found;
    for (unsigned char c : bytes) {
      found += fmt::format(" {:02x}", c);
    }
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("the code at {:#x} is{} where the recording patched {}",
                                     site.address, found, rdtscp ? "rdtscp" : "rdtsc"));
  }
  std::string trap = rdtsc_trap_bytes(site.original.size());
  REPRO_RETURN_IF_ERROR(os::write_memory(tid, site.address, trap.data(), trap.size()));
  sites_[pid][site.address] = TscStop{static_cast<uint8_t>(site.original.size()), rdtscp};
  ++sites_patched_;
  return Status::ok();
}

Result<std::optional<TscStop>> RdtscPatcher::rdtsc_at_stop(pid_t tid, pid_t pid, int signal,
                                                           const os::Registers& regs) const {
  if (signal == SIGILL) {
    auto process = sites_.find(pid);
    if (process != sites_.end()) {
      auto site = process->second.find(regs.rip);
      if (site != process->second.end()) {
        return std::optional<TscStop>(site->second);
      }
    }
    return std::optional<TscStop>();
  }
  if (signal != SIGSEGV) {
    return std::optional<TscStop>();
  }
  // Longest rdtsc/rdtscp with prefixes is well under 16 bytes; code near
  // the end of a mapping may be readable only partly.
  uint8_t code[16] = {};
  size_t readable = sizeof code;
  while (readable > 0 && !os::read_memory(tid, regs.rip, code, readable).is_ok()) {
    readable /= 2;
  }
  std::vector<TscInstruction> found = find_rdtsc_instructions(code, readable, regs.rip);
  if (found.empty() || found[0].address != regs.rip) {
    return std::optional<TscStop>();
  }
  return std::optional<TscStop>(TscStop{found[0].length, found[0].rdtscp});
}

std::string RdtscPatcher::unpatched_rdtsc_hint(pid_t pid) const {
  auto mappings = os::read_mappings(pid);
  if (!mappings.is_ok()) {
    return "";
  }
  for (const os::Mapping& mapping : *mappings) {
    // File-backed code was scanned; [vdso] is never called.
    if (!mapping.executable() || mapping.inode != 0 || mapping.name.starts_with("[")) {
      continue;
    }
    // Generated code is small next to a process's memory: read it whole,
    // up to a bound that keeps a report quick.
    constexpr uint64_t kMaxBytes = 64 << 20;
    uint64_t length = std::min<uint64_t>(mapping.end - mapping.start, kMaxBytes);
    std::string code(length, '\0');
    if (!os::read_memory(pid, mapping.start, code.data(), code.size()).is_ok()) {
      continue;
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(code.data());
    std::vector<size_t> found = rdtsc_byte_patterns(bytes, code.size());
    if (!found.empty()) {
      size_t at = found.front();
      bool rdtscp = bytes[at + 1] == 0x01;
      return fmt::format(
          "the program runs code with no file behind it (generated at run time?) at "
          "{:#x}-{:#x}, holding the bytes of {} at {:#x}: rdtsc there is not patched, so its "
          "value was not recorded, and may be why replay diverged",
          mapping.start, mapping.end, rdtscp ? "rdtscp" : "rdtsc", mapping.start + at);
    }
  }
  return "";
}

void RdtscPatcher::note_fork(pid_t parent, pid_t child) {
  auto it = sites_.find(parent);
  if (it == sites_.end()) {
    sites_.erase(child);
  } else {
    sites_[child] = it->second;
  }
}

void RdtscPatcher::note_exec(pid_t pid) { sites_.erase(pid); }

std::optional<AddressRange> code_made_executable(int syscall_number,
                                                 const std::array<uint64_t, 6>& args,
                                                 int64_t result) {
  if (result < 0 || !(args[2] & PROT_EXEC)) {
    return std::nullopt;
  }
  if (syscall_number == SYS_mmap && !(args[3] & MAP_ANONYMOUS)) {
    auto start = static_cast<uint64_t>(result);
    return AddressRange{start, start + args[1]};
  }
  if (syscall_number == SYS_mprotect || syscall_number == SYS_pkey_mprotect) {
    return AddressRange{args[0], args[0] + args[1]};
  }
  return std::nullopt;
}

void emulate_rdtsc(os::Registers& regs, const TscStop& stop, uint64_t tsc, uint32_t aux) {
  regs.rax = tsc & 0xffffffff;
  regs.rdx = tsc >> 32;
  if (stop.rdtscp) {
    regs.rcx = aux;
  }
  regs.rip += stop.length;
}

}  // namespace repro::patch
