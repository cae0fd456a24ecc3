#include "analysis/effects_report.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <sys/socket.h>

#include <cstring>
#include <map>
#include <vector>

#include "analysis/socket_address.h"

namespace repro::analysis {
namespace {

bool quiet_device(const std::string& path) {
  return path == "/dev/null" || path == "/dev/zero" || path == "/dev/full" ||
         path == "/dev/urandom" || path == "/dev/random";
}

// Whether the file is counted in its group instead of listed.
bool left_out(const FileEffect& file, const EffectsReportOptions& options) {
  if (options.all || file.group == PathGroup::kNone) {
    return false;
  }
  return !file.changed() || quiet_device(file.path);
}

bool endpoint_left_out(const Endpoint& endpoint, const EffectsReportOptions& options) {
  return !options.all && endpoint.family == AF_NETLINK;
}

const char* creation_name(Creation creation) {
  switch (creation) {
    case Creation::kCreated:
      return "created";
    case Creation::kIfMissing:
      return "created-if-missing";
    case Creation::kNone:
      break;
  }
  return "none";
}

std::string plural(uint64_t count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

std::string signal_name(int signal) {
  if (signal == 0) {
    return "signal 0 (a probe: nothing delivered)";
  }
  const char* name = sigabbrev_np(signal);
  return name ? fmt::format("SIG{}", name) : fmt::format("signal {}", signal);
}

std::string error_or_ok(int64_t result) {
  if (result >= 0) {
    return "ok";
  }
  const char* name = strerrorname_np(static_cast<int>(-result));
  return name ? name : fmt::format("errno {}", -result);
}

// An argument as a shell would need it: in single quotes if it holds
// anything but plain characters, or in $'...' with escapes if it holds
// control characters (a newline would break the one line per program).
std::string shell_quoted(const std::string& argument) {
  bool plain = !argument.empty() && argument.find_first_not_of(
                                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+@%") == std::string::npos;
  if (plain) {
    return argument;
  }
  bool control = false;
  for (unsigned char c : argument) {
    control = control || c < 0x20 || c == 0x7f;
  }
  if (!control) {
    std::string quoted = "'";
    for (char c : argument) {
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
  }
  std::string quoted = "$'";
  for (unsigned char c : argument) {
    if (c == '\n') {
      quoted += "\\n";
    } else if (c == '\t') {
      quoted += "\\t";
    } else if (c == '\\' || c == '\'') {
      quoted += std::string("\\") + static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      quoted += fmt::format("\\x{:02x}", c);
    } else {
      quoted += static_cast<char>(c);
    }
  }
  return quoted + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
  std::vector<std::string> quoted;
  for (const std::string& argument : argv) {
    quoted.push_back(shell_quoted(argument));
  }
  return fmt::format("{}", fmt::join(quoted, " "));
}

// "created, wrote 3 bytes (1 write)" and so on, in the order things happen.
std::vector<std::string> file_actions(const FileEffect& file) {
  std::vector<std::string> actions;
  const char* what = file.is_socket ? "socket " : file.is_directory ? "directory " : "";
  if (file.creation == Creation::kCreated) {
    actions.push_back(fmt::format("{}created", what));
  } else if (file.creation == Creation::kIfMissing) {
    actions.push_back(file.maybe_truncated ? "created, or truncated if it existed (O_CREAT|O_TRUNC)"
                                           : "created if it did not exist (O_CREAT)");
  }
  if (!file.symlink_target.empty()) {
    actions.push_back(fmt::format("symbolic link to {}", file.symlink_target));
  }
  if (!file.hard_link_of.empty()) {
    actions.push_back(fmt::format("hard link of {}", file.hard_link_of));
  }
  if (file.truncated) {
    actions.push_back("truncated");
  }
  if (file.writes > 0) {
    actions.push_back(fmt::format("wrote {} ({})", plural(file.bytes_written, "byte", "bytes"),
                                  plural(file.writes, "write", "writes")));
  } else if (file.opened_for_writing && file.creation == Creation::kNone && !file.truncated) {
    actions.push_back("opened for writing, nothing written");
  }
  if (file.mapped_shared_writable) {
    actions.push_back("mapped shared and writable (writes through memory are not counted)");
  }
  if (!file.mode.empty()) {
    actions.push_back(fmt::format("mode set to {}", file.mode));
  }
  if (file.owner_changed) {
    actions.push_back("owner changed");
  }
  if (file.times_changed) {
    actions.push_back("times changed");
  }
  for (const std::string& from : file.renamed_from) {
    actions.push_back(fmt::format("renamed from {}", from));
  }
  for (const std::string& to : file.renamed_to) {
    actions.push_back(fmt::format("renamed to {}", to));
  }
  if (file.deleted) {
    actions.push_back(fmt::format("{}deleted", what));
  }
  if (file.read && file.bytes_read > 0) {
    actions.push_back(fmt::format("read {}", plural(file.bytes_read, "byte", "bytes")));
  } else if (file.read && !file.listed && !file.changed()) {
    actions.push_back("opened, nothing read");
  }
  if (file.listed) {
    actions.push_back("listed");
  }
  return actions;
}

std::string endpoint_line(const Endpoint& endpoint) {
  std::vector<std::string> parts;
  if (endpoint.role == Endpoint::Role::kListening) {
    parts.push_back(fmt::format("listening, {} accepted", endpoint.connections));
  } else if (endpoint.role == Endpoint::Role::kConnected && endpoint.connections > 0) {
    parts.push_back(endpoint.connections == 1
                        ? std::string("connected")
                        : fmt::format("connected {} times", endpoint.connections));
  } else {
    parts.push_back(endpoint_role_name(endpoint.role));
  }
  for (const auto& [error, count] : endpoint.failures) {
    parts.push_back(count == 1 ? fmt::format("failed: {}", error)
                               : fmt::format("failed {} times: {}", count, error));
  }
  if (endpoint.bytes_sent > 0 || endpoint.role != Endpoint::Role::kReceivedFrom) {
    parts.push_back(fmt::format("sent {}", plural(endpoint.bytes_sent, "byte", "bytes")));
  }
  if (endpoint.bytes_received > 0 || endpoint.role != Endpoint::Role::kSentTo) {
    parts.push_back(fmt::format("received {}", plural(endpoint.bytes_received, "byte", "bytes")));
  }
  if (!endpoint.peers.empty()) {
    parts.push_back(fmt::format("from {}", fmt::join(endpoint.peers, ", ")));
  }
  return fmt::format("{} {}  {}", endpoint.protocol, endpoint.address, fmt::join(parts, ", "));
}

struct GroupCount {
  uint64_t files = 0;
  uint64_t bytes_read = 0;
};

std::map<std::string, GroupCount> left_out_groups(const Effects& effects,
                                                  const EffectsReportOptions& options) {
  std::map<std::string, GroupCount> groups;
  for (const auto& [path, file] : effects.files) {
    if (left_out(file, options)) {
      GroupCount& group = groups[path_group_name(file.group)];
      ++group.files;
      group.bytes_read += file.bytes_read;
    }
  }
  return groups;
}

}  // namespace

std::string effects_text(const Effects& effects, const EffectsReportOptions& options) {
  std::string text;
  auto line = [&](const std::string& s) { text += s + "\n"; };
  std::vector<const FileEffect*> changed;
  std::vector<const FileEffect*> read;
  for (const auto& [path, file] : effects.files) {
    if (!left_out(file, options)) {
      (file.changed() ? changed : read).push_back(&file);
    }
  }
  auto file_lines = [&](const std::vector<const FileEffect*>& files) {
    size_t width = 0;
    for (const FileEffect* file : files) {
      width = std::max(width, file->path.size());
    }
    width = std::min<size_t>(width, 60);
    for (const FileEffect* file : files) {
      line(fmt::format("  {:<{}}  {}", file->path, width, fmt::join(file_actions(*file), ", ")));
    }
  };
  line(fmt::format("Files changed ({}):", changed.size()));
  file_lines(changed);
  line(fmt::format("Files read ({}):", read.size()));
  file_lines(read);
  auto groups = left_out_groups(effects, options);
  if (!groups.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, group] : groups) {
      parts.push_back(fmt::format(
          "{} {} ({})", plural(group.files, "file", "files"),
          name == "libraries" ? "of libraries and the loader" : fmt::format("under /{}", name),
          plural(group.bytes_read, "byte read", "bytes read")));
    }
    line(fmt::format("  left out: {}; --all lists them", fmt::join(parts, ", ")));
  }

  std::vector<const Endpoint*> endpoints;
  uint64_t netlink = 0;
  for (const auto& [key, endpoint] : effects.endpoints) {
    if (endpoint_left_out(endpoint, options)) {
      ++netlink;
    } else {
      endpoints.push_back(&endpoint);
    }
  }
  line(fmt::format("Network and socket endpoints ({}):", endpoints.size()));
  for (const Endpoint* endpoint : endpoints) {
    line("  " + endpoint_line(*endpoint));
  }
  if (netlink > 0) {
    line(fmt::format("  left out: {} (the kernel's); --all lists them",
                     plural(netlink, "netlink socket", "netlink sockets")));
  }

  line(fmt::format("Programs executed ({}):", effects.programs.size()));
  for (const ExecutedProgram& program : effects.programs) {
    line(fmt::format("  pid {}  {}  $ {}", program.pid, program.path, command_line(program.argv)));
  }
  line(fmt::format("Signals sent outside the recording ({}):", effects.outside_signals.size()));
  for (const SignalSent& sent : effects.outside_signals) {
    line(fmt::format("  pid {}: {} {} to {}: {}", sent.from_pid, sent.syscall,
                     signal_name(sent.signal), sent.target_description, error_or_ok(sent.result)));
  }
  line(fmt::format(
      "Totals: {}, {}; {} to stdout, {} to stderr, {} from stdin",
      plural(effects.processes, "process", "processes"),
      plural(effects.threads, "thread", "threads"), plural(effects.stdout_bytes, "byte", "bytes"),
      plural(effects.stderr_bytes, "byte", "bytes"), plural(effects.stdin_bytes, "byte", "bytes")));
  if (effects.missing_inputs > 0) {
    line(
        fmt::format("Note: {} without the path or address in the trace (a "
                    "pointer the kernel "
                    "could not read): their effects are not listed",
                    plural(effects.missing_inputs, "syscall", "syscalls")));
  }
  if (effects.undecoded_batches > 0) {
    line(fmt::format("Note: {} of fast-path syscalls that do not decode: their effects are not "
                     "listed",
                     plural(effects.undecoded_batches, "batch", "batches")));
  }
  if (effects.unknown_descriptor_calls > 0) {
    line(
        fmt::format("Note: {} on descriptors the trace does not show the origin of "
                    "(inherited, or passed over a socket): not counted",
                    plural(effects.unknown_descriptor_calls, "read or write", "reads or writes")));
  }
  return text;
}

nlohmann::json effects_json(const Effects& effects, const EffectsReportOptions& options) {
  using nlohmann::json;
  json changed = json::array();
  json read = json::array();
  for (const auto& [path, file] : effects.files) {
    if (left_out(file, options)) {
      continue;
    }
    json entry = {{"path", file.path}, {"resolved", file.resolved}};
    if (file.group != PathGroup::kNone) {
      entry["group"] = path_group_name(file.group);
    }
    if (file.creation != Creation::kNone) {
      entry["creation"] = creation_name(file.creation);
    }
    auto flag = [&](const char* name, bool value) {
      if (value) {
        entry[name] = true;
      }
    };
    flag("directory", file.is_directory);
    flag("socket", file.is_socket);
    flag("truncated", file.truncated);
    flag("truncated_if_existed", file.maybe_truncated);
    flag("opened_for_writing", file.opened_for_writing);
    if (file.writes > 0) {
      entry["bytes_written"] = file.bytes_written;
      entry["writes"] = file.writes;
    }
    if (file.read) {
      entry["bytes_read"] = file.bytes_read;
    }
    flag("listed", file.listed);
    flag("deleted", file.deleted);
    if (!file.renamed_to.empty()) {
      entry["renamed_to"] = file.renamed_to;
    }
    if (!file.renamed_from.empty()) {
      entry["renamed_from"] = file.renamed_from;
    }
    if (!file.symlink_target.empty()) {
      entry["symlink_to"] = file.symlink_target;
    }
    if (!file.hard_link_of.empty()) {
      entry["hard_link_of"] = file.hard_link_of;
    }
    if (!file.mode.empty()) {
      entry["mode"] = file.mode;
    }
    flag("owner_changed", file.owner_changed);
    flag("times_changed", file.times_changed);
    flag("mapped_shared_writable", file.mapped_shared_writable);
    (file.changed() ? changed : read).push_back(std::move(entry));
  }
  json left = json::object();
  for (const auto& [name, group] : left_out_groups(effects, options)) {
    left[name] = {{"files", group.files}, {"bytes_read", group.bytes_read}};
  }
  json endpoints = json::array();
  uint64_t netlink = 0;
  for (const auto& [key, endpoint] : effects.endpoints) {
    if (endpoint_left_out(endpoint, options)) {
      ++netlink;
      continue;
    }
    json entry = {{"role", endpoint_role_name(endpoint.role)},
                  {"family", family_name(endpoint.family)},
                  {"protocol", endpoint.protocol},
                  {"address", endpoint.address},
                  {"connections", endpoint.connections},
                  {"bytes_sent", endpoint.bytes_sent},
                  {"bytes_received", endpoint.bytes_received}};
    if (!endpoint.failures.empty()) {
      entry["failures"] = endpoint.failures;
    }
    if (!endpoint.peers.empty()) {
      entry["peers"] = endpoint.peers;
    }
    endpoints.push_back(std::move(entry));
  }
  if (netlink > 0) {
    left["netlink_sockets"] = netlink;
  }
  json programs = json::array();
  for (const ExecutedProgram& program : effects.programs) {
    programs.push_back({{"pid", program.pid},
                        {"thread", program.thread},
                        {"path", program.path},
                        {"argv", program.argv}});
  }
  json signals = json::array();
  for (const SignalSent& sent : effects.outside_signals) {
    signals.push_back({{"from_pid", sent.from_pid},
                       {"syscall", sent.syscall},
                       {"target", sent.target},
                       {"target_description", sent.target_description},
                       {"signal", sent.signal},
                       {"result", error_or_ok(sent.result)}});
  }
  return {{"files_changed", changed},
          {"files_read", read},
          {"left_out", left},
          {"endpoints", endpoints},
          {"programs", programs},
          {"signals_outside", signals},
          {"totals",
           {{"processes", effects.processes},
            {"threads", effects.threads},
            {"stdout_bytes", effects.stdout_bytes},
            {"stderr_bytes", effects.stderr_bytes},
            {"stdin_bytes", effects.stdin_bytes},
            {"syscalls_missing_inputs", effects.missing_inputs},
            {"unknown_descriptor_calls", effects.unknown_descriptor_calls},
            {"undecoded_batches", effects.undecoded_batches}}}};
}

}  // namespace repro::analysis
