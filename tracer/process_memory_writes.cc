#include "tracer/process_memory_writes.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/base/scoped_fd.h"
#include "core/os/tracee.h"

namespace repro::tracer {
namespace {

// The file position of descriptor `fd` of process `pid`, from its fdinfo.
Result<uint64_t> file_position(pid_t pid, int fd) {
  std::string path = fmt::format("/proc/{}/fdinfo/{}", pid, fd);
  FILE* info = std::fopen(path.c_str(), "re");
  unsigned long long position = 0;
  bool read = info != nullptr && std::fscanf(info, "pos: %llu", &position) == 1;
  if (info != nullptr) {
    std::fclose(info);
  }
  if (!read) {
    return Status::error(StatusCode::kIoError, fmt::format("reading '{}'", path));
  }
  return static_cast<uint64_t>(position);
}

// Reads memory of `pid` through /proc/PID/mem, which also reads pages the
// program may not read (a write to /proc/self/mem may target PROT_NONE).
Status read_memory_forced(pid_t pid, uint64_t address, std::string* bytes) {
  std::string path = fmt::format("/proc/{}/mem", pid);
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  size_t done = 0;
  while (fd.valid() && done < bytes->size()) {
    ssize_t n = ::pread(fd.get(), bytes->data() + done, bytes->size() - done,
                        static_cast<off_t>(address + done));
    if (n <= 0) {
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (done != bytes->size()) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("reading memory of process {} at {:#x}", pid, address + done));
  }
  return Status::ok();
}

}  // namespace

bool writes_at_file_position(int number) {
  return number == SYS_write || number == SYS_writev || number == SYS_pwrite64 ||
         number == SYS_pwritev || number == SYS_pwritev2;
}

bool writes_shared_file_data(int number) {
  return number == SYS_write || number == SYS_pwrite64 || number == SYS_writev ||
         number == SYS_pwritev;
}

std::optional<pid_t> proc_mem_owner(pid_t pid, int fd) {
  std::string link = fmt::format("/proc/{}/fd/{}", pid, fd);
  char target[128];
  ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  if (n <= 0) {
    return std::nullopt;
  }
  target[n] = '\0';
  int owner = 0, thread = 0, end = 0;
  if (std::sscanf(target, "/proc/%d/task/%d/mem%n", &owner, &thread, &end) == 2 && end == n) {
    return thread;
  }
  end = 0;
  if (std::sscanf(target, "/proc/%d/mem%n", &owner, &end) == 1 && end == n) {
    return owner;
  }
  return std::nullopt;
}

Status capture_own_memory_write(pid_t tid, pid_t pid, format::Event* event) {
  const int number = event->syscall_number;
  const int fd = static_cast<int>(event->args[0]);
  const auto written = static_cast<uint64_t>(event->result);
  uint64_t address = event->args[3];  // pwrite64, pwritev, pwritev2: the position
  const bool at_position = number == SYS_pwritev2 && address == ~uint64_t{0};  // offset -1
  if (number == SYS_write || number == SYS_writev || at_position) {
    // They wrote just before the position they left behind.
    REPRO_ASSIGN_OR_RETURN(uint64_t position, file_position(pid, fd));
    address = position - written;
  }
  format::MemoryWrite write;
  write.address = address;
  write.bytes.resize(written);
  Status status = os::read_memory(tid, address, write.bytes.data(), written);
  if (!status.is_ok()) {
    REPRO_RETURN_IF_ERROR(read_memory_forced(pid, address, &write.bytes));
  }
  event->writes.push_back(std::move(write));
  return Status::ok();
}

}  // namespace repro::tracer
