// EffectsTracker on synthetic events: descriptors followed through open,
// dup, fork, exec and chdir to the paths and endpoints their reads and
// writes touched.

#include "analysis/effects.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "analysis/effects_report.h"
#include "analysis/process_files.h"
#include "core/fastpath/fastpath_abi.h"

namespace repro::analysis {
namespace {

format::Event thread_start(uint32_t thread, uint32_t parent, int32_t tid, uint64_t flags) {
  format::Event event;
  event.kind = format::EventKind::kThreadStart;
  event.thread = thread;
  event.parent_thread = parent;
  event.recorded_tid = tid;
  event.clone_flags = flags;
  return event;
}

format::Event syscall(uint32_t thread, int number, std::array<uint64_t, 6> args, int64_t result) {
  format::Event event;
  event.kind = format::EventKind::kSyscall;
  event.thread = thread;
  event.syscall_number = number;
  event.args = args;
  event.result = result;
  return event;
}

format::Event with_input(format::Event event, uint8_t index, std::string bytes) {
  event.inputs.push_back({index, std::move(bytes)});
  return event;
}

format::Event openat(uint32_t thread, const std::string& path, int flags, int64_t fd) {
  return with_input(
      syscall(thread, SYS_openat,
              {static_cast<uint64_t>(AT_FDCWD), 1, static_cast<uint64_t>(flags), 0644}, fd),
      1, path);
}

format::Event write(uint32_t thread, int fd, int64_t bytes) {
  return syscall(thread, SYS_write, {static_cast<uint64_t>(fd), 1, static_cast<uint64_t>(bytes)},
                 bytes);
}

format::Event exec(uint32_t thread, const std::string& path) {
  format::Event event;
  event.kind = format::EventKind::kExec;
  event.thread = thread;
  event.path = path;
  event.data = path + std::string(1, '\0') + "-x" + std::string(1, '\0');
  return event;
}

TEST_CASE("normalize_path applies . and .. lexically") {
  CHECK(normalize_path("/a/./b//c/../d") == "/a/b/d");
  CHECK(normalize_path("/..") == "/");
  CHECK(normalize_path("/") == "/");
}

TEST_CASE("writes through dup2 and a forked child count toward the opened path") {
  EffectsTracker tracker("/work");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(openat(0, "out.txt", O_WRONLY | O_CREAT | O_TRUNC, 3));
  tracker.observe(syscall(0, SYS_dup2, {3, 1}, 1));
  tracker.observe(syscall(0, SYS_close, {3}, 0));
  tracker.observe(thread_start(1, 0, 101, SIGCHLD));  // fork: a copy of the table
  tracker.observe(write(1, 1, 5));
  tracker.observe(syscall(0, SYS_close, {1}, 0));  // the parent's close leaves the child's
  tracker.observe(write(1, 1, 2));
  tracker.observe(write(0, 1, 9));  // closed in the parent: unknown, not counted
  Effects effects = tracker.finish();
  REQUIRE(effects.files.count("/work/out.txt") == 1);
  const FileEffect& out = effects.files.at("/work/out.txt");
  CHECK(out.bytes_written == 7);
  CHECK(out.writes == 2);
  CHECK(out.creation == Creation::kIfMissing);
  CHECK(out.maybe_truncated);
  CHECK(effects.unknown_descriptor_calls == 1);
  CHECK(effects.processes == 2);
}

// A kSyscallBatch event of thread `thread` holding one record per call:
// a syscall on descriptor `fd` with result `result` (no output, no input).
format::Event batch(uint32_t thread, const std::vector<std::pair<int, int64_t>>& calls, int fd) {
  format::Event event;
  event.kind = format::EventKind::kSyscallBatch;
  event.thread = thread;
  for (const auto& [number, result] : calls) {
    repro_fastpath_record record{};
    record.record_bytes = sizeof record;
    record.syscall_number = number;
    record.args[0] = static_cast<uint64_t>(fd);
    record.args[2] = static_cast<uint64_t>(result);
    record.result = result;
    event.data.append(reinterpret_cast<const char*>(&record), sizeof record);
  }
  return event;
}

TEST_CASE("the fast path's batched writes and reads count toward the opened path",
          "[analysis][effects]") {
  EffectsTracker tracker("/work");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(openat(0, "data.bin", O_RDWR | O_CREAT, 3));
  tracker.observe(batch(0, {{SYS_write, 4096}, {SYS_pwrite64, 100}, {SYS_read, 10}}, 3));
  tracker.observe(write(0, 3, 1));
  Effects effects = tracker.finish();
  REQUIRE(effects.files.count("/work/data.bin") == 1);
  const FileEffect& data = effects.files.at("/work/data.bin");
  CHECK(data.bytes_written == 4197);
  CHECK(data.writes == 3);
  CHECK(data.bytes_read == 10);
  CHECK(effects.undecoded_batches == 0);
}

TEST_CASE("a batch that does not decode is counted, not guessed at", "[analysis][effects]") {
  EffectsTracker tracker("/work");
  tracker.observe(thread_start(0, 0, 100, 0));
  format::Event broken = batch(0, {{SYS_write, 5}}, 3);
  broken.data.resize(broken.data.size() - 1);
  tracker.observe(broken);
  CHECK(tracker.finish().undecoded_batches == 1);
}

TEST_CASE("exec closes close-on-exec descriptors; CLONE_FILES shares the table") {
  EffectsTracker tracker("/w");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(openat(0, "/tmp/keep", O_WRONLY | O_CREAT, 3));
  tracker.observe(openat(0, "/tmp/cloexec", O_WRONLY | O_CREAT | O_CLOEXEC, 4));
  tracker.observe(thread_start(1, 0, 101, CLONE_VM | CLONE_FILES | CLONE_THREAD));
  tracker.observe(syscall(1, SYS_fcntl, {3, F_DUPFD, 10}, 10));  // seen by thread 0 too
  tracker.observe(exec(0, "/bin/true"));
  tracker.observe(write(0, 3, 1));
  tracker.observe(write(0, 4, 1));  // closed by the exec
  tracker.observe(write(0, 10, 4));
  Effects effects = tracker.finish();
  CHECK(effects.files.at("/tmp/keep").bytes_written == 5);
  CHECK(effects.files.at("/tmp/cloexec").writes == 0);
  CHECK(effects.unknown_descriptor_calls == 1);
  REQUIRE(effects.programs.size() == 1);
  CHECK(effects.programs[0].pid == 100);
  CHECK(effects.programs[0].argv == std::vector<std::string>{"/bin/true", "-x"});
  CHECK(effects.processes == 1);
  CHECK(effects.threads == 2);
}

TEST_CASE("relative paths follow chdir, fchdir and directory descriptors") {
  EffectsTracker tracker("/home/u");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(with_input(syscall(0, SYS_chdir, {1}, 0), 0, "../v/src"));
  tracker.observe(with_input(syscall(0, SYS_unlink, {1}, 0), 0, "old.o"));
  tracker.observe(openat(0, "/etc", O_RDONLY | O_DIRECTORY, 5));
  tracker.observe(
      with_input(with_input(syscall(0, SYS_renameat, {5, 1, static_cast<uint64_t>(AT_FDCWD), 2}, 0),
                            1, "a.conf"),
                 3, "b.conf"));
  tracker.observe(syscall(0, SYS_fchdir, {5}, 0));
  tracker.observe(with_input(syscall(0, SYS_mkdir, {1, 0755}, 0), 0, "new"));
  tracker.observe(syscall(0, SYS_fchdir, {42},
                          0));  // a descriptor the trace does not explain
  tracker.observe(with_input(syscall(0, SYS_unlink, {1}, 0), 0, "lost"));
  Effects effects = tracker.finish();
  CHECK(effects.files.at("/home/v/src/old.o").deleted);
  CHECK(effects.files.at("/etc/a.conf").renamed_to ==
        std::vector<std::string>{"/home/v/src/b.conf"});
  CHECK(effects.files.at("/home/v/src/b.conf").renamed_from ==
        std::vector<std::string>{"/etc/a.conf"});
  CHECK(effects.files.at("/etc/new").creation == Creation::kCreated);
  CHECK(effects.files.at("/etc/new").is_directory);
  REQUIRE(effects.files.count("?/lost") == 1);
  CHECK_FALSE(effects.files.at("?/lost").resolved);
}

TEST_CASE("O_CREAT after a failed stat is a creation; O_EXCL always is") {
  EffectsTracker tracker("/d");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(with_input(
      syscall(0, SYS_newfstatat, {static_cast<uint64_t>(AT_FDCWD), 1, 2, 0}, -ENOENT), 1, "fresh"));
  tracker.observe(openat(0, "fresh", O_WRONLY | O_CREAT | O_TRUNC, 3));
  tracker.observe(openat(0, "lock", O_WRONLY | O_CREAT | O_EXCL, 4));
  tracker.observe(with_input(syscall(0, SYS_stat, {1, 2}, 0), 0, "/d/old"));
  tracker.observe(openat(0, "old", O_WRONLY | O_CREAT | O_TRUNC, 5));
  Effects effects = tracker.finish();
  CHECK(effects.files.at("/d/fresh").creation == Creation::kCreated);
  CHECK_FALSE(effects.files.at("/d/fresh").truncated);
  CHECK(effects.files.at("/d/lock").creation == Creation::kCreated);
  CHECK(effects.files.at("/d/old").creation == Creation::kNone);
  CHECK(effects.files.at("/d/old").truncated);
}

std::string inet_address(const char* ip, uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  inet_pton(AF_INET, ip, &in.sin_addr);
  return std::string(reinterpret_cast<const char*>(&in), sizeof in);
}

TEST_CASE("socket bytes count toward the connected peer and the listening address") {
  EffectsTracker tracker("/");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(syscall(0, SYS_socket, {AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0}, 3));
  tracker.observe(
      with_input(syscall(0, SYS_connect, {3, 1, 16}, 0), 1, inet_address("127.0.0.1", 4000)));
  tracker.observe(write(0, 3, 4));
  tracker.observe(syscall(0, SYS_recvfrom, {3, 1, 100, 0, 0, 0}, 6));
  tracker.observe(syscall(0, SYS_socket, {AF_INET, SOCK_STREAM, 0}, 4));
  tracker.observe(
      with_input(syscall(0, SYS_bind, {4, 1, 16}, 0), 1, inet_address("0.0.0.0", 8080)));
  tracker.observe(syscall(0, SYS_listen, {4, 8}, 0));
  format::Event accept = syscall(0, SYS_accept4, {4, 0x1000, 0x2000, 0}, 5);
  accept.writes.push_back({0x1000, inet_address("10.0.0.2", 5555)});
  tracker.observe(accept);
  tracker.observe(syscall(0, SYS_read, {5, 1, 100}, 10));
  tracker.observe(syscall(0, SYS_socket, {AF_INET, SOCK_STREAM, 0}, 6));
  tracker.observe(with_input(syscall(0, SYS_connect, {6, 1, 16}, -ECONNREFUSED), 1,
                             inet_address("127.0.0.1", 9)));
  Effects effects = tracker.finish();
  const Endpoint& peer = effects.endpoints.at("connected tcp 127.0.0.1:4000");
  CHECK(peer.connections == 1);
  CHECK(peer.bytes_sent == 4);
  CHECK(peer.bytes_received == 6);
  const Endpoint& server = effects.endpoints.at("listening tcp 0.0.0.0:8080");
  CHECK(server.connections == 1);
  CHECK(server.bytes_received == 10);
  CHECK(server.peers == std::set<std::string>{"10.0.0.2:5555"});
  CHECK(effects.endpoints.count("bound tcp 0.0.0.0:8080") == 0);
  CHECK(effects.endpoints.at("connected tcp 127.0.0.1:9").failures.at("ECONNREFUSED") == 1);
  auto json = effects_json(effects, {});
  CHECK(json["endpoints"].size() == 3);
}

TEST_CASE("datagrams count toward the address they went to or came from") {
  EffectsTracker tracker("/");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(syscall(0, SYS_socket, {AF_INET, SOCK_DGRAM, 0}, 3));
  tracker.observe(with_input(syscall(0, SYS_sendto, {3, 1, 20, 0, 2, 16}, 20), 4,
                             inet_address("192.0.2.1", 53)));
  msghdr header{};
  header.msg_name = reinterpret_cast<void*>(0x3000);
  header.msg_namelen = sizeof(sockaddr_in);
  format::Event receive = syscall(0, SYS_recvmsg, {3, 0x2000, 0}, 48);
  receive.writes.push_back({0x2000, std::string(reinterpret_cast<char*>(&header), sizeof header)});
  receive.writes.push_back({0x3000, inet_address("192.0.2.1", 53)});
  tracker.observe(receive);
  Effects effects = tracker.finish();
  CHECK(effects.endpoints.at("sent-to udp 192.0.2.1:53").bytes_sent == 20);
  CHECK(effects.endpoints.at("received-from udp 192.0.2.1:53").bytes_received == 48);
}

TEST_CASE("signals to recorded processes are inside; others are listed") {
  EffectsTracker tracker("/");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(thread_start(1, 0, 101, SIGCHLD));
  tracker.observe(syscall(0, SYS_kill, {101, SIGTERM}, 0));
  tracker.observe(syscall(0, SYS_tgkill, {100, 100, SIGABRT}, 0));
  tracker.observe(syscall(1, SYS_kill, {4242, SIGKILL}, -EPERM));
  tracker.observe(syscall(1, SYS_kill, {static_cast<uint64_t>(-1), SIGHUP}, 0));
  tracker.observe(syscall(0, SYS_pidfd_open, {101, 0}, 7));
  tracker.observe(syscall(0, SYS_pidfd_send_signal, {7, SIGINT, 0, 0}, 0));  // recorded: inside
  tracker.observe(syscall(0, SYS_pidfd_open, {777, 0}, 8));
  tracker.observe(syscall(0, SYS_pidfd_send_signal, {8, SIGINT, 0, 0}, 0));
  Effects effects = tracker.finish();
  REQUIRE(effects.outside_signals.size() == 3);
  CHECK(effects.outside_signals[2].target == 777);
  CHECK(effects.outside_signals[2].target_description == "pid 777");
  CHECK(effects.outside_signals[0].target == 4242);
  CHECK(effects.outside_signals[0].from_pid == 101);
  CHECK(effects.outside_signals[0].result == -EPERM);
  CHECK(effects.outside_signals[1].target_description == "every process it may signal");
}

TEST_CASE("reads of libraries and /proc are counted by group unless --all") {
  EffectsTracker tracker("/");
  tracker.observe(thread_start(0, 0, 100, 0));
  tracker.observe(openat(0, "/usr/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC, 3));
  tracker.observe(syscall(0, SYS_read, {3, 1, 832}, 832));
  tracker.observe(openat(0, "/proc/self/maps", O_RDONLY, 4));
  tracker.observe(openat(0, "/home/u/in.txt", O_RDONLY, 5));
  tracker.observe(syscall(0, SYS_read, {5, 1, 100}, 12));
  Effects effects = tracker.finish();
  auto json = effects_json(effects, {});
  REQUIRE(json["files_read"].size() == 1);
  CHECK(json["files_read"][0]["path"] == "/home/u/in.txt");
  CHECK(json["files_read"][0]["bytes_read"] == 12);
  CHECK(json["left_out"]["libraries"]["bytes_read"] == 832);
  CHECK(json["left_out"]["proc"]["files"] == 1);
  CHECK(effects_json(effects, {.all = true})["files_read"].size() == 3);
}

TEST_CASE("each program is one line of text, its argv shell-quoted") {
  EffectsTracker tracker("/");
  tracker.observe(thread_start(0, 0, 100, 0));
  format::Event event = exec(0, "/bin/sh");
  event.data = std::string("sh\0-c\0echo 'a'\nexit\0", 20);
  tracker.observe(event);
  std::string text = effects_text(tracker.finish(), {});
  CHECK(text.find("  pid 100  /bin/sh  $ sh -c $'echo \\'a\\'\\nexit'\n") != std::string::npos);
}

}  // namespace
}  // namespace repro::analysis
