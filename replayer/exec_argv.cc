#include "replayer/exec_argv.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/syscall.h>

namespace repro::replayer {

std::string kernel_exec_name(int syscall_number, int dirfd, const std::string& path) {
  // As the kernel's alloc_bprm() names it.
  if (syscall_number != SYS_execveat || dirfd == AT_FDCWD || path.starts_with('/')) {
    return path;
  }
  if (path.empty()) {
    return fmt::format("/dev/fd/{}", dirfd);
  }
  return fmt::format("/dev/fd/{}/{}", dirfd, path);
}

size_t common_tail(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) {
    ++n;
  }
  return n;
}

}  // namespace repro::replayer
