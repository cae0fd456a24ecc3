#pragma once
// Effects: what a recorded run touched outside itself, from the trace alone
// (`repro report --effects`): the files it created, wrote, renamed, deleted or read,
// the network endpoints it connected to or listened on, the programs it
// executed and the signals it sent to processes outside the recording.
//
// The trace keeps every syscall with its arguments, result and inputs
// (paths and socket addresses, trace format 7), so following descriptors
// through open, dup, fork and exec (ProcessFiles) says which path or
// endpoint each read and write went to. What the trace cannot tell is said,
// not guessed: whether a file opened with O_CREAT (without O_EXCL) existed
// before is known only when the run itself looked at it first (a stat or an
// open that failed with ENOENT, or succeeded); a path relative to a
// directory whose name is unknown is shown as "?/name".
//
// EffectsTracker is fed the events in trace order and owns all its state;
// not thread-safe.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/process_files.h"
#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::analysis {

/// Whether a file existed before the run created it.
enum class Creation {
  kNone,       // not created by the run
  kCreated,    // known not to exist before: O_EXCL, mkdir, link, or seen missing
               // first
  kIfMissing,  // O_CREAT on a file the run never looked at: created, or opened
               // if it existed
};

/// Where a path belongs, for reports that summarise system files.
enum class PathGroup { kNone, kProc, kSys, kDev, kLibraries };

struct FileEffect {
  std::string path;
  bool resolved = true;  // false: relative to a directory the trace does not name
  PathGroup group = PathGroup::kNone;
  Creation creation = Creation::kNone;
  bool is_directory = false;  // created by mkdir, or listed
  bool opened_for_writing = false;
  bool truncated = false;        // O_TRUNC on an existing file (or maybe existing), truncate
  bool maybe_truncated = false;  // O_TRUNC on a file that may not have existed
  uint64_t bytes_written = 0;
  uint64_t writes = 0;  // write calls that wrote at least one byte
  bool read = false;    // opened for reading (bytes_read may be 0)
  uint64_t bytes_read = 0;
  bool listed = false;   // getdents on it
  bool deleted = false;  // unlink, rmdir, or renamed over
  std::vector<std::string> renamed_to;
  std::vector<std::string> renamed_from;
  std::string symlink_target;  // it was made a symbolic link to this
  std::string hard_link_of;    // it was made a hard link of this path
  std::string mode;            // chmod's mode in octal, the last one
  bool owner_changed = false;
  bool times_changed = false;
  bool mapped_shared_writable = false;
  bool is_socket = false;  // made by bind of an AF_UNIX socket

  /// Whether the run changed it (anything but reading and listing).
  bool changed() const;
};

/// A network (or AF_UNIX) endpoint: a peer connected to, an address
/// listened on, sent to or received from.
struct Endpoint {
  enum class Role { kConnected, kListening, kBound, kSentTo, kReceivedFrom };

  Role role = Role::kConnected;
  int family = 0;
  std::string protocol;  // "tcp", "udp", "stream", "dgram", "seqpacket", "raw"
  std::string address;   // as parse_socket_address() gives it
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t connections = 0;  // successful connects, or accepted connections when listening
  std::map<std::string, uint64_t> failures;  // connect/bind errors: "ECONNREFUSED" -> count
  std::set<std::string> peers;               // accepted peers of a listening endpoint
  uint64_t binds = 0;                        // kBound: sockets bound there
};

/// "connected", "listening", "bound", "sent-to", "received-from".
const char* endpoint_role_name(Endpoint::Role role);

struct ExecutedProgram {
  int32_t pid = 0;
  uint32_t thread = 0;
  std::string path;  // as the kernel gave it (AT_EXECFN)
  std::vector<std::string> argv;
};

struct SignalSent {
  int32_t from_pid = 0;
  std::string syscall;  // "kill", "tgkill", ...
  int64_t target = 0;   // the pid (tid for tkill/tgkill) argument
  int signal = 0;
  int64_t result = 0;  // 0 or -errno
  /// "pid 1234", "process group 1234", "every process it may signal", ...
  std::string target_description;
};

struct Effects {
  std::map<std::string, FileEffect> files;    // by path
  std::map<std::string, Endpoint> endpoints;  // by role, protocol and address
  std::vector<ExecutedProgram> programs;      // in trace order
  std::vector<SignalSent> outside_signals;    // to processes outside the recording
  uint64_t processes = 0;                     // processes the recording made (the first included)
  uint64_t threads = 0;
  /// Bytes written to and read from the descriptors the recording started
  /// with (its stdin, stdout and stderr, wherever they pointed).
  uint64_t stdout_bytes = 0;
  uint64_t stderr_bytes = 0;
  uint64_t stdin_bytes = 0;
  /// Syscalls whose path or address the trace lacks (a bad pointer; or the
  /// memory could not be read).
  uint64_t missing_inputs = 0;
  /// Reads and writes on descriptors whose origin the trace does not show.
  uint64_t unknown_descriptor_calls = 0;
  /// Fast-path batches whose records do not decode: their syscalls are
  /// not counted.
  uint64_t undecoded_batches = 0;
};

class EffectsTracker {
 public:
  /// `initial_cwd`: the recording's working directory (trace header).
  explicit EffectsTracker(std::string initial_cwd);
  /// Feeds the next event of the trace.
  void observe(const format::Event& event);
  /// The effects of the events fed so far.
  Effects finish() const;

 private:
  void on_syscall(const format::Event& event);
  void on_file_syscall(const format::Event& event, bool* handled);
  void on_fd_syscall(const format::Event& event, bool* handled);
  void on_socket_syscall(const format::Event& event, bool* handled);
  void on_signal_syscall(const format::Event& event);
  void open_file(const format::Event& event, int dirfd, int path_arg, int flags);
  void count_io(uint32_t thread, int fd, uint64_t bytes, bool written);
  void note_existence(const format::Event& event, int dirfd, int path_arg);
  FileEffect& file(const ResolvedPath& path);
  Endpoint& endpoint(Endpoint::Role role, const OpenFile& socket, const std::string& address,
                     std::string* key);
  // The input of argument `index` resolved as a path, or false if absent.
  bool input_path(const format::Event& event, int dirfd, int index, ResolvedPath* out);

  std::string initial_cwd_;
  ProcessFiles processes_;
  std::set<int32_t> recorded_tids_;
  std::map<std::string, bool> exists_;  // what the run learned about a path's existence
  std::vector<SignalSent> signals_;     // all sends; filtered by finish()
  Effects effects_;
};

/// Reads the trace in `trace_dir` and returns its effects. Errors:
/// not_found, corruption, version_mismatch (a trace older than format 7
/// keeps no paths: record it again).
Result<Effects> collect_effects(const std::string& trace_dir);

/// "proc", "sys", "dev", "libraries", or "" for kNone.
const char* path_group_name(PathGroup group);
/// The group a path belongs to (PathGroup::kNone for the run's own files).
PathGroup path_group(const std::string& path);

}  // namespace repro::analysis
