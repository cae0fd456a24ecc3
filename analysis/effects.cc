#include "analysis/effects.h"

#include "core/fastpath/syscall_batch.h"
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "analysis/socket_address.h"
#include "core/fastpath/syscall_batch.h"
#include "core/format/trace_reader.h"
#include "core/syscalls/syscall_table.h"

namespace repro::analysis {
namespace {

// close_range's flags (linux/close_range.h), absent from older libc headers.
constexpr uint64_t kCloseRangeCloexec = 1u << 2;

const std::string* find_input(const format::Event& event, int index) {
  for (const format::SyscallInput& input : event.inputs) {
    if (input.arg_index == index) {
      return &input.bytes;
    }
  }
  return nullptr;
}

// The bytes the kernel wrote at `address` during the syscall, if any.
const std::string* find_write(const format::Event& event, uint64_t address) {
  for (const format::MemoryWrite& write : event.writes) {
    if (write.address == address && address != 0) {
      return &write.bytes;
    }
  }
  return nullptr;
}

std::string error_name(int64_t result) {
  const char* name = strerrorname_np(static_cast<int>(-result));
  return name ? name : fmt::format("errno {}", -result);
}

std::string protocol_name(int family, int type) {
  bool inet = family == AF_INET || family == AF_INET6;
  switch (type) {
    case SOCK_STREAM:
      return inet ? "tcp" : "stream";
    case SOCK_DGRAM:
      return inet ? "udp" : "dgram";
    case SOCK_SEQPACKET:
      return "seqpacket";
    case SOCK_RAW:
      return "raw";
    default:
      return fmt::format("type {}", type);
  }
}

int fd_arg(const format::Event& event, int index) { return static_cast<int>(event.args[index]); }

}  // namespace

const char* endpoint_role_name(Endpoint::Role role) {
  switch (role) {
    case Endpoint::Role::kConnected:
      return "connected";
    case Endpoint::Role::kListening:
      return "listening";
    case Endpoint::Role::kBound:
      return "bound";
    case Endpoint::Role::kSentTo:
      return "sent-to";
    case Endpoint::Role::kReceivedFrom:
      return "received-from";
  }
  return "?";
}

bool FileEffect::changed() const {
  return creation != Creation::kNone || opened_for_writing || truncated || maybe_truncated ||
         writes > 0 || deleted || !renamed_to.empty() || !renamed_from.empty() ||
         !symlink_target.empty() || !hard_link_of.empty() || !mode.empty() || owner_changed ||
         times_changed || mapped_shared_writable;
}

const char* path_group_name(PathGroup group) {
  switch (group) {
    case PathGroup::kProc:
      return "proc";
    case PathGroup::kSys:
      return "sys";
    case PathGroup::kDev:
      return "dev";
    case PathGroup::kLibraries:
      return "libraries";
    case PathGroup::kNone:
      break;
  }
  return "";
}

PathGroup path_group(const std::string& path) {
  auto under = [&](const char* directory) {
    size_t length = std::strlen(directory);
    return path.compare(0, length, directory) == 0 &&
           (path.size() == length || path[length] == '/');
  };
  if (under("/proc")) {
    return PathGroup::kProc;
  }
  if (under("/sys")) {
    return PathGroup::kSys;
  }
  if (under("/dev")) {
    return PathGroup::kDev;
  }
  // What the loader, libc and language runtimes read to start: shared
  // libraries and their caches, locale data, modules of interpreters.
  for (const char* directory :
       {"/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib",
        "/usr/share/locale", "/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/ld.so.conf",
        "/etc/ld.so.conf.d", "/etc/locale.alias", "/usr/share/zoneinfo", "/etc/localtime",
        "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf"}) {
    if (under(directory)) {
      return PathGroup::kLibraries;
    }
  }
  // Shared objects and interpreters' modules installed elsewhere (a
  // virtualenv, pyenv, /opt): what starting the runtime reads, not data.
  for (const char* part : {".so.", "/lib/python", "/site-packages/", "/__pycache__/"}) {
    if (path.find(part) != std::string::npos) {
      return PathGroup::kLibraries;
    }
  }
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0) {
    return PathGroup::kLibraries;
  }
  return PathGroup::kNone;
}

EffectsTracker::EffectsTracker(std::string initial_cwd) : initial_cwd_(std::move(initial_cwd)) {}

