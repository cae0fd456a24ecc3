#pragma once
// What `repro hunt` and `repro ci` set up alike for hunter::hunt(): repro's
// own path, the first seed, and the progress lines on stderr.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace repro::cli {

/// The repro binary running now, for the hunt's child runs.
std::string own_path();

/// `seed` if given, else a random one; below 2^48, so seeds can count up.
uint64_t first_seed(std::optional<uint64_t> seed);

/// Prints "repro: VERB: LINE" on stderr: a live line is redrawn in place on
/// a terminal, and only every 10th is printed otherwise.
class ProgressLines {
 public:
  explicit ProgressLines(std::string verb);
  std::function<void(const std::string& line, bool live)> callback();
  /// Ends a redrawn line (call once the hunt is over).
  void finish() const;

 private:
  std::string verb_;
  bool terminal_ = false;
  uint64_t lines_ = 0;
};

}  // namespace repro::cli
