#include "core/os/isolation.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace repro::os {
namespace {

// Writes `text` to `path` in one write(2), as /proc/self/{uid,gid}_map and
// setgroups require. Returns 0 or errno.
int write_proc_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno;
  }
  size_t length = strlen(text);
  int err = write(fd, text, length) == static_cast<ssize_t>(length) ? 0 : errno;
  close(fd);
  return err;
}

// "ID ID 1\n" into `buffer` (at least 40 bytes): maps `id` to itself.
// By hand, as snprintf is not async-signal-safe.
void identity_map_line(unsigned id, char* buffer) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + id % 10);
    id /= 10;
  } while (id != 0);
  char* out = buffer;
  for (int copy = 0; copy < 2; ++copy) {
    for (int i = n - 1; i >= 0; --i) {
      *out++ = digits[i];
    }
    *out++ = ' ';
  }
  strcpy(out, "1\n");
}

IsolationFailure fail(const char* step) { return IsolationFailure{step, errno}; }

// Enters new network and mount namespaces, through a new user namespace
// unless this process may create them without one.
IsolationFailure enter_namespaces() {
  if (geteuid() == 0 && unshare(CLONE_NEWNET | CLONE_NEWNS) == 0) {
    return {};
  }
  // Read the ids before: in the new namespace they are unmapped until the
  // maps are written.
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) != 0) {
    return fail("unshare(CLONE_NEWUSER|CLONE_NEWNET|CLONE_NEWNS)");
  }
  char line[40];
  identity_map_line(uid, line);
  if (int err = write_proc_file("/proc/self/uid_map", line); err != 0) {
    return {"writing /proc/self/uid_map", err};
  }
  // An unprivileged gid_map needs setgroups denied first (user_namespaces(7)).
  if (int err = write_proc_file("/proc/self/setgroups", "deny"); err != 0) {
    return {"writing /proc/self/setgroups", err};
  }
  identity_map_line(gid, line);
  if (int err = write_proc_file("/proc/self/gid_map", line); err != 0) {
    return {"writing /proc/self/gid_map", err};
  }
  return {};
}

}  // namespace

Result<IsolationRequest> isolation_request_from_env() {
  const char* value = std::getenv("REPRO_REPLAY_ISOLATION");
  std::string_view text = value == nullptr ? "" : value;
  if (text.empty() || text == "auto") {
    return IsolationRequest::kAuto;
  }
  if (text == "namespace") {
    return IsolationRequest::kNamespace;
  }
  if (text == "off") {
    return IsolationRequest::kOff;
  }
  return Status::error(
      StatusCode::kInvalidArgument,
      fmt::format("REPRO_REPLAY_ISOLATION='{}': expected auto, namespace or off", text));
}

std::string IsolationFailure::describe() const {
  return failed() ? fmt::format("{}: {}", step, std::strerror(errnum)) : "isolated";
}

IsolationFailure isolate_process(const char* writable_dir) {
  if (IsolationFailure failure = enter_namespaces(); failure.failed()) {
    return failure;
  }
  // Private first: the mounts below must not propagate to the namespace
  // repro came from (as root, / is usually a shared mount).
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return fail("making / private");
  }
  const bool has_writable = writable_dir != nullptr && writable_dir[0] != '\0';
  // A mount of its own, so that it alone can be made writable again.
  if (has_writable && mount(writable_dir, writable_dir, nullptr, MS_BIND, nullptr) != 0) {
    return fail("bind-mounting the scratch directory");
  }
  struct mount_attr read_only = {};
  read_only.attr_set = MOUNT_ATTR_RDONLY;
  if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &read_only, sizeof read_only) != 0) {
    return fail("mount_setattr(/, AT_RECURSIVE, MOUNT_ATTR_RDONLY)");
  }
  if (has_writable) {
    struct mount_attr writable = {};
    writable.attr_clr = MOUNT_ATTR_RDONLY;
    if (mount_setattr(AT_FDCWD, writable_dir, 0, &writable, sizeof writable) != 0) {
      return fail("mount_setattr(scratch directory, writable)");
    }
  }
  return {};
}

}  // namespace repro::os
