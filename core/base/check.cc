#include "core/base/check.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace repro {
namespace {
std::vector<std::function<void()>>& hooks() {
  static std::vector<std::function<void()>> all;
  return all;
}
}  // namespace

void add_last_words_hook(std::function<void()> hook) { hooks().push_back(std::move(hook)); }

namespace internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  stream_ << "repro: internal error: " << file << ":" << line << ": check failed: " << condition
          << ": ";
}

CheckFailure::~CheckFailure() {
  std::string text = stream_.str() + "\n";
  (void)!write(STDERR_FILENO, text.data(), text.size());
  auto pending = std::move(hooks());
  hooks().clear();
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    (*it)();
  }
  std::_Exit(70);
}

}  // namespace internal
}  // namespace repro