void EffectsTracker::observe(const format::Event& event) {
  switch (event.kind) {
    case format::EventKind::kThreadStart:
      recorded_tids_.insert(event.recorded_tid);
      ++effects_.threads;
      if (effects_.threads == 1) {
        processes_.start_root(event.thread, event.recorded_tid, initial_cwd_);
        ++effects_.processes;
      } else {
        processes_.start_thread(event.thread, event.parent_thread, event.recorded_tid,
                                event.clone_flags);
        if ((event.clone_flags & CLONE_THREAD) == 0) {
          ++effects_.processes;
        }
      }
      break;
    case format::EventKind::kExec: {
      processes_.exec(event.thread);
      ExecutedProgram program;
      program.pid = processes_.pid(event.thread);
      program.thread = event.thread;
      program.path = event.path;
      size_t start = 0;
      while (start < event.data.size()) {
        size_t end = event.data.find('\0', start);
        if (end == std::string::npos) {
          end = event.data.size();
        }
        program.argv.push_back(event.data.substr(start, end - start));
        start = end + 1;
      }
      effects_.programs.push_back(std::move(program));
      break;
    }
    case format::EventKind::kSyscall:
      on_syscall(event);
      break;
    case format::EventKind::kSyscallBatch: {
      // The syscalls the fast path logged without a stop (stats, reads,
      // writes of regular files...), each as the event a stop would log.
      // A batch that does not decode is left out: the reader checked its
      // frame, and replay would refuse it.
      auto syscalls = fastpath::parse_syscall_batch(event.data);
      if (!syscalls.is_ok()) {
        ++effects_.undecoded_batches;
        break;
      }
      format::Event single;
      for (const fastpath::BatchedSyscall& syscall : *syscalls) {
        fastpath::to_syscall_event(syscall, event.thread, &single);
        on_syscall(single);
      }
      break;
    }
    default:
      break;
  }
}

bool EffectsTracker::input_path(const format::Event& event, int dirfd, int index,
                                ResolvedPath* out) {
  const std::string* bytes = find_input(event, index);
  if (bytes == nullptr) {
    ++effects_.missing_inputs;
    return false;
  }
  *out = processes_.resolve(event.thread, dirfd, *bytes);
  return true;
}

FileEffect& EffectsTracker::file(const ResolvedPath& path) {
  FileEffect& effect = effects_.files[path.path];
  if (effect.path.empty()) {
    effect.path = path.path;
    effect.resolved = path.resolved;
    effect.group = path.resolved ? path_group(path.path) : PathGroup::kNone;
  }
  return effect;
}

Endpoint& EffectsTracker::endpoint(Endpoint::Role role, const OpenFile& socket,
                                   const std::string& address, std::string* key) {
  std::string protocol = protocol_name(socket.family, socket.socket_type);
  *key = fmt::format("{} {} {}", endpoint_role_name(role), protocol, address);
  Endpoint& endpoint = effects_.endpoints[*key];
  if (endpoint.address.empty()) {
    endpoint.role = role;
    endpoint.family = socket.family;
    endpoint.protocol = protocol;
    endpoint.address = address;
  }
  return endpoint;
}

void EffectsTracker::note_existence(const format::Event& event, int dirfd, int path_arg) {
  if (event.result != 0 && event.result != -ENOENT && event.result != -ENOTDIR) {
    return;
  }
  if (const std::string* bytes = find_input(event, path_arg)) {
    ResolvedPath path = processes_.resolve(event.thread, dirfd, *bytes);
    if (path.resolved) {
      exists_[path.path] = event.result == 0;
    }
  }
}

void EffectsTracker::on_syscall(const format::Event& event) {
  if (syscalls::is_restart_result(event.result)) {
    return;  // interrupted: it did nothing, and is made again
  }
  bool handled = false;
  on_fd_syscall(event, &handled);
  if (!handled) {
    on_file_syscall(event, &handled);
  }
  if (!handled) {
    on_socket_syscall(event, &handled);
  }
  if (!handled) {
    on_signal_syscall(event);
  }
}

