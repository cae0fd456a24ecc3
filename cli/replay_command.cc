// `repro replay [TRACE]`: re-executes a recorded trace exactly.

#include <fmt/core.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <vector>

#include "cli/command.h"
#include "cli/event_printer.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"
#include "replayer/gdb_server.h"
#include "replayer/replay_session.h"

namespace repro::cli {

int shell_status(int wait_status);  // record_command.cc

namespace {

class ReplayCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("trace", trace_, "trace directory (default: the latest trace)");
    sub->add_flag("--events", print_events_, "print each event to stderr as it is replayed");
    sub->add_flag("--allow-incomplete", allow_incomplete_,
                  "replay the recorded part of a trace whose recording did not finish");
    sub->add_flag("--allow-cpu-mismatch", allow_cpu_mismatch_,
                  "replay a trace recorded on a different CPU (warns; may diverge)");
    sub->add_option("--stop-at", stop_at_,
                    "stop after event N (numbered as in `repro dump`), print where each thread "
                    "stands with its backtrace, and end the program");
    sub->add_option("--gdbserver", gdb_port_,
                    "serve the replay to gdb on this TCP port (0: any free port, printed); "
                    "gdb connects with `target remote :PORT`")
        ->check(CLI::Range(0, 65535));
    sub->add_option("--gdbserver-address", gdb_address_,
                    "the IPv4 address --gdbserver listens on (default 127.0.0.1: this host "
                    "only; whoever connects can read and change the replayed program)");
    sub->add_flag("--gdb", start_gdb_,
                  "start gdb (/usr/bin/gdb, or $REPRO_GDB) connected to the replay, with the "
                  "program's symbols");
    sub->footer(
        "The program's output is printed from the trace; nothing outside the replay is\n"
        "touched. repro exits with the program's recorded status, or 75 with a\n"
        "divergence report if the program stops following the trace.\n"
        "The program runs with no network and the file system read-only (but replay's\n"
        "scratch directory) where the host allows it (see 'repro doctor');\n"
        "REPRO_REPLAY_ISOLATION=auto|namespace|off in the environment chooses.");
  }

  int run() override {
    auto dir = resolve_trace_dir(trace_);
    if (!dir.is_ok()) {
      return report_error(dir.status());
    }
    bool under_gdb = start_gdb_ || gdb_port_.has_value();
    if (under_gdb && stop_at_) {
      return report_error(Status::error(StatusCode::kInvalidArgument,
                                        "--stop-at and gdb do not go together: use `monitor "
                                        "run-to EVENT` in gdb"));
    }
    replayer::ReplayOptions options;
    options.trace_dir = *dir;
    options.allow_incomplete = allow_incomplete_;
    options.allow_cpu_mismatch = allow_cpu_mismatch_;
    options.stop_after_event = stop_at_;
    options.on_warning = [](const std::string& text) {
      fmt::print(stderr, "repro: warning: {}\n", text);
    };
    if (print_events_) {
      options.on_event = [](uint64_t index, const format::Event& event) {
        fmt::print(stderr, "{}\n", describe_event(index, event));
      };
    }
    auto session = replayer::ReplaySession::open(options);
    if (!session.is_ok()) {
      return report_error(session.status().context(fmt::format("replaying '{}'", *dir)));
    }
    Result<replayer::ReplayOutcome> outcome =
        under_gdb ? serve_gdb(*dir, **session) : (*session)->run();
    if (!outcome.is_ok()) {
      int code = report_error(outcome.status());
      session->reset();
      return code;
    }
    session->reset();
    if (stop_at_) {
      if (outcome->stopped_at.empty()) {
        fmt::print(stderr, "repro: error: the trace has {} events, none numbered {}\n",
                   outcome->event_count, *stop_at_);
        return kExitUsage;
      }
      fmt::print(stderr, "{}", prefix_lines("repro: ", fmt::format("stopped after event #{}:\n{}",
                                                                   *stop_at_, outcome->stopped_at)));
      return kExitOk;
    }
    if (under_gdb && !outcome->stopped_at.empty()) {
      fmt::print(stderr, "{}", prefix_lines("repro: ", outcome->stopped_at));
      return kExitOk;
    }
    if (!outcome->deadlock.empty()) {
      fmt::print(stderr, "{}",
                 prefix_lines("repro: ", "deadlock, as recorded: " + outcome->deadlock));
      return kExitDeadlock;
    }
    return shell_status(outcome->wait_status);
  }

 private:
  /// Replays under gdb: serves it on --gdbserver's port, or (--gdb) on a
  /// free one to a gdb started here. With --gdb this process becomes gdb
  /// (so the shell waits for gdb and gdb owns the terminal) and a child
  /// serves the replay; only that child returns from here.
  Result<replayer::ReplayOutcome> serve_gdb(const std::string& trace_dir,
                                            replayer::ReplaySession& session) {
    replayer::GdbServerOptions options;
    options.address = gdb_address_;
    options.port = static_cast<uint16_t>(start_gdb_ ? 0 : gdb_port_.value_or(0));
    REPRO_ASSIGN_OR_RETURN(auto server, replayer::GdbServer::listen(options));
    if (!start_gdb_) {
      fmt::print(stderr, "repro: gdb server listening on {}:{}\n", options.address,
                 server->port());
      return server->serve(session);
    }
    REPRO_ASSIGN_OR_RETURN(std::string program, replayer::GdbServer::program_file(trace_dir));
    const char* gdb = getenv("REPRO_GDB");
    std::string gdb_path = gdb != nullptr && *gdb != '\0' ? gdb : "/usr/bin/gdb";
    if (access(gdb_path.c_str(), X_OK) != 0) {
      return Status::error(StatusCode::kNotFound,
                           fmt::format("--gdb needs gdb, and '{}' is not there; install gdb or "
                                       "use --gdbserver PORT with a gdb elsewhere",
                                       gdb_path));
    }
    fflush(nullptr);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
      return Status::from_errno(errno, "starting the gdb server");
    }
    if (child == 0) {
      // The server: dies with gdb, and stays out of the terminal's
      // foreground group so Ctrl-C reaches gdb only (which passes it on).
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) {
        _exit(0);
      }
      setpgid(0, 0);
      return server->serve(session);
    }
    server->close_listener();
    std::string target = fmt::format("target remote 127.0.0.1:{}", server->port());
    std::vector<const char*> argv = {gdb_path.c_str(), "-q", "-ex", "set sysroot /", "-ex",
                                     target.c_str(), program.c_str(), nullptr};
    execv(gdb_path.c_str(), const_cast<char* const*>(argv.data()));
    fmt::print(stderr, "repro: error: running {}: {}\n", gdb_path, strerror(errno));
    _exit(kExitFailure);
  }

  std::string trace_;
  std::optional<int> gdb_port_;
  std::string gdb_address_ = "127.0.0.1";
  bool start_gdb_ = false;
  bool print_events_ = false;
  std::optional<uint64_t> stop_at_;
  bool allow_incomplete_ = false;
  bool allow_cpu_mismatch_ = false;
};

}  // namespace

std::unique_ptr<Command> make_replay_command() { return std::make_unique<ReplayCommand>(); }

}  // namespace repro::cli
