#include "core/syscalls/syscall_table.h"

#include <linux/aio_abi.h>
#include <mqueue.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/timex.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace repro::syscalls {
namespace {

// Where distributions put the kernel's x86-64 syscall numbers.
constexpr const char* kUnistd64Paths[] = {
    "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
    "/usr/include/asm/unistd_64.h",
};

// name -> number for every "#define __NR_<name> <number>" of the kernel header,
// read at test time so the list can't go stale.
std::map<std::string, int> read_kernel_numbers() {
  std::map<std::string, int> numbers;
  for (const char* path : kUnistd64Paths) {
    std::ifstream in(path);
    if (!in) {
      continue;
    }
    const std::regex define(R"(^#define __NR_(\w+) (\d+)\s*$)");
    std::string line;
    while (std::getline(in, line)) {
      std::smatch match;
      if (std::regex_match(line, match, define)) {
        numbers[match[1]] = std::stoi(match[2]);
      }
    }
    break;
  }
  return numbers;
}

bool rule_uses_length_arg(LengthRule rule) {
  switch (rule) {
    case LengthRule::kArg:
    case LengthRule::kResult:
    case LengthRule::kArgTimesFixed:
    case LengthRule::kSockLen:
    case LengthRule::kIovec:
    case LengthRule::kCString:
      return true;
    default:
      return false;
  }
}

bool rule_uses_fixed_bytes(LengthRule rule) {
  return rule == LengthRule::kFixed || rule == LengthRule::kArgTimesFixed ||
         rule == LengthRule::kResultTimesFixed;
}

bool is_memory_arg(ArgKind kind) { return kind == ArgKind::kOut || kind == ArgKind::kInOut; }

const SyscallInfo& row(const char* name) {
  const SyscallInfo* info = find_by_name(name);
  INFO("syscall " << name);
  REQUIRE(info != nullptr);
  return *info;
}

TEST_CASE("every syscall of the kernel header has a row with the same number", "[syscalls]") {
  std::map<std::string, int> kernel = read_kernel_numbers();
  INFO("kernel header: " << kUnistd64Paths[0] << " or " << kUnistd64Paths[1]);
  REQUIRE(kernel.size() > 300);
  for (const auto& [name, number] : kernel) {
    INFO("__NR_" << name << " = " << number
                 << " (refresh with syscall-tables/update_numbers.py --write)");
    const SyscallInfo* info = find_by_name(name);
    REQUIRE(info != nullptr);
    CHECK(info->x86_64 == number);
  }
  // Rows the header lacks are syscalls of newer kernels than the headers:
  // numbered past the header's last one (the next test checks them).
  int newest_in_header = 0;
  for (const auto& [name, number] : kernel) {
    newest_in_header = std::max(newest_in_header, number);
  }
  for (const SyscallInfo& info : all_syscalls()) {
    if (kernel.count(info.name) == 0) {
      INFO("syscall " << info.name << " has a row but no __NR_ in the header");
      CHECK(info.x86_64 > newest_in_header);
    }
  }
}

TEST_CASE("syscalls newer than the build's headers have the numbers of Linux 6.19", "[syscalls]") {
  // From arch/x86/entry/syscalls/syscall_64.tbl and scripts/syscall.tbl of
  // Linux 6.19: every syscall since 6.1, with the same number on both.
  const std::pair<const char*, int> newer[] = {
      {"cachestat", 451},         {"fchmodat2", 452},
      {"map_shadow_stack", 453},  {"futex_wake", 454},
      {"futex_wait", 455},        {"futex_requeue", 456},
      {"statmount", 457},         {"listmount", 458},
      {"lsm_get_self_attr", 459}, {"lsm_set_self_attr", 460},
      {"lsm_list_modules", 461},  {"mseal", 462},
      {"setxattrat", 463},        {"getxattrat", 464},
      {"listxattrat", 465},       {"removexattrat", 466},
      {"open_tree_attr", 467},    {"file_getattr", 468},
      {"file_setattr", 469},      {"listns", 470}};
  for (const auto& [name, number] : newer) {
    const SyscallInfo& info = row(name);
    INFO("syscall " << name);
    CHECK(info.x86_64 == number);
    CHECK(info.aarch64 == number);
    CHECK(std::string(syscall_name(number)) == name);
  }
  CHECK(all_syscalls().back().x86_64 == 470);
}

TEST_CASE("syscall names are unique", "[syscalls]") {
  std::set<std::string> names;
  for (const SyscallInfo& info : all_syscalls()) {
    INFO("syscall " << info.name);
    REQUIRE(info.name != nullptr);
    CHECK(names.insert(info.name).second);
  }
}

TEST_CASE("syscall numbers are unique on each architecture", "[syscalls]") {
  std::set<int> x86_64;
  std::set<int> aarch64;
  for (const SyscallInfo& info : all_syscalls()) {
    INFO("syscall " << info.name);
    CHECK(info.x86_64 >= 0);
    CHECK(x86_64.insert(info.x86_64).second);
    CHECK(info.aarch64 >= -1);
    if (info.aarch64 != -1) {
      CHECK(aarch64.insert(info.aarch64).second);
    }
  }
}

TEST_CASE("syscall rows are ordered by x86-64 number", "[syscalls]") {
  std::span<const SyscallInfo> rows = all_syscalls();
  for (size_t i = 1; i < rows.size(); ++i) {
    INFO("syscall " << rows[i].name);
    CHECK(rows[i - 1].x86_64 < rows[i].x86_64);
  }
}

TEST_CASE("a syscall's arg count matches the arguments its row describes", "[syscalls]") {
  for (const SyscallInfo& info : all_syscalls()) {
    INFO("syscall " << info.name);
    REQUIRE(info.arg_count <= 6);
    int described = 0;
    for (const ArgSpec& arg : info.args) {
      if (arg.kind != ArgKind::kNone) {
        ++described;
      }
    }
    CHECK(described == info.arg_count);
    // No gaps: arguments 0..arg_count-1 are described, the rest are kNone.
    for (int i = 0; i < 6; ++i) {
      INFO("argument " << i);
      CHECK((info.args[i].kind != ArgKind::kNone) == (i < info.arg_count));
    }
  }
}

TEST_CASE("struct kinds sit on memory arguments of the struct's size", "[syscalls]") {
  int described = 0;
  for (const SyscallInfo& info : all_syscalls()) {
    for (int i = 0; i < info.arg_count; ++i) {
      const ArgSpec& arg = info.args[i];
      INFO("syscall " << info.name << " argument " << i << " ("
                      << struct_kind_name(arg.structure) << ")");
      if (arg.structure == StructKind::kNone) {
        continue;
      }
      ++described;
      CHECK(is_memory_arg(arg.kind));
      switch (arg.structure) {
        case StructKind::kStat:
          CHECK((arg.rule == LengthRule::kFixed && arg.fixed_bytes == 144));
          break;
        case StructKind::kTimespec:
          CHECK((arg.rule == LengthRule::kFixed && arg.fixed_bytes == 16));
          break;
        case StructKind::kFdPair:
          CHECK((arg.rule == LengthRule::kFixed && arg.fixed_bytes == 8));
          break;
        case StructKind::kPollfds:
          CHECK((arg.rule == LengthRule::kArgTimesFixed && arg.fixed_bytes == 8));
          break;
        case StructKind::kSockaddr:
          CHECK(arg.rule == LengthRule::kSockLen);
          break;
        case StructKind::kNone:
          break;
      }
    }
  }
  CHECK(find_by_name("fstat")->args[1].structure == StructKind::kStat);
  CHECK(find_by_name("pipe2")->args[0].structure == StructKind::kFdPair);
  CHECK(described >= 15);
}

TEST_CASE("every syscall output argument has a length rule and no input argument has one",
          "[syscalls]") {
  for (const SyscallInfo& info : all_syscalls()) {
    for (int i = 0; i < info.arg_count; ++i) {
      const ArgSpec& arg = info.args[i];
      INFO("syscall " << info.name << " argument " << i << " (" << arg_kind_name(arg.kind) << ", "
                      << length_rule_name(arg.rule) << ")");
      if (is_memory_arg(arg.kind)) {
        CHECK(arg.rule != LengthRule::kNone);
      } else {
        CHECK(arg.rule == LengthRule::kNone);
      }
      CHECK(rule_uses_fixed_bytes(arg.rule) == (arg.fixed_bytes > 0));
    }
  }
}

TEST_CASE("syscall length rules refer to arguments that exist and fit", "[syscalls]") {
  for (const SyscallInfo& info : all_syscalls()) {
    for (int i = 0; i < info.arg_count; ++i) {
      const ArgSpec& arg = info.args[i];
      INFO("syscall " << info.name << " argument " << i << " (" << length_rule_name(arg.rule)
                      << " on argument " << int{arg.length_arg} << ")");
      if (!rule_uses_length_arg(arg.rule)) {
        CHECK(arg.length_arg == 0);
        continue;
      }
      REQUIRE(arg.length_arg < info.arg_count);
      CHECK(arg.length_arg != i);
      const ArgSpec& length = info.args[arg.length_arg];
      if (arg.rule == LengthRule::kSockLen) {
        // The socklen_t the kernel reads and rewrites.
        CHECK(length.kind == ArgKind::kInOut);
        CHECK(length.rule == LengthRule::kFixed);
        CHECK(length.fixed_bytes == 4);
      } else {
        CHECK(length.kind == ArgKind::kInt);
      }
    }
  }
}

TEST_CASE("every syscall row has known effects or is unsupported", "[syscalls]") {
  for (const SyscallInfo& info : all_syscalls()) {
    INFO("syscall " << info.name);
    CHECK((info.effects_known() || (info.flags & kUnsupported)));
  }
}

TEST_CASE("at least 150 syscalls have known memory effects", "[syscalls]") {
  int known = 0;
  for (const SyscallInfo& info : all_syscalls()) {
    if (info.effects_known()) {
      ++known;
    }
  }
  CHECK(known >= 150);
}

TEST_CASE("the syscalls programs use most have known effects and are supported", "[syscalls]") {
  const char* const common[] = {"read",
                                "pread64",
                                "readv",
                                "preadv",
                                "preadv2",
                                "write",
                                "pwrite64",
                                "writev",
                                "pwritev",
                                "pwritev2",
                                "open",
                                "openat",
                                "openat2",
                                "close",
                                "close_range",
                                "stat",
                                "fstat",
                                "lstat",
                                "newfstatat",
                                "statx",
                                "statfs",
                                "fstatfs",
                                "getdents",
                                "getdents64",
                                "readlink",
                                "readlinkat",
                                "getcwd",
                                "uname",
                                "sysinfo",
                                "getrlimit",
                                "prlimit64",
                                "getrusage",
                                "times",
                                "clock_gettime",
                                "clock_getres",
                                "clock_nanosleep",
                                "gettimeofday",
                                "time",
                                "nanosleep",
                                "getrandom",
                                "poll",
                                "ppoll",
                                "select",
                                "pselect6",
                                "epoll_create",
                                "epoll_create1",
                                "epoll_ctl",
                                "epoll_wait",
                                "epoll_pwait",
                                "epoll_pwait2",
                                "pipe",
                                "pipe2",
                                "socketpair",
                                "socket",
                                "bind",
                                "connect",
                                "listen",
                                "accept",
                                "accept4",
                                "getsockname",
                                "getpeername",
                                "getsockopt",
                                "setsockopt",
                                "sendto",
                                "sendmsg",
                                "sendmmsg",
                                "recvfrom",
                                "recvmsg",
                                "recvmmsg",
                                "shutdown",
                                "futex",
                                "wait4",
                                "waitid",
                                "rt_sigaction",
                                "rt_sigprocmask",
                                "rt_sigpending",
                                "rt_sigtimedwait",
                                "rt_sigreturn",
                                "sigaltstack",
                                "kill",
                                "tgkill",
                                "tkill",
                                "getpid",
                                "getppid",
                                "gettid",
                                "getuid",
                                "geteuid",
                                "getgid",
                                "getegid",
                                "getgroups",
                                "getresuid",
                                "getresgid",
                                "setsid",
                                "setpgid",
                                "getpgid",
                                "getpgrp",
                                "getsid",
                                "sched_getaffinity",
                                "sched_setaffinity",
                                "sched_yield",
                                "sched_getparam",
                                "sched_getscheduler",
                                "sched_getattr",
                                "getcpu",
                                "brk",
                                "mmap",
                                "munmap",
                                "mprotect",
                                "mremap",
                                "madvise",
                                "msync",
                                "mlock",
                                "munlock",
                                "mlockall",
                                "mincore",
                                "arch_prctl",
                                "set_tid_address",
                                "set_robust_list",
                                "get_robust_list",
                                "rseq",
                                "clone",
                                "clone3",
                                "fork",
                                "vfork",
                                "execve",
                                "execveat",
                                "exit",
                                "exit_group",
                                "dup",
                                "dup2",
                                "dup3",
                                "fcntl",
                                "ioctl",
                                "lseek",
                                "access",
                                "faccessat",
                                "faccessat2",
                                "mkdir",
                                "mkdirat",
                                "rmdir",
                                "unlink",
                                "unlinkat",
                                "rename",
                                "renameat",
                                "renameat2",
                                "link",
                                "linkat",
                                "symlink",
                                "symlinkat",
                                "chmod",
                                "fchmod",
                                "fchmodat",
                                "chown",
                                "fchown",
                                "lchown",
                                "fchownat",
                                "truncate",
                                "ftruncate",
                                "fsync",
                                "fdatasync",
                                "utimensat",
                                "umask",
                                "chdir",
                                "fchdir",
                                "eventfd",
                                "eventfd2",
                                "timerfd_create",
                                "timerfd_settime",
                                "timerfd_gettime",
                                "signalfd",
                                "signalfd4",
                                "inotify_init",
                                "inotify_init1",
                                "inotify_add_watch",
                                "inotify_rm_watch",
                                "setitimer",
                                "getitimer",
                                "alarm",
                                "timer_create",
                                "timer_settime",
                                "timer_gettime",
                                "timer_delete",
                                "capget",
                                "prctl",
                                "personality",
                                "getxattr",
                                "lgetxattr",
                                "fgetxattr",
                                "listxattr",
                                "llistxattr",
                                "flistxattr",
                                "sendfile",
                                "copy_file_range",
                                "splice",
                                "tee",
                                "memfd_create",
                                "membarrier",
                                "pidfd_open",
                                "pidfd_send_signal",
                                "flock",
                                "pause",
                                "rt_sigsuspend"};
  for (const char* name : common) {
    const SyscallInfo& info = row(name);
    INFO("syscall " << name);
    CHECK(info.effects_known());
    CHECK_FALSE(info.flags & kUnsupported);
  }
}

TEST_CASE("io_uring syscalls are unsupported", "[syscalls]") {
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register"}) {
    INFO("syscall " << name);
    CHECK(row(name).flags & kUnsupported);
  }
}

