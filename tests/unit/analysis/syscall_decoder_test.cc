#include "analysis/syscall_decoder.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstring>

#include "analysis/memory_text.h"

namespace repro::analysis {
namespace {

format::Event syscall(int number, std::array<uint64_t, 6> args, int64_t result) {
  format::Event e;
  e.kind = format::EventKind::kSyscall;
  e.syscall_number = number;
  e.args = args;
  e.result = result;
  return e;
}

std::string line(const format::Event& e) { return call_text(e) + " = " + result_text(e); }

template <typename T>
std::string bytes_of(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

TEST_CASE("openat shows its path, its flags and AT_FDCWD", "[analysis]") {
  auto e = syscall(SYS_openat, {0xffffff9c, 0x7ffff7fb5510, O_RDONLY | O_CLOEXEC, 0, 0, 0}, 3);
  CHECK(line(e) == "openat(AT_FDCWD, 0x7ffff7fb5510, O_RDONLY|O_CLOEXEC) = 3");
  e.inputs = {{1, "/lib/x86_64-linux-gnu/libc.so.6"}};
  CHECK(line(e) ==
        "openat(AT_FDCWD, \"/lib/x86_64-linux-gnu/libc.so.6\", O_RDONLY|O_CLOEXEC) = 3");
  e.args[2] = O_WRONLY | O_CREAT;  // the mode counts only when a file may be made
  e.args[3] = 0644;
  CHECK(call_text(e) ==
        "openat(AT_FDCWD, \"/lib/x86_64-linux-gnu/libc.so.6\", O_WRONLY|O_CREAT, 0644)");
  e.result = -ENOENT;
  CHECK(result_text(e) == "-1 ENOENT (No such file or directory)");
}

TEST_CASE("read and write show their bytes, cut after 32", "[analysis]") {
  auto read = syscall(SYS_read, {3, 0x1000, 64, 0, 0, 0}, 6);
  CHECK(line(read) == "read(3, 0x1000, 64) = 6");  // no bytes in the event
  read.writes = {{0x1000, "hello\n"}};
  CHECK(line(read) == "read(3, \"hello\\n\", 64) = 6");
  read.syscall_flags = format::kSyscallReadsPipe;  // zeros until replay fills them
  CHECK(line(read) == "read(3, 0x1000, 64) = 6");

  auto write = syscall(SYS_write, {1, 0x2000, 40, 0, 0, 0}, 40);
  write.inputs = {{1, std::string("0123456789abcdef0123456789abcde\x01", 32)}};
  CHECK(line(write) == "write(1, \"0123456789abcdef0123456789abcde\\1\"..., 40) = 40");
  write.args[2] = 2;
  write.inputs = {{1, std::string("\0" "7", 2)}};
  CHECK(call_text(write) == "write(1, \"\\0007\", 2)");
}

TEST_CASE("structs the kernel wrote are shown field by field", "[analysis]") {
  struct stat st {};
  st.st_mode = S_IFREG | 0644;
  st.st_size = 15;
  auto fstat = syscall(SYS_fstat, {3, 0x3000, 0, 0, 0, 0}, 0);
  fstat.writes = {{0x3000, bytes_of(st)}};
  CHECK(line(fstat) == "fstat(3, {st_mode=S_IFREG|0644, st_size=15, ...}) = 0");

  int fds[2] = {4, 5};
  auto pipe2 = syscall(SYS_pipe2, {0x4000, O_CLOEXEC, 0, 0, 0, 0}, 0);
  pipe2.writes = {{0x4000, bytes_of(fds)}};
  CHECK(line(pipe2) == "pipe2([4, 5], O_CLOEXEC) = 0");

  struct timespec ts {12, 345};
  auto clock = syscall(SYS_clock_gettime, {CLOCK_MONOTONIC, 0x5000, 0, 0, 0, 0}, 0);
  clock.writes = {{0x5000, bytes_of(ts)}};
  CHECK(line(clock) == "clock_gettime(CLOCK_MONOTONIC, {tv_sec=12, tv_nsec=345}) = 0");
  clock.result = -EINVAL;  // nothing written: the address
  CHECK(line(clock) == "clock_gettime(CLOCK_MONOTONIC, 0x5000) = -1 EINVAL (Invalid argument)");
}

TEST_CASE("socket addresses and socket arguments are decoded", "[analysis]") {
  struct sockaddr_in in {};
  in.sin_family = AF_INET;
  in.sin_port = htons(9);
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto sendto = syscall(SYS_sendto, {7, 0x1000, 1, 0, 0x2000, sizeof in}, 1);
  sendto.inputs = {{1, "x"}, {4, bytes_of(in)}};
  CHECK(line(sendto) ==
        "sendto(7, \"x\", 1, 0, {sa_family=AF_INET, sin_port=htons(9), "
        "sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 1");
  auto socket = syscall(SYS_socket, {AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, 0, 0, 0}, 6);
  CHECK(line(socket) == "socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0) = 6");
  std::string unix_address("\x01\x00/tmp/s\0\0\0", 11);
  CHECK(sockaddr_text(unix_address) == "{sa_family=AF_UNIX, sun_path=\"/tmp/s\"}");
  CHECK(sockaddr_text("\x01") == "");
}

TEST_CASE("mmap's prot, flags and address result; restart results", "[analysis]") {
  auto mmap = syscall(SYS_mmap,
                      {0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, 0xffffffff, 0},
                      0x7ffff7fc0000);
  CHECK(line(mmap) ==
        "mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7fc0000");
  auto futex = syscall(SYS_futex, {0x1000, 128, 2, 0, 0, 0}, -512);
  CHECK(line(futex) ==
        "futex(0x1000, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0) = ? ERESTARTSYS (To be restarted if "
        "SA_RESTART is set)");
  auto unknown = syscall(999, {1, 2, 3, 4, 5, 6}, 0);
  CHECK(line(unknown) == "syscall_999(1, 2, 3, 4, 5, 6) = 0");
}

TEST_CASE("a signal shows its name and where it came from", "[analysis]") {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  info.si_signo = SIGSEGV;
  info.si_code = SEGV_MAPERR;
  info.si_addr = reinterpret_cast<void*>(0x10);
  format::Event e;
  e.kind = format::EventKind::kSignal;
  e.signal_number = SIGSEGV;
  e.signal_info = bytes_of(info);
  CHECK(signal_text(e) == "SIGSEGV {si_signo=SIGSEGV, si_code=1, si_addr=0x10}");
  e.signal_info.clear();
  CHECK(signal_text(e) == "SIGSEGV");
}

TEST_CASE("quoted escapes strace's way and says when it cut", "[analysis]") {
  CHECK(quoted("a\"b\\c\t") == "\"a\\\"b\\\\c\\t\"");
  CHECK(quoted(std::string("\x7f\x01" "9", 3)) == "\"\\177\\19\"");
  CHECK(quoted(std::string("\x01" "7", 2)) == "\"\\0017\"");
  CHECK(quoted("abcdef", 3) == "\"abc\"...");
  CHECK(quoted("ab", 32, true) == "\"ab\"...");
}

}  // namespace
}  // namespace repro::analysis
