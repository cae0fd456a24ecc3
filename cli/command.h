#pragma once
// Command: one subcommand of the `repro` binary. Each subclass lives in its
// own file (record_command.cc, ...), declares its options on the CLI11
// subcommand it is given, and runs when that subcommand was chosen.

#include <CLI/CLI.hpp>
#include <memory>
#include <vector>

namespace repro::cli {

class Command {
 public:
  virtual ~Command() = default;
  /// Declares the subcommand's options. `sub` lives as long as the app.
  virtual void declare(CLI::App* sub) = 0;
  /// Runs the command; returns the process exit status.
  virtual int run() = 0;
};

std::unique_ptr<Command> make_syscalls_command();
std::unique_ptr<Command> make_dump_command();
std::unique_ptr<Command> make_check_command();
std::unique_ptr<Command> make_record_command();
std::unique_ptr<Command> make_replay_command();
std::unique_ptr<Command> make_doctor_command();
std::unique_ptr<Command> make_hunt_command();
std::unique_ptr<Command> make_ci_command();
std::unique_ptr<Command> make_bench_command();
std::unique_ptr<Command> make_report_command();
std::unique_ptr<Command> make_export_command();

}  // namespace repro::cli