TEST_CASE("only the exit, exec and sigreturn syscalls are marked no-return", "[syscalls]") {
  std::set<std::string> no_return;
  for (const SyscallInfo& info : all_syscalls()) {
    if (info.flags & kNoReturn) {
      no_return.insert(info.name);
    }
  }
  CHECK(no_return ==
        std::set<std::string>{"execve", "execveat", "exit", "exit_group", "rt_sigreturn"});
}

TEST_CASE("syscalls that wait for other threads or the outside world may block", "[syscalls]") {
  for (const char* name :
       {"read",          "readv",           "write",       "writev",          "recvfrom",
        "recvmsg",       "recvmmsg",        "sendto",      "sendmsg",         "accept",
        "accept4",       "connect",         "poll",        "ppoll",           "select",
        "pselect6",      "epoll_wait",      "epoll_pwait", "epoll_pwait2",    "futex",
        "wait4",         "waitid",          "nanosleep",   "clock_nanosleep", "pause",
        "rt_sigsuspend", "rt_sigtimedwait", "flock",       "fcntl",           "msgrcv",
        "semop",         "vfork",           "futex_wait",  "futex_waitv"}) {
    INFO("syscall " << name);
    CHECK(row(name).may_block());
  }
  for (const char* name : {"getpid", "close", "fstat", "mmap", "clock_gettime", "sched_yield"}) {
    INFO("syscall " << name);
    CHECK_FALSE(row(name).may_block());
  }
}

