#pragma once
// ProcessFiles: the file descriptor tables and working directories of a
// recording's processes, followed from the trace alone, so that a read or a
// write on descriptor N can be traced back to the path or socket it was
// opened on.
//
// It follows what the kernel does: a thread made with CLONE_FILES shares its
// creator's table, any other new thread or process gets a copy (the copies
// share the open file descriptions, as after fork); CLONE_FS likewise shares
// the working directory; exec closes the descriptors marked close-on-exec.
// A descriptor whose origin the trace does not show (inherited from the
// shell that ran the recording, or made by a syscall not followed here) is
// absent from the table, and lookups of it return nullptr: effects on it are
// left out rather than guessed.
//
// Owned by one EffectsTracker; not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace repro::analysis {

/// One open file description (what open, socket, accept or pipe made; dup
/// and fork share it).
struct OpenFile {
  enum class Kind { kFile, kSocket, kPipe, kInherited, kOther };
  Kind kind = Kind::kOther;
  /// kFile: the absolute path (or "?/name" when it could not be resolved);
  /// kInherited: "stdin", "stdout" or "stderr".
  std::string path;
  bool path_resolved = true;
  int open_flags = 0;  // kFile: O_* flags of the open
  // kSocket:
  int family = 0;       // AF_*
  int socket_type = 0;  // SOCK_STREAM, SOCK_DGRAM, ... (without flags)
  /// Key of the endpoint its bytes count toward (connected peer, listening
  /// address of an accepted connection, bound address); empty if none yet.
  std::string endpoint;
  std::string bound_endpoint;  // the "bound" endpoint its bind made, if any
  int32_t pidfd_pid = 0;       // kOther made by pidfd_open: the process it names
};

/// A path resolved against a working directory or directory descriptor.
struct ResolvedPath {
  std::string path;       // absolute and lexically normalised, or "?/" + the relative path
  bool resolved = false;  // false: the directory it is relative to is unknown
};

/// Lexically normalised absolute path: "//" and "." removed, ".." applied
/// (symbolic links are not known from the trace and not followed).
std::string normalize_path(const std::string& absolute);

class ProcessFiles {
 public:
  /// The recording's first thread (index `thread`), kernel tid `tid`, in
  /// `cwd`, with stdin, stdout and stderr inherited.
  void start_root(uint32_t thread, int32_t tid, const std::string& cwd);
  /// A new thread or process `thread` made by `parent` with `clone_flags`.
  /// An unknown parent gives a process with an empty table and unknown cwd.
  void start_thread(uint32_t thread, uint32_t parent, int32_t tid, uint64_t clone_flags);
  /// `thread` finished exec: its process gets a table of its own (exec
  /// unshares it) without the close-on-exec descriptors.
  void exec(uint32_t thread);

  /// Installs `file` at `fd` of `thread`'s table (replacing what was there).
  void install(uint32_t thread, int fd, std::shared_ptr<OpenFile> file, bool cloexec);
  void close(uint32_t thread, int fd);
  /// Closes (or, with `cloexec_only`, marks close-on-exec) fds first..last.
  void close_range(uint32_t thread, uint64_t first, uint64_t last, bool cloexec_only);
  /// new_fd becomes a copy of old_fd (dup2, dup3, F_DUPFD). False if old_fd
  /// is unknown (new_fd is then closed, since its old meaning is gone).
  bool duplicate(uint32_t thread, int old_fd, int new_fd, bool cloexec);
  void set_cloexec(uint32_t thread, int fd, bool cloexec);
  /// The description at `fd`, or nullptr if unknown.
  std::shared_ptr<OpenFile> lookup(uint32_t thread, int fd) const;

  /// Resolves `path` as the kernel would for `thread`: absolute paths as
  /// they are, relative ones against `dirfd` (AT_FDCWD: the cwd).
  ResolvedPath resolve(uint32_t thread, int dirfd, const std::string& path) const;
  /// chdir: the cwd becomes `directory` (resolved); unknown if not resolved.
  void change_directory(uint32_t thread, const ResolvedPath& directory);

  /// The process id (thread-group id) of `thread`, 0 if unknown.
  int32_t pid(uint32_t thread) const;

 private:
  struct Descriptor {
    std::shared_ptr<OpenFile> file;
    bool cloexec = false;
  };
  using Table = std::map<int, Descriptor>;
  struct Thread {
    int32_t pid = 0;
    std::shared_ptr<Table> table;
    std::shared_ptr<std::optional<std::string>> cwd;  // nullopt: unknown
  };
  Thread* find(uint32_t thread);
  const Thread* find(uint32_t thread) const;

  std::map<uint32_t, Thread> threads_;
};

}  // namespace repro::analysis
