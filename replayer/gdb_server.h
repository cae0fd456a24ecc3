#pragma once
// GdbServer: lets gdb stop and inspect a replay through the GDB remote
// serial protocol (`repro replay --gdbserver PORT`, `--gdb`).
//
// Why it is built this way (docs/replaying.md, "Replaying under gdb"):
// - The replay drives; gdb only watches. The server runs the session
//   event by event (ReplaySession::begin/replay_next/finish) and, as its
//   ReplayWatcher, sees each thread before each instruction while gdb has
//   breakpoints, watchpoints or a step pending. A stop is a call into the
//   packet loop from inside the replay, which returns when gdb resumes:
//   every other thread stays where the replay holds it.
// - Breakpoints compare rip, write watchpoints compare values, both at
//   every instruction (single-stepping), so nothing is written into the
//   program and debug registers are not needed. The same trace gives the
//   same stops with the same values every time. Slow (a ptrace stop per
//   instruction) while gdb has breakpoints; free-running otherwise.
// - Threads are the replay's threads of the program's first process, gdb
//   thread ids their recorded tids; other processes run unwatched.
// - Changing registers or memory from gdb is allowed and makes the replay
//   diverge from the trace, which the replay's checks then report.
//
// One connection, one replay. Not thread-safe; runs on the replay thread.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/base/scoped_fd.h"
#include "core/base/status.h"
#include "replayer/gdb_protocol.h"
#include "replayer/gdb_registers.h"
#include "replayer/replay_session.h"
#include "replayer/replay_watcher.h"

namespace repro::replayer {

struct GdbServerOptions {
  std::string address = "127.0.0.1";  // IPv4 address to listen on
  uint16_t port = 0;                  // 0: any free port
};

class GdbServer : public ReplayWatcher {
 public:
  /// Listens on the address and port (before the replay starts, so gdb can
  /// connect at once). Errors: invalid_argument (not an IPv4 address),
  /// io_error (the port is taken, ...).
  static Result<std::unique_ptr<GdbServer>> listen(const GdbServerOptions& options);
  /// The port listened on (the one chosen, for port 0).
  uint16_t port() const { return port_; }
  /// Closes the listening socket (in a process that will not serve).
  void close_listener() { listener_.reset(); }

  /// Waits for gdb to connect, then replays `session` (opened, not begun)
  /// under its control to the end, and reports the program's exit to gdb.
  /// Returns what ReplaySession::run() would; if gdb ends the replay
  /// first (kill), the outcome's stopped_at says where. Errors: those of
  /// the replay (gdb is told it ended with SIGKILL), io_error on the socket.
  Result<ReplayOutcome> serve(ReplaySession& session);

  /// The trace's copy of the program's executable, for gdb's symbols.
  /// Errors: not_found, corruption (a trace without a program start).
  static Result<std::string> program_file(const std::string& trace_dir);

  // ReplayWatcher.
  bool wants_instruction_steps(const ReplayThread& t) override;
  Result<bool> at_instruction(const ReplayThread& t, const os::Registers& regs,
                              Arrival arrival) override;

 private:
  explicit GdbServer(ScopedFd listener, uint16_t port)
      : listener_(std::move(listener)), port_(port) {}

  /// What the packet loop ended with.
  enum class Resume { kContinue, kDetach, kKill, kDisconnected };
  struct Stop {
    uint32_t thread = 0;  // replay thread index
    int signal = 5;       // SIGTRAP; SIGINT for an interrupt
    std::string reason;   // "swbreak:;", "watch:ADDR;" or ""
  };
  /// Reports `stop` to gdb and serves packets until gdb resumes.
  Status stop_here(const Stop& stop);
  /// Serves packets until gdb resumes, detaches, kills or goes away.
  Result<Resume> serve_packets();
  /// The reply to one packet; sets *resume when the packet resumes.
  Result<std::string> answer(const std::string& packet, std::optional<Resume>* resume);
  std::string stop_reply() const;
  std::string thread_list() const;
  std::string monitor(const std::string& command);
  std::string describe_position();
  Result<std::string> read_registers_of(const ReplayThread& t, GdbRegisterState* state);
  std::string xfer(const std::string& annex_data, uint64_t offset, uint64_t length);
  std::string read_memory_reply(uint64_t address, uint64_t length);
  std::string write_memory_reply(uint64_t address, const std::string& bytes);
  std::string resume_with(const std::string& actions, std::optional<Resume>* resume);
  /// The watchpoint whose value changed (its address), updating values.
  std::optional<uint64_t> changed_watchpoint(pid_t tid);
  /// Where to report a stop between events: the last event's thread, or
  /// another live thread of the first process if that one is gone or
  /// elsewhere; nullopt if the process has none left.
  std::optional<uint32_t> thread_between_events() const;
  /// A live thread of the first process: by gdb id (0 or -1: the stopped one).
  const ReplayThread* thread_by_gdb_id(int64_t id) const;
  int64_t gdb_id(const ReplayThread& t) const;
  bool watched_process(const ReplayThread& t) const;
  /// The tid to read and write the first process's memory through.
  pid_t memory_tid() const;

  ScopedFd listener_;
  uint16_t port_ = 0;
  std::unique_ptr<GdbConnection> connection_;
  ReplaySession* session_ = nullptr;
  Stop stop_;
  int64_t general_thread_ = 0;  // Hg: the thread g/G/p/P apply to (0: the stopped one)
  std::set<uint64_t> breakpoints_;
  std::map<uint64_t, std::string> watchpoints_;  // address -> value last seen (its length)
  bool step_pending_ = false;
  int64_t step_thread_ = 0;  // gdb id of the thread to step (0: any)
  std::optional<uint64_t> run_to_event_;
  bool detached_ = false;
  bool killed_ = false;
  uint64_t steps_since_poll_ = 0;
};

}  // namespace repro::replayer
