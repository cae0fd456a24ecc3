// `repro check [--quick] [TRACE]`: validates a whole trace and says what
// state it is in: the events (checksummed frames, the trailer's counts) and
// every file copy in files/ against its content id.

#include <dirent.h>
#include <fmt/core.h>

#include <map>
#include <set>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"
#include "core/format/content_id.h"
#include "core/format/file_copy_check.h"
#include "core/format/file_util.h"
#include "core/format/trace_format.h"
#include "core/format/trace_reader.h"

namespace repro::cli {
namespace {

// What an event says of a copy in files/: the path it stood for and the
// first event that used it.
struct CopyUse {
  std::string recorded_path;
  uint64_t event_index = 0;
};

// The content ids named in files/ (debris such as .tmp-* files is no copy).
Result<std::set<std::string>> stored_ids(const std::string& files_dir) {
  std::set<std::string> ids;
  DIR* stream = ::opendir(files_dir.c_str());
  if (stream == nullptr) {
    if (errno == ENOENT) {
      return ids;  // no copies at all; any the events name are reported missing
    }
    return Status::from_errno(errno, fmt::format("opening '{}'", files_dir));
  }
  while (struct dirent* entry = ::readdir(stream)) {
    if (format::is_valid_content_id(entry->d_name)) {
      ids.insert(entry->d_name);
    }
  }
  ::closedir(stream);
  return ids;
}

class CheckCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_flag("--quick", quick_,
                  "do not hash the file copies in files/ against their content ids (only "
                  "check that every copy the events name is there)");
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
    std::map<std::string, CopyUse> used;  // content id -> its first use
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
      if ((event.kind == format::EventKind::kExec ||
           event.kind == format::EventKind::kMappedFile) &&
          format::is_valid_content_id(event.content_id)) {
        used.emplace(event.content_id, CopyUse{event.path, reader.events_read() - 1});
      }
    }
    auto bad_copies = check_copies(*dir, used);
    if (!bad_copies.is_ok()) {
      return report_error(bad_copies.status());
    }
    if (reader.state() == format::TraceState::kComplete) {
      if (*bad_copies > 0) {
        fmt::print("{}: corrupt: {} of {} file copies damaged or missing ({} events, complete)\n",
                   *dir, *bad_copies, copies_, reader.events_read());
        return kExitBadTrace;
      }
      fmt::print("{}: complete, {} events, {} file copies {}\n", *dir, reader.events_read(),
                 copies_, quick_ ? "present (not hashed: --quick)" : "verified");
      return kExitOk;
    }
    fmt::print("{}: incomplete, {} valid events", *dir, reader.events_read());
    if (reader.dropped_bytes() > 0) {
      fmt::print(", {} bytes of a partial frame dropped", reader.dropped_bytes());
    }
    if (*bad_copies > 0) {
      fmt::print(", {} of {} file copies damaged or missing", *bad_copies, copies_);
    }
    fmt::print("\n");
    return kExitBadTrace;
  }

 private:
  // Prints one line per copy that is damaged (unless --quick) or that an
  // event names but files/ lacks; returns how many there were.
  Result<size_t> check_copies(const std::string& dir, const std::map<std::string, CopyUse>& used) {
    const std::string files_dir = format::join_path(dir, format::kFilesDirName);
    REPRO_ASSIGN_OR_RETURN(std::set<std::string> stored, stored_ids(files_dir));
    size_t bad = 0;
    copies_ = stored.size();
    for (const std::string& id : stored) {
      if (quick_) {
        continue;
      }
      Status verdict = format::check_file_copy(format::join_path(files_dir, id), id);
      if (verdict.code() == StatusCode::kCorruption) {
        ++bad;
        fmt::print("{}: damaged copy of {}: {}\n", dir, describe_use(used, id), verdict.message());
      } else if (!verdict.is_ok()) {
        return verdict;  // unreadable: the fault of the environment, not the trace
      }
    }
    for (const auto& [id, use] : used) {
      if (stored.count(id) == 0) {
        ++bad;
        ++copies_;
        fmt::print("{}: missing copy of {}: '{}' does not exist\n", dir, describe_use(used, id),
                   format::join_path(files_dir, id));
      }
    }
    return bad;
  }

  static std::string describe_use(const std::map<std::string, CopyUse>& used,
                                  const std::string& id) {
    auto use = used.find(id);
    if (use == used.end()) {
      return fmt::format("a file no event uses ({})", id);
    }
    return fmt::format("'{}' (event #{})", use->second.recorded_path, use->second.event_index);
  }

  std::string trace_;
  bool quick_ = false;
  size_t copies_ = 0;  // copies the trace holds or should hold
};

}  // namespace

std::unique_ptr<Command> make_check_command() { return std::make_unique<CheckCommand>(); }

}  // namespace repro::cli
