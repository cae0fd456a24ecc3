#include "core/os/open_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

namespace repro::os {
namespace {

struct CloseDir {
  void operator()(DIR* dir) const { closedir(dir); }
};
using DirHandle = std::unique_ptr<DIR, CloseDir>;

// The access mode of a descriptor: the "flags:" line (octal) of its fdinfo.
std::optional<int> access_mode(pid_t pid, const char* fd) {
  std::ifstream in(fmt::format("/proc/{}/fdinfo/{}", pid, fd));
  std::string key;
  std::string value;
  while (in >> key >> value) {
    if (key == "flags:") {
      return static_cast<int>(std::strtol(value.c_str(), nullptr, 8)) & O_ACCMODE;
    }
  }
  return std::nullopt;
}

// Adds the descriptors of process `pid` for `file`; false if they could not be read.
bool scan_process(pid_t pid, const FileIdentity& file, FileHolders* out) {
  std::string dir_path = fmt::format("/proc/{}/fd", pid);
  DirHandle dir(opendir(dir_path.c_str()));
  if (!dir) {
    return errno == ENOENT;  // gone meanwhile: it holds nothing
  }
  while (dirent* entry = readdir(dir.get())) {
    if (entry->d_name[0] == '.') {
      continue;
    }
    struct stat st {};
    if (fstatat(dirfd(dir.get()), entry->d_name, &st, 0) != 0 ||
        static_cast<uint64_t>(st.st_dev) != file.device ||
        static_cast<uint64_t>(st.st_ino) != file.inode) {
      continue;
    }
    std::optional<int> mode = access_mode(pid, entry->d_name);
    FileHolder holder;
    holder.pid = pid;
    holder.fd = std::atoi(entry->d_name);
    // Unknown mode: count it as both, the cautious answer.
    holder.can_read = !mode || *mode == O_RDONLY || *mode == O_RDWR;
    holder.can_write = !mode || *mode == O_WRONLY || *mode == O_RDWR;
    out->holders.push_back(holder);
  }
  return true;
}

}  // namespace

Result<FileIdentity> descriptor_file(pid_t pid, int fd) {
  std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    int error = errno;
    return Status::from_errno(error, fmt::format("stat {}", path));
  }
  FileIdentity file;
  file.device = static_cast<uint64_t>(st.st_dev);
  file.inode = static_cast<uint64_t>(st.st_ino);
  file.is_fifo = S_ISFIFO(st.st_mode);
  return file;
}

FileHolders holders_of(const FileIdentity& file) {
  FileHolders result;
  DirHandle proc(opendir("/proc"));
  if (!proc) {
    result.incomplete = true;
    return result;
  }
  while (dirent* entry = readdir(proc.get())) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') {
      continue;
    }
    if (!scan_process(static_cast<pid_t>(pid), file, &result)) {
      result.incomplete = true;
    }
  }
  return result;
}

}  // namespace repro::os
