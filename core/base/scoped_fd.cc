#include "core/base/scoped_fd.h"

#include <unistd.h>

namespace repro {

void ScopedFd::reset(int fd) {
  if (fd_ >= 0) {
    ::close(fd_);
  }
  fd_ = fd;
}

}  // namespace repro