TEST_CASE("syscalls that shape the process are executed on replay", "[syscalls]") {
  for (const char* name : {"brk",
                           "munmap",
                           "mprotect",
                           "mremap",
                           "madvise",
                           "fork",
                           "vfork",
                           "exit",
                           "exit_group",
                           "arch_prctl",
                           "set_tid_address",
                           "set_robust_list",
                           "rt_sigaction",
                           "rt_sigprocmask",
                           "sigaltstack",
                           "rt_sigreturn",
                           "rseq",
                           "sched_yield",
                           "personality",
                           "mlock",
                           "mseal",
                           "map_shadow_stack"}) {
    INFO("syscall " << name);
    CHECK(row(name).policy == ReplayPolicy::kExecute);
  }
  for (const char* name : {"execve", "execveat", "clone", "clone3", "ioctl", "fcntl", "mmap"}) {
    INFO("syscall " << name);
    CHECK(row(name).policy == ReplayPolicy::kSpecial);
  }
  for (const char* name : {"read", "openat", "newfstatat", "clock_gettime", "getrandom"}) {
    INFO("syscall " << name);
    CHECK(row(name).policy == ReplayPolicy::kEmulate);
  }
}

// One output argument whose size is a fixed struct of the x86-64 ABI.
struct FixedOut {
  const char* name;
  int arg;
  size_t bytes;
};