void EffectsTracker::open_file(const format::Event& event, int dirfd, int path_arg, int flags) {
  ResolvedPath path;
  const std::string* bytes = find_input(event, path_arg);
  if (event.result < 0) {
    if (bytes != nullptr && (event.result == -ENOENT) && (flags & O_CREAT) == 0) {
      path = processes_.resolve(event.thread, dirfd, *bytes);
      if (path.resolved) {
        exists_[path.path] = false;
      }
    } else if (bytes != nullptr && event.result == -EEXIST) {
      path = processes_.resolve(event.thread, dirfd, *bytes);
      if (path.resolved) {
        exists_[path.path] = true;
      }
    }
    return;
  }
  int fd = static_cast<int>(event.result);
  if (!input_path(event, dirfd, path_arg, &path)) {
    processes_.close(event.thread, fd);
    return;
  }
  auto open_file = std::make_shared<OpenFile>();
  open_file->kind = OpenFile::Kind::kFile;
  open_file->path = path.path;
  open_file->path_resolved = path.resolved;
  open_file->open_flags = flags;
  processes_.install(event.thread, fd, open_file, (flags & O_CLOEXEC) != 0);

  FileEffect& effect = file(path);
  int access = flags & O_ACCMODE;
  bool writing = access == O_WRONLY || access == O_RDWR;
  if (access == O_RDONLY || access == O_RDWR) {
    effect.read = true;
  }
  if (flags & O_DIRECTORY) {
    effect.is_directory = true;
  }
  auto known = path.resolved ? exists_.find(path.path) : exists_.end();
  bool existed_known = known != exists_.end();
  if ((flags & O_CREAT) && effect.creation == Creation::kNone) {
    if ((flags & O_EXCL) || (existed_known && !known->second)) {
      effect.creation = Creation::kCreated;
    } else if (!existed_known) {
      effect.creation = Creation::kIfMissing;
    }
  }
  if ((flags & O_TRUNC) && writing) {
    if (effect.creation == Creation::kIfMissing && !existed_known) {
      effect.maybe_truncated = true;
    } else if (!(existed_known && !known->second)) {
      effect.truncated = true;
    }
  }
  if (writing) {
    effect.opened_for_writing = true;
  }
  if (path.resolved) {
    exists_[path.path] = true;
  }
}

void EffectsTracker::count_io(uint32_t thread, int fd, uint64_t bytes, bool written) {
  std::shared_ptr<OpenFile> open_file = processes_.lookup(thread, fd);
  if (open_file == nullptr) {
    ++effects_.unknown_descriptor_calls;
    return;
  }
  switch (open_file->kind) {
    case OpenFile::Kind::kFile: {
      FileEffect& effect = file({open_file->path, open_file->path_resolved});
      if (written) {
        effect.bytes_written += bytes;
        effect.writes += bytes > 0 ? 1 : 0;  // copy_file_range's final 0 wrote nothing
      } else {
        effect.read = true;
        effect.bytes_read += bytes;
      }
      break;
    }
    case OpenFile::Kind::kInherited:
      if (!written) {
        effects_.stdin_bytes += bytes;
      } else if (open_file->path == "stderr") {
        effects_.stderr_bytes += bytes;
      } else {
        effects_.stdout_bytes += bytes;
      }
      break;
    case OpenFile::Kind::kSocket:
      if (auto it = effects_.endpoints.find(open_file->endpoint); it != effects_.endpoints.end()) {
        (written ? it->second.bytes_sent : it->second.bytes_received) += bytes;
      }
      break;
    case OpenFile::Kind::kPipe:
    case OpenFile::Kind::kOther:
      break;
  }
}

