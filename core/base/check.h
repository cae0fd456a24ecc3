#pragma once
// REPRO_CHECK: invariants of our own code. Stays on in release builds: a
// context switch costs far more than the check. A failed check runs the
// registered last-words hooks (the recorder flushes its trace there), prints
// the message with file and line, and exits with status 70.

#include <functional>
#include <sstream>

namespace repro {

/// Registers a hook run once when a check fails (for example: flush the
/// trace). Hooks run in reverse order of registration. Not thread-safe.
void add_last_words_hook(std::function<void()> hook);

namespace internal {
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};
}  // namespace internal
}  // namespace repro

#define REPRO_CHECK(cond)                                                  \
  if (cond) {                                                              \
  } else                                                                   \
    ::repro::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()
