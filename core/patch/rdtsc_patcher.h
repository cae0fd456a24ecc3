#pragma once
// Patching mode for rdtsc/rdtscp, shared by record and replay.
//
// Where the host will not make rdtsc fault (core/os/host_probe.h), the
// recorder replaces every rdtsc/rdtscp it can find (rdtsc_sites.h) in the
// code a process maps executable by ud2 padded with nops: the thread then
// stops with SIGILL exactly where the instruction was, the recorder
// emulates it and logs the value, as it does for a trapped rdtsc. The
// recorder patches at the exec stop (program and ld.so), after each mmap
// with PROT_EXEC of a file, and after each mprotect adding PROT_EXEC, and
// logs the sites (kRdtscPatch); replay patches the same sites at the same
// points. A SIGILL is an rdtsc only at a site this process had patched: a
// program's own ud2 stays a fault.
//
// Owned by one session. Not thread-safe.

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/base/status.h"
#include "core/os/tracee.h"
#include "core/patch/rdtsc_sites.h"

namespace repro::patch {

/// One patched instruction in a live process.
struct PatchedSite {
  uint64_t address = 0;
  std::string original;  // the rdtsc/rdtscp bytes the trap replaced
};

/// The sites patched in one file's mappings at once (one kRdtscPatch event).
struct PatchedFile {
  std::string path;  // the mapped file, as /proc/PID/maps names it
  std::vector<PatchedSite> sites;
};

/// An rdtsc or rdtscp a thread stopped at (trapped or patched).
struct TscStop {
  uint8_t length = 0;  // bytes to skip once emulated
  bool rdtscp = false;
};

class RdtscPatcher {
 public:
  /// Patches the sites in every private executable file mapping of process
  /// `pid` that overlaps [start, end), writing through `tid` (a stopped
  /// thread of it). Sites whose bytes are no longer the original
  /// instruction (patched before, or changed) are left alone. Returns what
  /// it patched, one entry per file with sites. Errors: io_error (memory
  /// or /proc unreadable), tracee_died.
  Result<std::vector<PatchedFile>> patch_mappings(pid_t tid, pid_t pid, uint64_t start,
                                                  uint64_t end);

  /// Patches one recorded site (replay): the original bytes must be there.
  /// Errors: invalid_argument naming the address and the bytes found.
  Status patch_site(pid_t tid, pid_t pid, const PatchedSite& site);

  /// What stopped `tid` (process `pid`) with `signal` at `regs.rip`, if it
  /// is an rdtsc or rdtscp: a SIGSEGV on the instruction itself (trapping
  /// mode) or a SIGILL on a site patched in this process.
  Result<std::optional<TscStop>> rdtsc_at_stop(pid_t tid, pid_t pid, int signal,
                                               const os::Registers& regs) const;

  /// A new process created by fork (or clone without CLONE_THREAD) has its
  /// parent's patched code.
  void note_fork(pid_t parent, pid_t child);
  /// A process exec'd: its old code is gone.
  void note_exec(pid_t pid);

  /// When rdtsc may have run unseen in process `pid`: the first rdtsc or
  /// rdtscp byte pattern in an executable mapping with no file behind it
  /// (code generated at run time, which patching cannot cover), as one
  /// sentence for a divergence report; empty if there is none.
  std::string unpatched_rdtsc_hint(pid_t pid) const;

  /// Sites patched and files scanned so far (for the record summary).
  uint64_t sites_patched() const { return sites_patched_; }

 private:
  // Identifies file content without reading it: device, inode, size, mtime.
  using FileKey = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;
  Result<const RdtscScan*> scan(const std::string& path);

  std::map<FileKey, RdtscScan> scans_;
  // Patched sites by process (thread group id): address -> site.
  std::map<pid_t, std::map<uint64_t, TscStop>> sites_;
  uint64_t sites_patched_ = 0;
};

/// The range of memory a successful syscall made executable, where
/// patching mode must look for new code: an mmap of a file with PROT_EXEC
/// ([result, result + length)), or an mprotect/pkey_mprotect adding it.
/// nullopt for any other syscall, or a failed one.
struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;
};
std::optional<AddressRange> code_made_executable(int syscall_number,
                                                 const std::array<uint64_t, 6>& args,
                                                 int64_t result);

/// Sets the registers as rdtsc/rdtscp at `regs.rip` would have with the
/// value `tsc` (and `aux` in rcx for rdtscp), and moves past it.
void emulate_rdtsc(os::Registers& regs, const TscStop& stop, uint64_t tsc, uint32_t aux);

}  // namespace repro::patch
