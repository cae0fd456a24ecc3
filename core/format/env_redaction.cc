#include "core/format/env_redaction.h"

namespace repro::format {

std::vector<std::string> redact_environment(const std::vector<std::string>& env,
                                            const std::vector<std::regex>& patterns,
                                            std::vector<RedactedVariable>* redacted) {
  redacted->clear();
  std::vector<std::string> stored;
  stored.reserve(env.size());
  for (const std::string& entry : env) {
    const size_t equals = entry.find('=');
    if (equals == std::string::npos) {
      stored.push_back(entry);
      continue;
    }
    const std::string name = entry.substr(0, equals);
    bool matches = false;
    for (const std::regex& pattern : patterns) {
      if (std::regex_search(name, pattern)) {
        matches = true;
        break;
      }
    }
    if (!matches) {
      stored.push_back(entry);
      continue;
    }
    redacted->push_back({.name = name, .value_bytes = entry.size() - equals - 1});
    stored.push_back(name + "=");
  }
  return stored;
}

std::vector<std::string> environment_for_replay(const std::vector<std::string>& stored_env,
                                                const std::vector<RedactedVariable>& redacted) {
  std::vector<std::string> env = stored_env;
  auto next = redacted.begin();
  for (std::string& entry : env) {
    if (next == redacted.end()) {
      break;
    }
    if (entry.size() == next->name.size() + 1 &&
        entry.compare(0, next->name.size(), next->name) == 0 && entry.back() == '=') {
      entry.append(next->value_bytes, kRedactedValueFiller);
      ++next;
    }
  }
  return env;
}

}  // namespace repro::format