TEST_CASE("fixed syscall output sizes match the x86-64 structs", "[syscalls]") {
  // glibc's types have the kernel's layout for these; the kernel's struct
  // sigaction (handler, flags, restorer, 8-byte mask) and sigset have no libc
  // twin, hence the literals.
  constexpr size_t kKernelSigaction = 32;
  const FixedOut outs[] = {
      {"stat", 1, sizeof(struct stat)},
      {"fstat", 1, sizeof(struct stat)},
      {"lstat", 1, sizeof(struct stat)},
      {"newfstatat", 2, sizeof(struct stat)},
      {"statx", 4, sizeof(struct statx)},
      {"statfs", 1, sizeof(struct statfs)},
      {"fstatfs", 1, sizeof(struct statfs)},
      {"uname", 0, sizeof(struct utsname)},
      {"sysinfo", 0, sizeof(struct sysinfo)},
      {"times", 0, sizeof(struct tms)},
      {"getrlimit", 1, sizeof(struct rlimit)},
      {"prlimit64", 3, sizeof(struct rlimit)},
      {"getrusage", 1, sizeof(struct rusage)},
      {"wait4", 3, sizeof(struct rusage)},
      {"waitid", 2, sizeof(siginfo_t)},
      {"waitid", 4, sizeof(struct rusage)},
      {"clock_gettime", 1, sizeof(struct timespec)},
      {"clock_getres", 1, sizeof(struct timespec)},
      {"nanosleep", 1, sizeof(struct timespec)},
      {"clock_nanosleep", 3, sizeof(struct timespec)},
      {"sched_rr_get_interval", 1, sizeof(struct timespec)},
      {"gettimeofday", 0, sizeof(struct timeval)},
      {"gettimeofday", 1, sizeof(struct timezone)},
      {"time", 0, sizeof(time_t)},
      {"getitimer", 1, sizeof(struct itimerval)},
      {"setitimer", 2, sizeof(struct itimerval)},
      {"timer_settime", 3, sizeof(struct itimerspec)},
      {"timer_gettime", 1, sizeof(struct itimerspec)},
      {"timerfd_settime", 3, sizeof(struct itimerspec)},
      {"timerfd_gettime", 1, sizeof(struct itimerspec)},
      {"timer_create", 2, sizeof(int)},
      {"rt_sigaction", 2, kKernelSigaction},
      {"rt_sigtimedwait", 1, sizeof(siginfo_t)},
      {"sigaltstack", 1, sizeof(stack_t)},
      {"adjtimex", 0, sizeof(struct timex)},
      {"clock_adjtime", 1, sizeof(struct timex)},
      {"sched_getparam", 1, sizeof(struct sched_param)},
      {"mq_getsetattr", 2, sizeof(struct mq_attr)},
      {"io_cancel", 2, sizeof(struct io_event)},
      {"pipe", 0, 2 * sizeof(int)},
      {"pipe2", 0, 2 * sizeof(int)},
      {"socketpair", 3, 2 * sizeof(int)},
      {"getcpu", 0, sizeof(unsigned)},
      {"getcpu", 1, sizeof(unsigned)},
      {"getresuid", 0, sizeof(uid_t)},
      {"getresgid", 2, sizeof(gid_t)},
      {"wait4", 1, sizeof(int)},
      {"sendfile", 2, sizeof(off_t)},
      {"copy_file_range", 1, sizeof(loff_t)},
      {"splice", 3, sizeof(loff_t)},
      {"accept", 2, sizeof(socklen_t)},
      {"getsockopt", 4, sizeof(socklen_t)},
  };
  for (const FixedOut& out : outs) {
    const ArgSpec& arg = row(out.name).args[out.arg];
    INFO("syscall " << out.name << " argument " << out.arg);
    CHECK(is_memory_arg(arg.kind));
    CHECK(arg.rule == LengthRule::kFixed);
    CHECK(arg.fixed_bytes == out.bytes);
  }
}

