#include "hunter/trigger.h"

#include <fmt/core.h>
#include <string.h>

#include <csignal>
#include <cstdlib>

namespace repro::hunter {
namespace {

Status bad(const std::string& word, const std::string& why) {
  return Status::error(StatusCode::kInvalidArgument,
                       fmt::format("--until {}: {} (exit, exit:N, signal[:NAME], "
                                   "output:REGEX, timeout:SECS)",
                                   word, why));
}

std::optional<int> signal_number(std::string name) {
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
    char* end = nullptr;
    long number = std::strtol(name.c_str(), &end, 10);
    return *end == '\0' && number > 0 && number < NSIG ? std::optional(static_cast<int>(number))
                                                       : std::nullopt;
  }
  if (name.starts_with("SIG")) {
    name = name.substr(3);
  }
  for (int number = 1; number < NSIG; ++number) {
    const char* abbrev = sigabbrev_np(number);
    if (abbrev != nullptr && name == abbrev) {
      return number;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<Trigger> parse_trigger(const std::string& word) {
  Trigger trigger;
  trigger.text = word;
  std::string kind = word.substr(0, word.find(':'));
  bool has_argument = word.find(':') != std::string::npos;
  std::string argument = has_argument ? word.substr(word.find(':') + 1) : "";
  if (kind == "exit") {
    if (!has_argument) {
      return trigger;
    }
    char* end = nullptr;
    long status = std::strtol(argument.c_str(), &end, 10);
    if (argument.empty() || *end != '\0' || status < 0 || status > 255) {
      return bad(word, "the status must be 0 to 255");
    }
    trigger.kind = Trigger::Kind::kExitCode;
    trigger.number = static_cast<int>(status);
    return trigger;
  }
  if (kind == "signal") {
    trigger.kind = Trigger::Kind::kSignal;
    if (has_argument) {
      std::optional<int> number = signal_number(argument);
      if (!number) {
        return bad(word, "no such signal");
      }
      trigger.number = *number;
    }
    return trigger;
  }
  if (kind == "output" && has_argument && !argument.empty()) {
    trigger.kind = Trigger::Kind::kOutput;
    try {
      trigger.pattern.emplace(argument, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return bad(word, fmt::format("not a regular expression ({})", e.what()));
    }
    return trigger;
  }
  if (word == "deadlock") {
    trigger.kind = Trigger::Kind::kDeadlock;
    return trigger;
  }
  if (kind == "timeout" && has_argument) {
    char* end = nullptr;
    double seconds = std::strtod(argument.c_str(), &end);
    if (argument.empty() || *end != '\0' || !(seconds > 0)) {
      return bad(word, "the seconds must be a number above 0");
    }
    trigger.kind = Trigger::Kind::kTimeout;
    trigger.seconds = seconds;
    return trigger;
  }
  return bad(word, "unknown trigger");
}

const Trigger* fired(const std::vector<Trigger>& triggers, const RunResult& run) {
  for (const Trigger& trigger : triggers) {
    bool fires = false;
    switch (trigger.kind) {
      case Trigger::Kind::kExit:
        fires = !run.timed_out && run.shell_status != 0;
        break;
      case Trigger::Kind::kExitCode:
        fires = !run.timed_out && run.shell_status == trigger.number;
        break;
      case Trigger::Kind::kSignal:
        fires = !run.timed_out && run.shell_status > 128 &&
                (trigger.number == 0 || run.shell_status - 128 == trigger.number);
        break;
      case Trigger::Kind::kOutput:
        fires = std::regex_search(run.output, *trigger.pattern);
        break;
      case Trigger::Kind::kDeadlock:
        fires = run.deadlocked;
        break;
      case Trigger::Kind::kTimeout:
        fires = run.timed_out;
        break;
    }
    if (fires) {
      return &trigger;
    }
  }
  return nullptr;
}

}  // namespace repro::hunter