void EffectsTracker::on_fd_syscall(const format::Event& event, bool* handled) {
  *handled = true;
  uint32_t thread = event.thread;
  int64_t result = event.result;
  const auto& args = event.args;
  switch (event.syscall_number) {
    case SYS_open:
      open_file(event, AT_FDCWD, 0, static_cast<int>(args[1]));
      return;
    case SYS_openat:
      open_file(event, fd_arg(event, 0), 1, static_cast<int>(args[2]));
      return;
    case SYS_creat:
      open_file(event, AT_FDCWD, 0, O_CREAT | O_WRONLY | O_TRUNC);
      return;
    case SYS_openat2:
      // The flags are in struct open_how, which the trace does not keep:
      // counted as a read-only open; its writes still count.
      open_file(event, fd_arg(event, 0), 1, O_RDONLY);
      return;
    case SYS_close:
      if (result == 0) {
        processes_.close(thread, fd_arg(event, 0));
      }
      return;
    case SYS_close_range:
      if (result == 0) {
        processes_.close_range(thread, args[0], args[1], (args[2] & kCloseRangeCloexec) != 0);
      }
      return;
    case SYS_dup:
      if (result >= 0) {
        processes_.duplicate(thread, fd_arg(event, 0), static_cast<int>(result), false);
      }
      return;
    case SYS_dup2:
    case SYS_dup3:
      if (result >= 0 && args[0] != args[1]) {
        bool cloexec = event.syscall_number == SYS_dup3 && (args[2] & O_CLOEXEC);
        processes_.duplicate(thread, fd_arg(event, 0), static_cast<int>(result), cloexec);
      }
      return;
    case SYS_fcntl:
      if (result >= 0 && (args[1] == F_DUPFD || args[1] == F_DUPFD_CLOEXEC)) {
        processes_.duplicate(thread, fd_arg(event, 0), static_cast<int>(result),
                             args[1] == F_DUPFD_CLOEXEC);
      } else if (result >= 0 && args[1] == F_SETFD) {
        processes_.set_cloexec(thread, fd_arg(event, 0), (args[2] & FD_CLOEXEC) != 0);
      }
      return;
    case SYS_ioctl:
      if (result == 0 && (args[1] == FIOCLEX || args[1] == FIONCLEX)) {
        processes_.set_cloexec(thread, fd_arg(event, 0), args[1] == FIOCLEX);
      }
      return;
    case SYS_read:
    case SYS_pread64:
    case SYS_readv:
    case SYS_preadv:
    case SYS_preadv2:
      if (result >= 0) {
        count_io(thread, fd_arg(event, 0), static_cast<uint64_t>(result), false);
      }
      return;
    case SYS_write:
    case SYS_pwrite64:
    case SYS_writev:
    case SYS_pwritev:
    case SYS_pwritev2:
      if (result >= 0) {
        count_io(thread, fd_arg(event, 0), static_cast<uint64_t>(result), true);
      }
      return;
    case SYS_sendfile:  // (out_fd, in_fd, ...)
      if (result >= 0) {
        count_io(thread, fd_arg(event, 1), static_cast<uint64_t>(result), false);
        count_io(thread, fd_arg(event, 0), static_cast<uint64_t>(result), true);
      }
      return;
    case SYS_copy_file_range:  // (in_fd, off, out_fd, off, ...)
    case SYS_splice:
      if (result >= 0) {
        count_io(thread, fd_arg(event, 0), static_cast<uint64_t>(result), false);
        count_io(thread, fd_arg(event, 2), static_cast<uint64_t>(result), true);
      }
      return;
    case SYS_getdents:
    case SYS_getdents64:
      if (result >= 0) {
        auto open_file = processes_.lookup(thread, fd_arg(event, 0));
        if (open_file && open_file->kind == OpenFile::Kind::kFile) {
          FileEffect& effect = file({open_file->path, open_file->path_resolved});
          effect.listed = true;
          effect.is_directory = true;
        }
      }
      return;
    case SYS_ftruncate:
    case SYS_fchmod:
    case SYS_fchown:
      if (result == 0) {
        auto open_file = processes_.lookup(thread, fd_arg(event, 0));
        if (open_file && open_file->kind == OpenFile::Kind::kFile) {
          FileEffect& effect = file({open_file->path, open_file->path_resolved});
          if (event.syscall_number == SYS_ftruncate) {
            effect.truncated = true;
          } else if (event.syscall_number == SYS_fchmod) {
            effect.mode = fmt::format("{:04o}", args[1] & 07777);
          } else {
            effect.owner_changed = true;
          }
        }
      }
      return;
    case SYS_fchdir:
      if (result == 0) {
        auto open_file = processes_.lookup(thread, fd_arg(event, 0));
        bool known = open_file && open_file->kind == OpenFile::Kind::kFile;
        processes_.change_directory(
            thread, {known ? open_file->path : "", known && open_file->path_resolved});
      }
      return;
    case SYS_mmap:
      if (result >= 0 && (args[3] & MAP_SHARED) && (args[2] & PROT_WRITE)) {
        auto open_file = processes_.lookup(thread, fd_arg(event, 4));
        if (open_file && open_file->kind == OpenFile::Kind::kFile) {
          file({open_file->path, open_file->path_resolved}).mapped_shared_writable = true;
        }
      }
      return;
    case SYS_pipe:
    case SYS_pipe2:
      if (result == 0) {
        if (const std::string* fds = find_write(event, args[0]); fds && fds->size() == 8) {
          int pair[2];
          std::memcpy(pair, fds->data(), sizeof pair);
          bool cloexec = event.syscall_number == SYS_pipe2 && (args[1] & O_CLOEXEC);
          for (int fd : pair) {
            auto pipe = std::make_shared<OpenFile>();
            pipe->kind = OpenFile::Kind::kPipe;
            processes_.install(thread, fd, pipe, cloexec);
          }
        }
      }
      return;
    case SYS_eventfd:
    case SYS_eventfd2:
    case SYS_timerfd_create:
    case SYS_signalfd:
    case SYS_signalfd4:
    case SYS_epoll_create:
    case SYS_epoll_create1:
    case SYS_inotify_init:
    case SYS_inotify_init1:
    case SYS_memfd_create:
    case SYS_userfaultfd:
    case SYS_perf_event_open:
    case SYS_pidfd_open:
      if (result >= 0) {
        auto pidfd = std::make_shared<OpenFile>();
        pidfd->pidfd_pid = static_cast<int32_t>(args[0]);
        processes_.install(thread, static_cast<int>(result), pidfd, true);  // always O_CLOEXEC
      }
      return;
    case SYS_pidfd_getfd:
    case SYS_fanotify_init:
    case SYS_open_by_handle_at:
      // Descriptors that name no path or endpoint: their reads and writes
      // touch nothing outside (memfd is memory).
      if (result >= 0) {
        processes_.install(thread, static_cast<int>(result), std::make_shared<OpenFile>(), false);
      }
      return;
    default:
      *handled = false;
      return;
  }
}

