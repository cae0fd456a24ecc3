#include "hunter/cost.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/os/spawn.h"
#include "hunter/runs.h"

namespace repro::hunter {
namespace {

using Clock = std::chrono::steady_clock;

template <typename T>
T median(std::vector<T> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? T{} : values[values.size() / 2];
}

// Bytes a trace takes on disk (its sparse copies count as stored).
uint64_t disk_bytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) {
      bytes += entry.file_size(ec);
    }
  }
  return bytes;
}

struct Timed {
  double seconds = 0;
  int status = 0;  // shell-style
};

Result<Timed> timed_run(const std::vector<std::string>& args, const std::string& files) {
  auto start = Clock::now();
  REPRO_ASSIGN_OR_RETURN(pid_t pid, spawn(args, files + ".out", files + ".err"));
  REPRO_ASSIGN_OR_RETURN(int status, wait_for(pid));
  return Timed{std::chrono::duration<double>(Clock::now() - start).count(), shell_status(status)};
}

}  // namespace

Result<CostOutcome> measure_cost(const CostOptions& options) {
  if (options.argv.empty() || options.runs == 0) {
    return Status::error(StatusCode::kInvalidArgument, "nothing to measure");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.work_dir, ec);
  if (ec) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("creating {}: {}", options.work_dir, ec.message()));
  }
  CostOutcome outcome;
  // Natively as the recording runs it: found on PATH the same way.
  std::vector<std::string> native = options.argv;
  REPRO_ASSIGN_OR_RETURN(native[0], os::find_program(options.argv[0]));
  std::string trace = options.work_dir + "/trace";
  std::vector<std::string> record = {options.repro_path, "record", "-o", trace, "--"};
  record.insert(record.end(), options.argv.begin(), options.argv.end());
  std::vector<std::string> replay = {options.repro_path, "replay", trace};
  for (uint32_t round = 0; round < options.runs; ++round) {
    // Native first in even rounds, last in odd ones: neither side always
    // follows the other's caches.
    auto native_run = [&]() -> Status {
      REPRO_ASSIGN_OR_RETURN(Timed run, timed_run(native, options.work_dir + "/native"));
      if (round == 0) {
        outcome.native_status = run.status;
      }
      outcome.native_seconds.push_back(run.seconds);
      return Status::ok();
    };
    if (round % 2 == 0) {
      REPRO_RETURN_IF_ERROR(native_run());
    }
    remove_run(trace);
    REPRO_ASSIGN_OR_RETURN(Timed recorded, timed_run(record, trace));
    std::string error = repro_error(trace + ".err");
    if (!error.empty() || recorded.status != outcome.native_status) {
      return Status::error(
          StatusCode::kIoError,
          fmt::format("recording {}: {}", round + 1,
                      !error.empty() ? error
                                     : fmt::format("status {}, natively {}", recorded.status,
                                                   outcome.native_status)));
    }
    outcome.record_seconds.push_back(recorded.seconds);
    outcome.trace_bytes.push_back(disk_bytes(trace));
    REPRO_ASSIGN_OR_RETURN(Timed replayed, timed_run(replay, trace + ".replay"));
    error = repro_error(trace + ".replay.err");
    if (!error.empty() || replayed.status != recorded.status) {
      return Status::error(StatusCode::kIoError,
                           fmt::format("replay {}: {}", round + 1,
                                       !error.empty() ? error
                                                      : fmt::format("status {}, recorded {}",
                                                                    replayed.status, recorded.status)));
    }
    outcome.replay_seconds.push_back(replayed.seconds);
    if (round % 2 == 1) {
      REPRO_RETURN_IF_ERROR(native_run());
    }
    if (options.on_progress) {
      options.on_progress(fmt::format("run {}/{}: native {:.3f} s, record {:.3f} s, replay {:.3f} s",
                                      round + 1, options.runs, outcome.native_seconds.back(),
                                      recorded.seconds, replayed.seconds));
    }
  }
  remove_run(trace);
  remove_run(trace + ".replay");
  remove_run(options.work_dir + "/native");
  outcome.native = median(outcome.native_seconds);
  outcome.record = median(outcome.record_seconds);
  outcome.replay = median(outcome.replay_seconds);
  outcome.trace = median(outcome.trace_bytes);
  return outcome;
}

}  // namespace repro::hunter
