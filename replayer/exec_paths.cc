#include "replayer/exec_paths.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace repro::replayer {

namespace fs = std::filesystem;

Result<ExecPaths> ExecPaths::create() {
  std::string pattern = (fs::temp_directory_path() / "repro-replay-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::from_errno(errno, "creating a replay scratch directory");
  }
  return ExecPaths(pattern);
}

ExecPaths::ExecPaths(ExecPaths&& other) noexcept
    : dir_(std::move(other.dir_)), counter_(other.counter_), made_(std::move(other.made_)) {
  other.dir_.clear();
}

ExecPaths::~ExecPaths() {
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

Result<std::string> ExecPaths::make(size_t length, const std::string& target) {
  auto made = made_.find({length, target});
  if (made != made_.end()) {
    return made->second;
  }
  // A unique token, left-padded with '_' and split into directory levels
  // when longer than a file name may be.
  std::string token = fmt::format("{}", counter_++);
  if (length == 0 || token.size() > length) {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("cannot make an exec path of {} bytes", length));
  }
  std::string relative = std::string(length - token.size(), '_') + token;
  for (size_t at = 200; at + 1 < relative.size(); at += 201) {
    relative[at] = '/';
  }
  if (relative.back() == '/' || relative.front() == '/') {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("cannot make an exec path of {} bytes", length));
  }
  fs::path full = fs::path(dir_) / relative;
  std::error_code ec;
  fs::create_directories(full.parent_path(), ec);
  std::string source = target;
  if (access(target.c_str(), X_OK) != 0) {
    // Stored copies may lack the execute bit; exec a private copy instead.
    source = full.string() + ".bin";
    fs::copy_file(target, source, fs::copy_options::overwrite_existing, ec);
    if (ec || chmod(source.c_str(), 0755) != 0) {
      return Status::error(StatusCode::kIoError,
                           fmt::format("copying '{}' for exec: {}", target, ec.message()));
    }
  }
  fs::create_symlink(fs::absolute(source), full, ec);
  if (ec) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("linking '{}': {}", full.string(), ec.message()));
  }
  made_[{length, target}] = relative;
  return relative;
}

}  // namespace repro::replayer