void EffectsTracker::on_file_syscall(const format::Event& event, bool* handled) {
  *handled = true;
  uint32_t thread = event.thread;
  const auto& args = event.args;
  int number = event.syscall_number;
  // Lookups first: they say whether a path existed, which tells a later
  // O_CREAT apart from a creation.
  switch (number) {
    case SYS_stat:
    case SYS_lstat:
    case SYS_access:
    case SYS_readlink:
      note_existence(event, AT_FDCWD, 0);
      return;
    case SYS_newfstatat:
    case SYS_statx:
    case SYS_faccessat:
    case SYS_faccessat2:
    case SYS_readlinkat:
      note_existence(event, fd_arg(event, 0), 1);
      return;
    default:
      break;
  }
  if (event.result < 0) {
    *handled = number == SYS_unlink || number == SYS_unlinkat || number == SYS_rmdir ||
               number == SYS_rename || number == SYS_renameat || number == SYS_renameat2 ||
               number == SYS_mkdir || number == SYS_mkdirat || number == SYS_chdir;
    return;
  }
  ResolvedPath path;
  ResolvedPath other;
  switch (number) {
    case SYS_unlink:
    case SYS_rmdir:
      if (input_path(event, AT_FDCWD, 0, &path)) {
        FileEffect& effect = file(path);
        effect.deleted = true;
        effect.is_directory = effect.is_directory || number == SYS_rmdir;
        exists_[path.path] = false;
      }
      return;
    case SYS_unlinkat:
      if (input_path(event, fd_arg(event, 0), 1, &path)) {
        FileEffect& effect = file(path);
        effect.deleted = true;
        effect.is_directory = effect.is_directory || (args[2] & AT_REMOVEDIR);
        exists_[path.path] = false;
      }
      return;
    case SYS_rename:
    case SYS_renameat:
    case SYS_renameat2: {
      bool at = number != SYS_rename;
      int old_dirfd = at ? fd_arg(event, 0) : AT_FDCWD;
      int new_dirfd = at ? fd_arg(event, 2) : AT_FDCWD;
      if (input_path(event, old_dirfd, at ? 1 : 0, &path) &&
          input_path(event, new_dirfd, at ? 3 : 1, &other)) {
        file(path).renamed_to.push_back(other.path);
        file(other).renamed_from.push_back(path.path);
        exists_[path.path] = false;
        exists_[other.path] = true;
      }
      return;
    }
    case SYS_mkdir:
    case SYS_mkdirat:
    case SYS_mknod:
    case SYS_mknodat: {
      bool at = number == SYS_mkdirat || number == SYS_mknodat;
      if (input_path(event, at ? fd_arg(event, 0) : AT_FDCWD, at ? 1 : 0, &path)) {
        FileEffect& effect = file(path);
        effect.creation = Creation::kCreated;
        effect.is_directory = number == SYS_mkdir || number == SYS_mkdirat;
        exists_[path.path] = true;
      }
      return;
    }
    case SYS_symlink:
    case SYS_symlinkat: {
      bool at = number == SYS_symlinkat;
      const std::string* target = find_input(event, 0);
      if (input_path(event, at ? fd_arg(event, 1) : AT_FDCWD, at ? 2 : 1, &path)) {
        FileEffect& effect = file(path);
        effect.creation = Creation::kCreated;
        effect.symlink_target = target ? *target : "?";
        exists_[path.path] = true;
      }
      return;
    }
    case SYS_link:
    case SYS_linkat: {
      bool at = number == SYS_linkat;
      if (input_path(event, at ? fd_arg(event, 0) : AT_FDCWD, at ? 1 : 0, &other) &&
          input_path(event, at ? fd_arg(event, 2) : AT_FDCWD, at ? 3 : 1, &path)) {
        FileEffect& effect = file(path);
        effect.creation = Creation::kCreated;
        effect.hard_link_of = other.path;
        exists_[path.path] = true;
      }
      return;
    }
    case SYS_truncate:
      if (input_path(event, AT_FDCWD, 0, &path)) {
        file(path).truncated = true;
      }
      return;
    case SYS_chmod:
    case SYS_fchmodat:
    case 452: {  // fchmodat2 (Linux 6.6), absent from older headers
      bool at = number != SYS_chmod;
      if (input_path(event, at ? fd_arg(event, 0) : AT_FDCWD, at ? 1 : 0, &path)) {
        file(path).mode = fmt::format("{:04o}", args[at ? 2 : 1] & 07777);
      }
      return;
    }
    case SYS_chown:
    case SYS_lchown:
    case SYS_fchownat: {
      bool at = number == SYS_fchownat;
      if (input_path(event, at ? fd_arg(event, 0) : AT_FDCWD, at ? 1 : 0, &path)) {
        file(path).owner_changed = true;
      }
      return;
    }
    case SYS_utime:
    case SYS_utimes:
      if (input_path(event, AT_FDCWD, 0, &path)) {
        file(path).times_changed = true;
      }
      return;
    case SYS_utimensat:
    case SYS_futimesat:
      if (args[1] == 0) {  // utimensat(fd, NULL, ...): futimens
        auto open_file = processes_.lookup(thread, fd_arg(event, 0));
        if (open_file && open_file->kind == OpenFile::Kind::kFile) {
          file({open_file->path, open_file->path_resolved}).times_changed = true;
        }
      } else if (input_path(event, fd_arg(event, 0), 1, &path)) {
        file(path).times_changed = true;
      }
      return;
    case SYS_chdir:
      if (input_path(event, AT_FDCWD, 0, &path)) {
        processes_.change_directory(thread, path);
      }
      return;
    default:
      *handled = false;
      return;
  }
}