TEST_CASE("per-element syscall output sizes match the x86-64 structs", "[syscalls]") {
  CHECK(row("poll").args[0].rule == LengthRule::kArgTimesFixed);
  CHECK(row("poll").args[0].fixed_bytes == sizeof(struct pollfd));
  CHECK(row("ppoll").args[0].fixed_bytes == sizeof(struct pollfd));
  for (const char* name : {"epoll_wait", "epoll_pwait", "epoll_pwait2"}) {
    INFO("syscall " << name);
    CHECK(row(name).args[1].rule == LengthRule::kResultTimesFixed);
    CHECK(row(name).args[1].fixed_bytes == sizeof(struct epoll_event));
  }
  CHECK(row("getgroups").args[1].rule == LengthRule::kArgTimesFixed);
  CHECK(row("getgroups").args[1].fixed_bytes == sizeof(gid_t));
  CHECK(row("rt_sigprocmask").args[2].rule == LengthRule::kArg);
  CHECK(row("rt_sigprocmask").args[2].length_arg == 3);
}

TEST_CASE("syscall lookups by name and by number find the same row", "[syscalls]") {
  for (const SyscallInfo& info : all_syscalls()) {
    INFO("syscall " << info.name);
    CHECK(find_x86_64(info.x86_64) == &info);
    CHECK(find_by_name(info.name) == &info);
    CHECK(std::strcmp(syscall_name(info.x86_64), info.name) == 0);
  }
  CHECK(find_by_name("openat")->x86_64 == 257);
  CHECK(find_x86_64(0) == find_by_name("read"));
}

