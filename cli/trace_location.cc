#include "cli/trace_location.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace repro::cli {

namespace fs = std::filesystem;

std::string trace_root() {
  if (const char* dir = std::getenv("REPRO_TRACE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/share/repro";
}

Result<std::string> new_trace_dir(const std::string& program) {
  std::string root = trace_root();
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("creating trace directory '{}': {}", root, ec.message()));
  }
  std::string base = fs::path(program).filename().string();
  if (base.empty()) {
    base = "trace";
  }
  for (int n = 0; n < 1000000; ++n) {
    std::string candidate = fmt::format("{}/{}-{}", root, base, n);
    if (!fs::exists(fs::symlink_status(candidate))) {
      return candidate;
    }
  }
  return Status::error(StatusCode::kIoError, fmt::format("no free trace name in '{}'", root));
}

Status update_latest_link(const std::string& trace_dir) {
  fs::path root = fs::path(trace_dir).parent_path();
  fs::path link = root / "latest";
  fs::path temp = root / ".latest.tmp";
  std::error_code ec;
  fs::remove(temp, ec);
  fs::create_directory_symlink(fs::absolute(trace_dir), temp, ec);
  if (!ec) {
    fs::rename(temp, link, ec);
  }
  if (ec) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("updating '{}': {}", link.string(), ec.message()));
  }
  return Status::ok();
}

Result<std::string> resolve_trace_dir(const std::string& given) {
  if (!given.empty()) {
    return given;
  }
  fs::path link = fs::path(trace_root()) / "latest";
  std::error_code ec;
  fs::path target = fs::read_symlink(link, ec);
  if (ec) {
    return Status::error(StatusCode::kNotFound,
                         fmt::format("no trace given and no latest trace at '{}'", link.string()));
  }
  return target.string();
}

}  // namespace repro::cli
