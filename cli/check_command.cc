// `repro check [TRACE]`: validates a whole trace and says what state it is in.

#include <fmt/core.h>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"
#include "core/format/trace_reader.h"

namespace repro::cli {
namespace {

class CheckCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("trace", trace_, "trace directory (default: the latest trace)");
  }

  int run() override {
    auto dir = resolve_trace_dir(trace_);
    if (!dir.is_ok()) {
      return report_error(dir.status());
    }
    auto opened = format::TraceReader::open(*dir);
    if (!opened.is_ok()) {
      return report_error(opened.status());
    }
    format::TraceReader& reader = **opened;
    format::Event event;
    while (true) {
      auto more = reader.next(&event);
      if (!more.is_ok()) {
        fmt::print("{}: corrupt after {} valid events: {}\n", *dir, reader.events_read(),
                   more.status().message());
        return kExitBadTrace;
      }
      if (!*more) {
        break;
      }
    }
    if (reader.state() == format::TraceState::kComplete) {
      fmt::print("{}: complete, {} events\n", *dir, reader.events_read());
      return kExitOk;
    }
    fmt::print("{}: incomplete, {} valid events", *dir, reader.events_read());
    if (reader.dropped_bytes() > 0) {
      fmt::print(", {} bytes of a partial frame dropped", reader.dropped_bytes());
    }
    fmt::print("\n");
    return kExitBadTrace;
  }

 private:
  std::string trace_;
};

}  // namespace

std::unique_ptr<Command> make_check_command() { return std::make_unique<CheckCommand>(); }

}  // namespace repro::cli