void EffectsTracker::on_socket_syscall(const format::Event& event, bool* handled) {
  *handled = true;
  uint32_t thread = event.thread;
  const auto& args = event.args;
  int64_t result = event.result;
  switch (event.syscall_number) {
    case SYS_socket:
      if (result >= 0) {
        auto socket = std::make_shared<OpenFile>();
        socket->kind = OpenFile::Kind::kSocket;
        socket->family = static_cast<int>(args[0]);
        socket->socket_type = static_cast<int>(args[1] & 0xf);
        processes_.install(thread, static_cast<int>(result), socket, (args[1] & SOCK_CLOEXEC) != 0);
      }
      return;
    case SYS_socketpair:
      // A connected pair inside the run: like a pipe, nothing outside.
      if (result == 0) {
        if (const std::string* fds = find_write(event, args[3]); fds && fds->size() == 8) {
          int pair[2];
          std::memcpy(pair, fds->data(), sizeof pair);
          for (int fd : pair) {
            auto pipe = std::make_shared<OpenFile>();
            pipe->kind = OpenFile::Kind::kPipe;
            processes_.install(thread, fd, pipe, (args[1] & SOCK_CLOEXEC) != 0);
          }
        }
      }
      return;
    case SYS_connect:
    case SYS_bind: {
      auto socket = processes_.lookup(thread, fd_arg(event, 0));
      const std::string* bytes = find_input(event, 1);
      if (bytes == nullptr) {
        ++effects_.missing_inputs;
        return;
      }
      if (socket == nullptr || socket->kind != OpenFile::Kind::kSocket) {
        ++effects_.unknown_descriptor_calls;
        return;
      }
      SocketAddress address = parse_socket_address(*bytes);
      if (!address.unix_path.empty()) {
        ResolvedPath path = processes_.resolve(thread, AT_FDCWD, address.unix_path);
        address.text = path.path;
        if (event.syscall_number == SYS_bind && result == 0) {
          FileEffect& effect = file(path);
          effect.creation = Creation::kCreated;
          effect.is_socket = true;
        }
      }
      bool connect = event.syscall_number == SYS_connect;
      std::string key;
      Endpoint& peer = endpoint(connect ? Endpoint::Role::kConnected : Endpoint::Role::kBound,
                                *socket, address.text, &key);
      if (result == 0 || (connect && result == -EINPROGRESS)) {
        if (connect) {
          ++peer.connections;
          socket->endpoint = key;
        } else {
          ++peer.binds;
          socket->bound_endpoint = key;
          if (socket->endpoint.empty()) {
            socket->endpoint = key;
          }
        }
      } else {
        ++peer.failures[error_name(result)];
      }
      return;
    }
    case SYS_listen: {
      auto socket = processes_.lookup(thread, fd_arg(event, 0));
      if (result != 0 || socket == nullptr || socket->kind != OpenFile::Kind::kSocket) {
        return;
      }
      std::string address = "(an address the kernel chose)";
      if (auto bound = effects_.endpoints.find(socket->bound_endpoint);
          bound != effects_.endpoints.end()) {
        address = bound->second.address;
        // It is listed as listening, not also as merely bound.
        if (--bound->second.binds == 0 && bound->second.failures.empty() &&
            bound->second.bytes_sent == 0 && bound->second.bytes_received == 0) {
          effects_.endpoints.erase(bound);
        }
        socket->bound_endpoint.clear();
      }
      std::string key;
      endpoint(Endpoint::Role::kListening, *socket, address, &key);
      socket->endpoint = key;
      return;
    }
    case SYS_accept:
    case SYS_accept4: {
      auto listener = processes_.lookup(thread, fd_arg(event, 0));
      if (result < 0) {
        return;
      }
      auto connection = std::make_shared<OpenFile>();
      connection->kind = OpenFile::Kind::kSocket;
      if (listener && listener->kind == OpenFile::Kind::kSocket) {
        *connection = *listener;
        connection->bound_endpoint.clear();
        if (auto it = effects_.endpoints.find(listener->endpoint); it != effects_.endpoints.end()) {
          ++it->second.connections;
          if (const std::string* peer = find_write(event, args[1])) {
            it->second.peers.insert(parse_socket_address(*peer).text);
          }
        }
      }
      bool cloexec = event.syscall_number == SYS_accept4 && (args[3] & SOCK_CLOEXEC);
      processes_.install(thread, static_cast<int>(result), connection, cloexec);
      return;
    }
    case SYS_sendto:
    case SYS_sendmsg: {
      if (result < 0) {
        return;
      }
      auto socket = processes_.lookup(thread, fd_arg(event, 0));
      const std::string* destination =
          find_input(event, event.syscall_number == SYS_sendto ? 4 : 1);
      if (socket && socket->kind == OpenFile::Kind::kSocket && destination &&
          !destination->empty()) {
        SocketAddress address = parse_socket_address(*destination);
        std::string key;
        endpoint(Endpoint::Role::kSentTo, *socket, address.text, &key).bytes_sent +=
            static_cast<uint64_t>(result);
      } else {
        count_io(thread, fd_arg(event, 0), static_cast<uint64_t>(result), true);
      }
      return;
    }
    case SYS_recvfrom:
    case SYS_recvmsg: {
      if (result < 0) {
        return;
      }
      auto socket = processes_.lookup(thread, fd_arg(event, 0));
      const std::string* source = nullptr;
      if (event.syscall_number == SYS_recvfrom) {
        source = find_write(event, args[4]);
      } else if (const std::string* header = find_write(event, args[1]);
                 header && header->size() >= sizeof(msghdr)) {
        // The kernel wrote the msghdr back (msg_namelen); msg_name says
        // where the sender's address went.
        msghdr message;
        std::memcpy(&message, header->data(), sizeof message);
        if (message.msg_namelen > 0) {
          source = find_write(event, reinterpret_cast<uint64_t>(message.msg_name));
        }
      }
      bool connected = socket && !socket->endpoint.empty() &&
                       socket->endpoint.rfind(endpoint_role_name(Endpoint::Role::kBound), 0) != 0;
      if (socket && socket->kind == OpenFile::Kind::kSocket && source && !connected) {
        SocketAddress address = parse_socket_address(*source);
        std::string key;
        endpoint(Endpoint::Role::kReceivedFrom, *socket, address.text, &key).bytes_received +=
            static_cast<uint64_t>(result);
      } else {
        count_io(thread, fd_arg(event, 0), static_cast<uint64_t>(result), false);
      }
      return;
    }
    default:
      *handled = false;
      return;
  }
}

