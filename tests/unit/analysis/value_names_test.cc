#include "analysis/value_names.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>

namespace repro::analysis {
namespace {

TEST_CASE("flag sets are named strace's way, unknown bits in hex", "[analysis]") {
  CHECK(open_flags_text(O_RDONLY | O_CLOEXEC) == "O_RDONLY|O_CLOEXEC");
  CHECK(open_flags_text(O_RDONLY) == "O_RDONLY");
  CHECK(open_flags_text(O_WRONLY | O_CREAT | O_TRUNC) == "O_WRONLY|O_CREAT|O_TRUNC");
  CHECK(open_flags_text(O_RDWR | 0x40000000) == "O_RDWR|0x40000000");
  CHECK(fd_flags_text(0) == "0");
  CHECK(fd_flags_text(O_CLOEXEC | O_NONBLOCK) == "O_NONBLOCK|O_CLOEXEC");
  CHECK(mmap_prot_text(PROT_READ | PROT_WRITE) == "PROT_READ|PROT_WRITE");
  CHECK(mmap_prot_text(0) == "PROT_NONE");
  CHECK(mmap_flags_text(MAP_PRIVATE | MAP_ANONYMOUS) == "MAP_PRIVATE|MAP_ANONYMOUS");
  CHECK(mmap_flags_text(MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE) ==
        "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE");
  CHECK(access_mode_text(F_OK) == "F_OK");
  CHECK(access_mode_text(R_OK | X_OK) == "R_OK|X_OK");
  CHECK(at_flags_text(AT_REMOVEDIR) == "AT_REMOVEDIR");
  CHECK(at_flags_text(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == "AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH");
  CHECK(sock_type_text(SOCK_STREAM | SOCK_CLOEXEC) == "SOCK_STREAM|SOCK_CLOEXEC");
}

TEST_CASE("enumerations and modes are named, unknown values as numbers", "[analysis]") {
  CHECK(at_fd_text(static_cast<uint64_t>(AT_FDCWD)) == "AT_FDCWD");
  CHECK(at_fd_text(0xffffff9c) == "AT_FDCWD");  // the 32-bit int in a 64-bit register
  CHECK(at_fd_text(3) == "3");
  CHECK(mode_text(0644) == "0644");
  CHECK(mode_text(0) == "000");
  CHECK(mode_text(022) == "022");
  CHECK(mode_text(S_IFREG | 0755) == "S_IFREG|0755");
  CHECK(whence_text(SEEK_END) == "SEEK_END");
  CHECK(whence_text(77) == "77");
  CHECK(clock_id_text(CLOCK_MONOTONIC) == "CLOCK_MONOTONIC");
  CHECK(futex_op_text(FUTEX_WAIT | FUTEX_PRIVATE_FLAG) == "FUTEX_WAIT_PRIVATE");
  CHECK(futex_op_text(FUTEX_WAKE) == "FUTEX_WAKE");
  CHECK(sock_domain_text(AF_INET6) == "AF_INET6");
  CHECK(sigmask_how_text(SIG_SETMASK) == "SIG_SETMASK");
  CHECK(fcntl_cmd_text(F_DUPFD_CLOEXEC) == "F_DUPFD_CLOEXEC");
  CHECK(fcntl_cmd_text(F_OFD_SETLKW) == "F_OFD_SETLKW");
  CHECK(fcntl_cmd_text(9999) == "9999");
}

TEST_CASE("errno and signal numbers have their names", "[analysis]") {
  CHECK(errno_name(2) == "ENOENT");
  CHECK(errno_description(2) == "No such file or directory");
  CHECK(errno_name(4000) == "E4000");
  CHECK(signal_number_name(SIGSEGV) == "SIGSEGV");
  CHECK(signal_number_name(SIGRTMIN + 2) == "SIGRT_2");
  CHECK(signal_number_name(200) == "SIG200");
}

TEST_CASE("named_value_text covers the table's kinds with names and no others", "[analysis]") {
  using syscalls::ArgKind;
  CHECK(named_value_text(ArgKind::kOpenFlags, O_RDONLY) == "O_RDONLY");
  CHECK(named_value_text(ArgKind::kSignal, SIGUSR1) == "SIGUSR1");
  CHECK(named_value_text(ArgKind::kFd, 0xffffffff) == "-1");
  CHECK(named_value_text(ArgKind::kPathIn, 0x1000).empty());
  CHECK(named_value_text(ArgKind::kOut, 0x1000).empty());
  for (int k = static_cast<int>(ArgKind::kAtFd); k <= static_cast<int>(syscalls::kLastArgKind);
       ++k) {
    INFO(syscalls::arg_kind_name(static_cast<ArgKind>(k)));
    CHECK_FALSE(named_value_text(static_cast<ArgKind>(k), 0).empty());
  }
}

}  // namespace
}  // namespace repro::analysis
