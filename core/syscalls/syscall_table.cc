#include "core/syscalls/syscall_table.h"

#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <numeric>

namespace repro::syscalls {
namespace {

// The rows, expanded from syscall-tables/syscalls.def. The macros below are
// the vocabulary of that file (see its header comment); they exist only while
// it is included.
namespace def {

constexpr uint32_t MayBlock = kMayBlock;
constexpr uint32_t Known = kEffectsKnown;
constexpr uint32_t NoReturn = kNoReturn;
constexpr uint32_t Unsupported = kUnsupported;

// clang-format off
// LengthRule, length_arg, fixed_bytes for each rule of OUT() / INOUT().
#define REPRO_LENGTH_Arg(index) LengthRule::kArg, index, 0
#define REPRO_LENGTH_Result(cap_index) LengthRule::kResult, cap_index, 0
#define REPRO_LENGTH_Fixed(bytes) LengthRule::kFixed, 0, bytes
#define REPRO_LENGTH_ArgTimesFixed(index, bytes) LengthRule::kArgTimesFixed, index, bytes
#define REPRO_LENGTH_ResultTimesFixed(bytes) LengthRule::kResultTimesFixed, 0, bytes
#define REPRO_LENGTH_SockLen(index) LengthRule::kSockLen, index, 0
#define REPRO_LENGTH_Iovec(count_index) LengthRule::kIovec, count_index, 0
#define REPRO_LENGTH_Msghdr() LengthRule::kMsghdr, 0, 0
#define REPRO_LENGTH_Mmsghdr() LengthRule::kMmsghdr, 0, 0
#define REPRO_LENGTH_CString(index) LengthRule::kCString, index, 0
#define REPRO_LENGTH_Custom() LengthRule::kCustom, 0, 0

#define ARG(kind) ArgSpec{ArgKind::k##kind, LengthRule::kNone, 0, 0}
#define OUT(rule, ...) ArgSpec{ArgKind::kOut, REPRO_LENGTH_##rule(__VA_ARGS__)}
#define INOUT(rule, ...) ArgSpec{ArgKind::kInOut, REPRO_LENGTH_##rule(__VA_ARGS__)}
#define OUTS(structure, rule, ...) \
  ArgSpec{ArgKind::kOut, REPRO_LENGTH_##rule(__VA_ARGS__), StructKind::k##structure}
#define INOUTS(structure, rule, ...) \
  ArgSpec{ArgKind::kInOut, REPRO_LENGTH_##rule(__VA_ARGS__), StructKind::k##structure}
#define REPRO_SYSCALL(name, x86_64_nr, aarch64_nr, arg_count, policy, flags, ...) \
  SyscallInfo{#name, x86_64_nr, aarch64_nr, arg_count, ReplayPolicy::k##policy, flags, \
              {__VA_ARGS__}},
// clang-format on

constexpr SyscallInfo kRows[] = {
#include "syscall-tables/syscalls.def"
};

#undef REPRO_SYSCALL
#undef INOUTS
#undef OUTS
#undef INOUT
#undef OUT
#undef ARG
#undef REPRO_LENGTH_Custom
#undef REPRO_LENGTH_CString
#undef REPRO_LENGTH_Mmsghdr
#undef REPRO_LENGTH_Msghdr
#undef REPRO_LENGTH_Iovec
#undef REPRO_LENGTH_SockLen
#undef REPRO_LENGTH_ResultTimesFixed
#undef REPRO_LENGTH_ArgTimesFixed
#undef REPRO_LENGTH_Fixed
#undef REPRO_LENGTH_Result
#undef REPRO_LENGTH_Arg

}  // namespace def

using def::kRows;
constexpr size_t kRowCount = std::size(kRows);

// Compile-time check of every row's x86-64 number against <sys/syscall.h>,
// in the spirit of rr's CheckSyscallNumbers. A row whose SYS_<name> the libc
// headers lack (headers older than the table) is skipped here; the unit test
// compares the table with the kernel header at run time.
//
// SYS_<name> is stringized after expansion: "0" for read, or "SYS_foo" when
// the macro does not exist, which libc_number() turns into kNotInLibc.
constexpr int kNotInLibc = -1;

constexpr int libc_number(std::string_view expanded) {
  if (expanded.empty()) {
    return kNotInLibc;
  }
  int number = 0;
  for (char c : expanded) {
    if (c < '0' || c > '9') {
      return kNotInLibc;
    }
    number = number * 10 + (c - '0');
  }
  return number;
}

#define REPRO_STRINGIZE(x) #x
#define REPRO_STRINGIZE_EXPANDED(x) REPRO_STRINGIZE(x)
#define REPRO_SYSCALL(name, x86_64_nr, ...)                                           \
  static_assert(libc_number(REPRO_STRINGIZE_EXPANDED(SYS_##name)) == kNotInLibc ||    \
                    libc_number(REPRO_STRINGIZE_EXPANDED(SYS_##name)) == (x86_64_nr), \
                "syscalls.def: x86-64 number of " #name " differs from <sys/syscall.h>");
#include "syscall-tables/syscalls.def"
#undef REPRO_SYSCALL
#undef REPRO_STRINGIZE_EXPANDED
#undef REPRO_STRINGIZE

// The number index below and all_syscalls() rely on this order.
constexpr bool rows_in_number_order() {
  for (size_t i = 1; i < kRowCount; ++i) {
    if (kRows[i - 1].x86_64 >= kRows[i].x86_64) {
      return false;
    }
  }
  return kRows[0].x86_64 >= 0;
}
static_assert(rows_in_number_order(),
              "syscalls.def: rows must be in strictly increasing x86-64 number order");

constexpr int kMaxX86_64 = kRows[kRowCount - 1].x86_64;

// Row index by x86-64 number, -1 for holes (335..423 are unassigned).
constexpr std::array<int16_t, kMaxX86_64 + 1> kRowByNumber = [] {
  std::array<int16_t, kMaxX86_64 + 1> index{};
  index.fill(-1);
  for (size_t i = 0; i < kRowCount; ++i) {
    index[kRows[i].x86_64] = static_cast<int16_t>(i);
  }
  return index;
}();

// Row indexes sorted by name, for binary search.
constexpr std::array<uint16_t, kRowCount> kRowsByName = [] {
  std::array<uint16_t, kRowCount> order{};
  std::iota(order.begin(), order.end(), uint16_t{0});
  std::sort(order.begin(), order.end(), [](uint16_t a, uint16_t b) {
    return std::string_view(kRows[a].name) < std::string_view(kRows[b].name);
  });
  return order;
}();

}  // namespace

const SyscallInfo* find_x86_64(int number) {
  if (number < 0 || number > kMaxX86_64) {
    return nullptr;
  }
  int16_t row = kRowByNumber[number];
  return row < 0 ? nullptr : &kRows[row];
}

const SyscallInfo* find_by_name(std::string_view name) {
  auto it = std::lower_bound(
      kRowsByName.begin(), kRowsByName.end(), name,
      [](uint16_t row, std::string_view wanted) { return kRows[row].name < wanted; });
  if (it == kRowsByName.end() || kRows[*it].name != name) {
    return nullptr;
  }
  return &kRows[*it];
}

std::span<const SyscallInfo> all_syscalls() { return kRows; }

const char* syscall_name(int x86_64_number) {
  if (const SyscallInfo* info = find_x86_64(x86_64_number)) {
    return info->name;
  }
  // "syscall_" + an int with sign: 8 + 11 characters + NUL.
  thread_local char unknown[32];
  std::snprintf(unknown, sizeof(unknown), "syscall_%d", x86_64_number);
  return unknown;
}

const char* arg_kind_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::kNone:
      return "none";
    case ArgKind::kInt:
      return "int";
    case ArgKind::kFd:
      return "fd";
    case ArgKind::kPathIn:
      return "path_in";
    case ArgKind::kPtrIn:
      return "ptr_in";
    case ArgKind::kFlags:
      return "flags";
    case ArgKind::kPid:
      return "pid";
    case ArgKind::kSignal:
      return "signal";
    case ArgKind::kAddr:
      return "addr";
    case ArgKind::kOut:
      return "out";
    case ArgKind::kInOut:
      return "in_out";
    case ArgKind::kSockaddrIn:
      return "sockaddr_in";
    case ArgKind::kBufIn:
      return "buf_in";
    case ArgKind::kNameIn:
      return "name_in";
    case ArgKind::kMsghdrIn:
      return "msghdr_in";
    case ArgKind::kAtFd:
      return "at_fd";
    case ArgKind::kOpenFlags:
      return "open_flags";
    case ArgKind::kFdFlags:
      return "fd_flags";
    case ArgKind::kMode:
      return "mode";
    case ArgKind::kAtFlags:
      return "at_flags";
    case ArgKind::kAccessMode:
      return "access_mode";
    case ArgKind::kMmapProt:
      return "mmap_prot";
    case ArgKind::kMmapFlags:
      return "mmap_flags";
    case ArgKind::kWhence:
      return "whence";
    case ArgKind::kClockId:
      return "clock_id";
    case ArgKind::kFutexOp:
      return "futex_op";
    case ArgKind::kSockDomain:
      return "sock_domain";
    case ArgKind::kSockType:
      return "sock_type";
    case ArgKind::kSigmaskHow:
      return "sigmask_how";
    case ArgKind::kFcntlCmd:
      return "fcntl_cmd";
  }
  return "unknown_arg_kind";
}

const char* length_rule_name(LengthRule rule) {
  switch (rule) {
    case LengthRule::kNone:
      return "none";
    case LengthRule::kArg:
      return "arg";
    case LengthRule::kResult:
      return "result";
    case LengthRule::kFixed:
      return "fixed";
    case LengthRule::kArgTimesFixed:
      return "arg_times_fixed";
    case LengthRule::kResultTimesFixed:
      return "result_times_fixed";
    case LengthRule::kSockLen:
      return "sock_len";
    case LengthRule::kIovec:
      return "iovec";
    case LengthRule::kMsghdr:
      return "msghdr";
    case LengthRule::kMmsghdr:
      return "mmsghdr";
    case LengthRule::kCString:
      return "cstring";
    case LengthRule::kCustom:
      return "custom";
  }
  return "unknown_length_rule";
}

const char* struct_kind_name(StructKind kind) {
  switch (kind) {
    case StructKind::kNone:
      return "none";
    case StructKind::kStat:
      return "stat";
    case StructKind::kTimespec:
      return "timespec";
    case StructKind::kPollfds:
      return "pollfds";
    case StructKind::kFdPair:
      return "fd_pair";
    case StructKind::kSockaddr:
      return "sockaddr";
  }
  return "unknown_struct_kind";
}

const char* replay_policy_name(ReplayPolicy policy) {
  switch (policy) {
    case ReplayPolicy::kEmulate:
      return "emulate";
    case ReplayPolicy::kExecute:
      return "execute";
    case ReplayPolicy::kSpecial:
      return "special";
  }
  return "unknown_replay_policy";
}

}  // namespace repro::syscalls
