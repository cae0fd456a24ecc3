#include "tracer/syscall_site_patcher.h"

#include <sys/syscall.h>

#include <algorithm>

#include "core/os/proc_maps.h"
#include "core/os/tracee.h"

namespace repro::tracer {

bool SyscallSitePatcher::worth_patching(int syscall_number) {
  switch (syscall_number) {
    case SYS_getpid:
    case SYS_getppid:
    case SYS_gettid:
    case SYS_read:
    case SYS_pread64:
    case SYS_write:
    case SYS_pwrite64:
    case SYS_writev:
    case SYS_pwritev:
    case SYS_sendto:
    case SYS_sendmsg:
    case SYS_recvfrom:
    case SYS_poll:
    case SYS_epoll_wait:
    case SYS_lseek:
    case SYS_fstat:
    case SYS_newfstatat:
    case SYS_statx:
    case SYS_access:
    case SYS_getdents64:
    case SYS_close:
    case SYS_openat:
    case SYS_fcntl:
    case SYS_readlink:
    case SYS_readlinkat:
    case SYS_getxattr:
    case SYS_lgetxattr:
    case SYS_fgetxattr:
      return true;
    default:
      return false;
  }
}

void SyscallSitePatcher::offer_stubs(pid_t pid, uint64_t area, uint64_t bytes, uint64_t entries) {
  Process& process = processes_[pid];
  process = Process{};
  process.area = area;
  process.area_bytes = bytes;
  process.entries = entries;
}

void SyscallSitePatcher::note_fork(pid_t parent, pid_t child) {
  processes_.erase(child);  // an earlier process of that pid
  auto found = processes_.find(parent);
  if (found != processes_.end()) {
    processes_[child] = found->second;
  }
}

void SyscallSitePatcher::forget(pid_t pid) { processes_.erase(pid); }

void SyscallSitePatcher::note_signal_return(pid_t pid, uint64_t rip) {
  auto found = processes_.find(pid);
  if (found != processes_.end()) {
    found->second.signal_returns.insert(rip);
  }
}

const std::vector<patch::SyscallSite>* SyscallSitePatcher::sites_of(const std::string& path,
                                                                    uint64_t inode) {
  auto key = std::make_pair(path, inode);
  auto found = scans_.find(key);
  if (found == scans_.end()) {
    auto scan = patch::scan_for_syscall_sites(path);
    // A file that cannot be read or decoded has no sites.
    found = scans_.emplace(key, scan.is_ok() ? std::move(*scan) : std::vector<patch::SyscallSite>{})
                .first;
    std::sort(found->second.begin(), found->second.end(),
              [](const patch::SyscallSite& a, const patch::SyscallSite& b) {
                return a.file_offset < b.file_offset;
              });
  }
  return &found->second;
}

Result<std::optional<SitePatch>> SyscallSitePatcher::plan(pid_t tid, pid_t pid, int syscall_number,
                                                          uint64_t rip, const Occupied& occupied) {
  auto found = processes_.find(pid);
  if (found == processes_.end() || !worth_patching(syscall_number) || rip < 2) {
    return std::optional<SitePatch>{};
  }
  Process& process = found->second;
  const uint64_t site = rip - 2;
  if (process.settled.count(site) != 0) {
    return std::optional<SitePatch>{};
  }
  auto settle = [&] {
    process.settled.insert(site);
    return std::optional<SitePatch>{};
  };
  if (process.stubs_used + 1 > process.area_bytes / patch::kSyscallStubBytes) {
    return settle();
  }
  REPRO_ASSIGN_OR_RETURN(std::vector<os::Mapping> mappings, os::read_mappings(pid));
  const os::Mapping* code = nullptr;
  const os::Mapping* library = nullptr;
  for (const os::Mapping& mapping : mappings) {
    if (site >= mapping.start && site < mapping.end) {
      code = &mapping;
    }
    if (process.area >= mapping.start && process.area < mapping.end) {
      library = &mapping;
    }
  }
  if (code == nullptr || library == nullptr || !code->is_file() || !code->executable() ||
      code->name == library->name) {
    return settle();
  }
  const uint64_t file_offset = site - code->start + code->file_offset;
  const std::vector<patch::SyscallSite>* sites = sites_of(code->name, code->inode);
  auto match = std::lower_bound(sites->begin(), sites->end(), file_offset,
                                [](const patch::SyscallSite& s, uint64_t offset) {
                                  return s.file_offset < offset;
                                });
  if (match == sites->end() || match->file_offset != file_offset ||
      match->syscall_number != syscall_number || site + match->length > code->end) {
    return settle();
  }
  SitePatch patch;
  patch.path = code->name;
  patch.site = site;
  patch.original.resize(match->length);
  REPRO_RETURN_IF_ERROR(os::read_memory(tid, site, patch.original.data(), patch.original.size()));
  auto compare = patch::site_compare_at(reinterpret_cast<const uint8_t*>(patch.original.data()) + 2,
                                        patch.original.size() - 2);
  if (patch.original.compare(0, 2, "\x0f\x05") != 0 || !compare ||
      compare->first != match->compare) {
    return settle();  // not the file's bytes any more
  }
  auto signal_return = process.signal_returns.upper_bound(site);
  if (signal_return != process.signal_returns.end() && *signal_return < site + match->length) {
    return settle();
  }
  if (occupied(site + 1, site + match->length)) {
    return std::optional<SitePatch>{};  // next time
  }
  patch.stub = process.area + process.stubs_used * patch::kSyscallStubBytes;
  uint64_t entry = process.entries + match->compare * REPRO_FASTPATH_SITE_ENTRY_STRIDE;
  if (!patch::within_jump_reach(site, patch.stub) ||
      !patch::within_jump_reach(patch.stub, entry)) {
    return settle();
  }
  patch.stub_bytes = patch::syscall_stub_bytes(patch.stub, site + match->length, entry);
  patch.jump_bytes = patch::site_jump_bytes(site, patch.stub, match->length);
  return std::optional<SitePatch>{std::move(patch)};
}

void SyscallSitePatcher::made(pid_t pid, const SitePatch& patch) {
  Process& process = processes_[pid];
  process.settled.insert(patch.site);
  ++process.stubs_used;
  ++sites_patched_;
}

}  // namespace repro::tracer