TEST_CASE("unknown syscall numbers and names find nothing and get a made-up name", "[syscalls]") {
  CHECK(find_x86_64(-1) == nullptr);
  CHECK(find_x86_64(400) == nullptr);  // 335..423 are unassigned
  CHECK(find_x86_64(100000) == nullptr);
  CHECK(find_by_name("") == nullptr);
  CHECK(find_by_name("no_such_syscall") == nullptr);
  CHECK(find_by_name("rea") == nullptr);
  CHECK(std::string(syscall_name(400)) == "syscall_400");
  CHECK(std::string(syscall_name(-7)) == "syscall_-7");
  CHECK(std::string(syscall_name(2147483647)) == "syscall_2147483647");
}

TEST_CASE("every syscall table enumerator has its own printable name", "[syscalls]") {
  std::set<std::string> kinds;
  for (int k = 0; k <= static_cast<int>(kLastArgKind); ++k) {
    kinds.insert(arg_kind_name(static_cast<ArgKind>(k)));
  }
  CHECK(kinds.size() == static_cast<size_t>(kLastArgKind) + 1);
  CHECK(kinds.count("unknown_arg_kind") == 0);
  std::set<std::string> structs;
  for (int k = 0; k <= static_cast<int>(StructKind::kSockaddr); ++k) {
    structs.insert(struct_kind_name(static_cast<StructKind>(k)));
  }
  CHECK(structs.size() == static_cast<size_t>(StructKind::kSockaddr) + 1);
  std::set<std::string> rules;
  for (int r = 0; r <= static_cast<int>(LengthRule::kCustom); ++r) {
    rules.insert(length_rule_name(static_cast<LengthRule>(r)));
  }
  CHECK(rules.size() == static_cast<size_t>(LengthRule::kCustom) + 1);
  CHECK(std::string(replay_policy_name(ReplayPolicy::kEmulate)) == "emulate");
  CHECK(std::string(replay_policy_name(ReplayPolicy::kExecute)) == "execute");
  CHECK(std::string(replay_policy_name(ReplayPolicy::kSpecial)) == "special");
  CHECK(std::string(arg_kind_name(ArgKind::kPathIn)) == "path_in");
  CHECK(std::string(length_rule_name(LengthRule::kSockLen)) == "sock_len");
}

}  // namespace
}  // namespace repro::syscalls
