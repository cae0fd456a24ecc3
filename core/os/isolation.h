#pragma once
// Isolation of a replayed program from the world outside the replay.
//
// Replay answers the program's syscalls from the trace; only the ones that
// shape the process run for real (docs/replaying.md). That keeps the program
// off the network and the file system as long as the syscall table and the
// replayer are right. isolate_process() makes it hold when they are not: run
// in the child right before exec, it moves the process into
//   - a new network namespace, which has no interface up (not even
//     loopback): connect() fails with ENETUNREACH, nothing can be reached;
//   - a new mount namespace whose mounts are all read-only (recursively,
//     with mount_setattr), except one writable directory (replay's scratch
//     directory, which holds the copies of files mapped shared): creating,
//     writing, removing or renaming a file elsewhere fails with EROFS.
// As root it unshares the two namespaces directly; otherwise (or if that is
// refused) through a new user namespace that maps the caller's uid and gid
// to themselves, so the program sees the same ids and, not being uid 0 in
// there, keeps no capability after exec to undo the mounts.
//
// What it does not do: stop a program that means harm (root keeps its
// capabilities), or isolate IPC, processes or devices opened by fds the
// program inherits (its stdout stays its stdout).
//
// Thread-compatible. isolate_process() changes the calling process: call it
// only in a forked child.

#include <string>

#include "core/base/status.h"

namespace repro::os {

/// REPRO_REPLAY_ISOLATION: `auto` (or unset) isolates where the host lets
/// repro and warns where not; `namespace` requires it; `off` skips it.
enum class IsolationRequest { kAuto, kNamespace, kOff };

/// Reads REPRO_REPLAY_ISOLATION. Errors: invalid_argument for another value.
Result<IsolationRequest> isolation_request_from_env();

/// What isolate_process() stopped at. `step` is a static string naming the
/// call ("unshare(CLONE_NEWUSER|CLONE_NEWNET|CLONE_NEWNS)", "mount_setattr /
/// read-only", ...); null when it worked.
struct IsolationFailure {
  const char* step = nullptr;
  int errnum = 0;
  bool failed() const { return step != nullptr; }
  /// "unshare(...): Operation not permitted".
  std::string describe() const;
};

/// Isolates the calling process as the header says; `writable_dir` (an
/// absolute path, or null or empty for none) stays writable. Only async-signal-safe
/// calls, for a child forked from a threaded process. On failure the
/// process may be partly isolated (in the namespaces, not yet read-only).
IsolationFailure isolate_process(const char* writable_dir);

}  // namespace repro::os
