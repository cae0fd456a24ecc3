#include "cli/hunt_setup.h"

#include <fmt/core.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

namespace repro::cli {

std::string own_path() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

uint64_t first_seed(std::optional<uint64_t> seed) {
  uint64_t first = 0;
  if (seed) {
    first = *seed;
  } else if (getrandom(&first, sizeof first, 0) != sizeof first) {
    first = static_cast<uint64_t>(getpid());
  }
  return first & ((uint64_t{1} << 48) - 1);
}

ProgressLines::ProgressLines(std::string verb)
    : verb_(std::move(verb)), terminal_(isatty(STDERR_FILENO) != 0) {}

std::function<void(const std::string& line, bool live)> ProgressLines::callback() {
  return [this](const std::string& line, bool live) {
    if (live && terminal_) {
      fmt::print(stderr, "\rrepro: {}: {}\x1b[K", verb_, line);
      std::fflush(stderr);
    } else if (!live || ++lines_ % 10 == 0) {
      fmt::print(stderr, "repro: {}: {}\n", verb_, line);
    }
  };
}

void ProgressLines::finish() const {
  if (terminal_) {
    fmt::print(stderr, "\n");
  }
}

}  // namespace repro::cli