void EffectsTracker::on_signal_syscall(const format::Event& event) {
  SignalSent sent;
  sent.from_pid = processes_.pid(event.thread);
  sent.result = event.result;
  switch (event.syscall_number) {
    case SYS_kill:
    case SYS_rt_sigqueueinfo:
      sent.target = static_cast<int32_t>(event.args[0]);
      sent.signal = static_cast<int>(event.args[1]);
      break;
    case SYS_tkill:
      sent.target = static_cast<int32_t>(event.args[0]);
      sent.signal = static_cast<int>(event.args[1]);
      break;
    case SYS_tgkill:
    case SYS_rt_tgsigqueueinfo:
      sent.target = static_cast<int32_t>(event.args[1]);
      sent.signal = static_cast<int>(event.args[2]);
      break;
    case SYS_pidfd_send_signal: {
      auto pidfd = processes_.lookup(event.thread, fd_arg(event, 0));
      sent.target = pidfd ? pidfd->pidfd_pid : 0;  // 0: a pidfd the trace does not explain
      sent.signal = static_cast<int>(event.args[1]);
      break;
    }
    default:
      return;
  }
  sent.syscall = syscalls::syscall_name(event.syscall_number);
  signals_.push_back(std::move(sent));
}

Effects EffectsTracker::finish() const {
  Effects effects = effects_;
  for (const SignalSent& sent : signals_) {
    SignalSent outside = sent;
    bool by_pid = sent.syscall == "kill" || sent.syscall == "rt_sigqueueinfo";
    if (by_pid && sent.target == 0) {
      outside.target_description =
          "its own process group (may hold processes outside the recording)";
    } else if (by_pid && sent.target == -1) {
      outside.target_description = "every process it may signal";
    } else if (by_pid && sent.target < 0) {
      if (recorded_tids_.count(static_cast<int32_t>(-sent.target)) != 0) {
        continue;  // a group the recording made (its leader is recorded)
      }
      outside.target_description = fmt::format("process group {}", -sent.target);
    } else if (sent.syscall == "pidfd_send_signal" && sent.target == 0) {
      outside.target_description = "a process named by a pidfd of unknown origin";
    } else if (recorded_tids_.count(static_cast<int32_t>(sent.target)) != 0) {
      continue;
    } else {
      outside.target_description = fmt::format(
          "{} {}", by_pid || sent.syscall == "pidfd_send_signal" ? "pid" : "thread", sent.target);
    }
    effects.outside_signals.push_back(std::move(outside));
  }
  return effects;
}

Result<Effects> collect_effects(const std::string& trace_dir) {
  REPRO_ASSIGN_OR_RETURN(auto reader, format::TraceReader::open(trace_dir));
  if (reader->header().format_version < 7) {
    return Status::error(StatusCode::kVersionMismatch,
                         fmt::format("{}: trace format {} keeps no syscall paths or addresses "
                                     "(format 7 and "
                                     "later do): record it again with this repro",
                                     trace_dir, reader->header().format_version));
  }
  reader->tolerate_missing_file_copies();  // the bytes read are not needed, only
                                           // their count
  EffectsTracker tracker(reader->header().cwd);
  format::Event event;
  for (;;) {
    REPRO_ASSIGN_OR_RETURN(bool more, reader->next(&event));
    if (!more) {
      break;
    }
    tracker.observe(event);
  }
  return tracker.finish();
}

}  // namespace repro::analysis
