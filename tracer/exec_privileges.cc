#include "tracer/exec_privileges.h"

#include <fmt/format.h>
#include <pwd.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <fstream>
#include <sstream>

namespace repro::tracer {
namespace {

// The effective id of the "Uid:" or "Gid:" line of /proc/TID/status (the
// second of real, effective, saved, fs), or nullopt.
std::optional<unsigned> effective_id(pid_t tid, const std::string& key) {
  std::ifstream status(fmt::format("/proc/{}/status", tid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) {
      std::istringstream fields(line.substr(key.size()));
      unsigned real = 0, effective = 0;
      if (fields >> real >> effective) {
        return effective;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string user_name(uid_t uid) {
  struct passwd* entry = getpwuid(uid);
  return entry != nullptr ? fmt::format("uid {} ({})", uid, entry->pw_name) : fmt::format("uid {}", uid);
}

std::string group_name(gid_t gid) {
  struct group* entry = getgrgid(gid);
  return entry != nullptr ? fmt::format("gid {} ({})", gid, entry->gr_name) : fmt::format("gid {}", gid);
}

}  // namespace

std::optional<std::string> privileges_lost_at_exec(pid_t tid) {
  std::string exe = fmt::format("/proc/{}/exe", tid);
  struct stat st;
  struct statvfs fs;
  if (stat(exe.c_str(), &st) != 0 || !(st.st_mode & (S_ISUID | S_ISGID))) {
    return std::nullopt;
  }
  // Set-id bits on a nosuid mount give nothing, traced or not.
  if (statvfs(exe.c_str(), &fs) == 0 && (fs.f_flag & ST_NOSUID)) {
    return std::nullopt;
  }
  std::string lost;
  if (st.st_mode & S_ISUID) {
    std::optional<unsigned> euid = effective_id(tid, "Uid:");
    if (euid && *euid != st.st_uid) {
      lost = "set-user-ID " + user_name(st.st_uid);
    }
  }
  // Set-group-ID needs group execute permission to count (without it the
  // bit marks mandatory locking).
  if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP)) {
    std::optional<unsigned> egid = effective_id(tid, "Gid:");
    if (egid && *egid != st.st_gid) {
      lost += (lost.empty() ? "set-group-ID " : ", set-group-ID ") + group_name(st.st_gid);
    }
  }
  if (lost.empty()) {
    return std::nullopt;
  }
  return lost;
}

}  // namespace repro::tracer
