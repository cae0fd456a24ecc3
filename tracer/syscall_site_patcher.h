#pragma once
// Which syscall sites the recorder patches into jumps to the fast-path
// library, and when (core/patch/syscall_sites.h says what a site is).
//
// A site is patched the first time a thread of a process whose library
// offered its stub area makes, from it, a syscall the library takes on its
// fast path: at that syscall's exit, with the thread standing just past
// the `syscall`. It is left alone for good where it is not a site of the
// file, when a signal handler's frame may return into it, and when the
// stub area is full; it is left for a later visit while another thread of
// the process stands inside it (blocked in the same syscall, or stopped
// before the compare). Sites in the library itself are never patched.
//
// Owned by one RecordSession. Not thread-safe.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/patch/syscall_sites.h"

namespace repro::tracer {

/// A patch planned for one site: what to write, and where.
struct SitePatch {
  std::string path;          // the file the site's code came from
  uint64_t site = 0;         // the syscall instruction's address
  std::string original;      // the syscall and the compare after it
  uint64_t stub = 0;         // where the stub goes
  std::string stub_bytes;
  std::string jump_bytes;    // what replaces the site
};

class SyscallSitePatcher {
 public:
  /// Whether the library takes `syscall_number` on its fast path when it
  /// comes from a patched site (preload/fastpath.c, repro_site_syscall).
  static bool worth_patching(int syscall_number);

  /// Process `pid`'s library offers `bytes` of stub area at `area`, and its
  /// entries from `entries` on (fastpath_abi.h, OP_SYSCALL_STUBS).
  void offer_stubs(pid_t pid, uint64_t area, uint64_t bytes, uint64_t entries);
  /// A new process by fork has its parent's patched code and stubs.
  void note_fork(pid_t parent, pid_t child);
  /// Process `pid` exec'd or exited: its code is gone.
  void forget(pid_t pid);
  /// A signal handler runs in `pid` with a frame that returns to `rip`.
  void note_signal_return(pid_t pid, uint64_t rip);

  /// Tells whether a thread of the process other than the patching one
  /// stands at an address in [start, end).
  using Occupied = std::function<bool(uint64_t start, uint64_t end)>;

  /// The patch for the site whose syscall `syscall_number` thread `tid` of
  /// process `pid` just made (rip past it), if it is to be patched now.
  /// Errors: io_error (/proc or memory unreadable).
  Result<std::optional<SitePatch>> plan(pid_t tid, pid_t pid, int syscall_number, uint64_t rip,
                                        const Occupied& occupied);
  /// The planned patch was made.
  void made(pid_t pid, const SitePatch& patch);

  uint64_t sites_patched() const { return sites_patched_; }

 private:
  struct Process {
    uint64_t area = 0;
    uint64_t area_bytes = 0;
    uint64_t entries = 0;
    uint64_t stubs_used = 0;
    std::set<uint64_t> settled;         // sites patched, or never to be
    std::set<uint64_t> signal_returns;  // return addresses of handlers' frames
  };
  // Where a mapped file's sites are, by file offset; per (path, inode).
  const std::vector<patch::SyscallSite>* sites_of(const std::string& path, uint64_t inode);

  std::map<pid_t, Process> processes_;
  std::map<std::pair<std::string, uint64_t>, std::vector<patch::SyscallSite>> scans_;
  uint64_t sites_patched_ = 0;
};

}  // namespace repro::tracer
