// repro: record a Linux program's execution and replay it exactly.

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"

int main(int argc, char** argv) {
  using namespace repro::cli;  // NOLINT: main only
  CLI::App app{"repro: record a program's run (every syscall, signal and thread switch) and "
               "replay it exactly, without hardware performance counters"};
  app.set_version_flag("--version", std::string("repro ") + REPRO_VERSION);
  app.require_subcommand(1);
  app.footer(exit_codes_help());

  struct Entry {
    const char* name;
    const char* help;
    std::unique_ptr<Command> command;
  };
  std::vector<Entry> entries;
  entries.push_back({"record", "run a program under the recorder and write a trace", make_record_command()});
  entries.push_back({"replay", "re-execute a recorded trace exactly", make_replay_command()});
  entries.push_back({"hunt", "record again and again with chaos scheduling until a failure is caught", make_hunt_command()});
  entries.push_back({"ci", "run a command natively; if it fails, hunt that failure and keep its trace", make_ci_command()});
  entries.push_back({"bench", "what recording costs a command: native, recorded and replayed runs side by side", make_bench_command()});
  entries.push_back({"report", "what happened in a recorded run: its processes, how they ended, and where it failed",
                     make_report_command()});
  entries.push_back({"dump", "print a trace's header and events, one per line", make_dump_command()});
  entries.push_back({"export", "write a trace as a timeline (--perfetto: Chrome trace-event JSON)",
                     make_export_command()});
  entries.push_back({"check", "validate a trace: complete, incomplete, or corrupt; file copies intact",
                     make_check_command()});
  entries.push_back({"syscalls", "print the syscall table, or one syscall's row", make_syscalls_command()});
  entries.push_back({"doctor", "what this host allows and what repro does about it", make_doctor_command()});

  std::vector<std::pair<CLI::App*, Command*>> subs;
  for (auto& entry : entries) {
    CLI::App* sub = app.add_subcommand(entry.name, entry.help);
    entry.command->declare(sub);
    subs.emplace_back(sub, entry.command.get());
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "repro: error: {}\nrun 'repro --help' for usage\n", e.what());
    return kExitUsage;
  }
  for (auto& [sub, command] : subs) {
    if (sub->parsed()) {
      return command->run();
    }
  }
  return kExitUsage;
}
