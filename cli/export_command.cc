// `repro export --perfetto [-o FILE] [TRACE]`: writes a trace as a timeline
// in Chrome trace-event JSON (analysis/perfetto_export.h), for the Perfetto
// UI and chrome://tracing.

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "analysis/perfetto_export.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"
#include "core/format/trace_reader.h"

namespace repro::cli {
namespace {

class ExportCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("trace", trace_, "trace directory (default: the latest trace)");
    sub->add_flag("--perfetto", perfetto_,
                  "Chrome trace-event JSON for ui.perfetto.dev and chrome://tracing: a track "
                  "per thread, running slices, syscalls as slices, signals and preemptions as "
                  "instants, on a logical clock (event N at N microseconds)");
    sub->add_option("-o,--output", output_, "write to FILE instead of stdout")->option_text("FILE");
  }

  int run() override {
    if (!perfetto_) {
      return report_error(Status::error(StatusCode::kInvalidArgument,
                                        "export: name the format to write (--perfetto)"));
    }
    auto dir = resolve_trace_dir(trace_);
    if (!dir.is_ok()) {
      return report_error(dir.status());
    }
    auto reader = format::TraceReader::open(*dir);
    if (!reader.is_ok()) {
      return report_error(reader.status());
    }
    // The timeline needs no bytes of file copies: a damaged files/ does not stop it.
    (*reader)->tolerate_missing_file_copies();
    Result<analysis::TimelineSummary> summary =
        output_.empty() ? to_stdout(reader->get()) : to_file(reader->get());
    if (!summary.is_ok()) {
      return report_error(summary.status());
    }
    if ((*reader)->dropped_bytes() > 0) {
      fmt::print(stderr, "repro: warning: trace ends in a partial frame; {} bytes dropped\n",
                 (*reader)->dropped_bytes());
    }
    if (!output_.empty()) {
      fmt::print(stderr,
                 "repro: wrote {}: {} events of {} thread{} in {} process{} (logical clock: "
                 "event N at N microseconds)\n",
                 output_, summary->events, summary->threads, summary->threads == 1 ? "" : "s",
                 summary->processes, summary->processes == 1 ? "" : "es");
    }
    return kExitOk;
  }

 private:
  Result<analysis::TimelineSummary> to_stdout(format::TraceReader* reader) {
    auto summary = analysis::export_timeline(reader, &std::cout);
    std::cout.flush();
    return summary;
  }

  // Writes to a temporary name beside FILE and renames it into place, so
  // FILE is either a whole timeline or untouched.
  Result<analysis::TimelineSummary> to_file(format::TraceReader* reader) {
    std::string temp = fmt::format("{}.tmp-{}", output_, getpid());
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return Status::from_errno(errno, fmt::format("creating '{}'", temp));
    }
    auto summary = analysis::export_timeline(reader, &out);
    out.close();
    if (summary.is_ok() && !out) {
      summary = Status::error(StatusCode::kIoError, fmt::format("writing '{}' failed", temp));
    }
    if (!summary.is_ok()) {
      std::remove(temp.c_str());
      return summary;
    }
    if (std::rename(temp.c_str(), output_.c_str()) != 0) {
      int error = errno;
      std::remove(temp.c_str());
      return Status::from_errno(error, fmt::format("renaming '{}' to '{}'", temp, output_));
    }
    return summary;
  }

  std::string trace_;
  std::string output_;
  bool perfetto_ = false;
};

}  // namespace

std::unique_ptr<Command> make_export_command() { return std::make_unique<ExportCommand>(); }

}  // namespace repro::cli
