#include "core/os/spawn.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "core/os/tracee.h"

namespace repro::os {
namespace {

std::vector<char*> to_c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const auto& s : strings) {
    pointers.push_back(const_cast<char*>(s.c_str()));
  }
  pointers.push_back(nullptr);
  return pointers;
}

[[noreturn]] void child_fail(int error_fd, int errnum) {
  (void)!write(error_fd, &errnum, sizeof errnum);
  _exit(127);
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::string> find_program(const std::string& name) {
  if (name.empty()) {
    return Status::error(StatusCode::kInvalidArgument, "empty program name");
  }
  if (name.find('/') != std::string::npos) {
    if (!is_executable_file(name)) {
      return Status::error(StatusCode::kNotFound,
                           fmt::format("'{}': no such executable file", name));
    }
    return name;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) {
      end = dirs.size();
    }
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable_file(candidate)) {
      return candidate;
    }
    start = end + 1;
  }
  return Status::error(StatusCode::kNotFound, fmt::format("'{}': command not found in PATH", name));
}

Result<pid_t> spawn_traced(const SpawnOptions& options) {
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return Status::from_errno(errno, "creating a pipe");
  }
  // The child's IsolationFailure, if isolating failed; closed by its exec.
  // (Its `step` points at a static string: the same address in the parent.)
  int isolation_pipe[2] = {-1, -1};
  if (options.isolate && pipe2(isolation_pipe, O_CLOEXEC) != 0) {
    int saved = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    return Status::from_errno(saved, "creating a pipe");
  }
  auto close_isolation_pipe = [&] {
    for (int& fd : isolation_pipe) {
      if (fd >= 0) {
        close(fd);
        fd = -1;
      }
    }
  };
  std::vector<char*> argv = to_c_strings(options.argv);
  std::vector<char*> envp = to_c_strings(options.env);

  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    close_isolation_pipe();
    return Status::from_errno(saved, "fork");
  }
  if (pid == 0) {
    close(error_pipe[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The tracer blocks the signals it waits for with a signalfd, and
    // ignores SIGXFSZ; the program must start with the mask and
    // dispositions a shell gives it.
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE, SIGQUIT, SIGXFSZ}) {
      signal(sig, SIG_DFL);
    }
    if (personality(ADDR_NO_RANDOMIZE) == -1) {
      child_fail(error_pipe[1], errno);
    }
    if (options.isolate) {
      // Before the chdir: a working directory taken before the scratch
      // directory's bind mount would stay on the read-only mount below it.
      IsolationFailure failure = isolate_process(options.writable_dir.c_str());
      if (failure.failed()) {
        (void)!write(isolation_pipe[1], &failure, sizeof failure);
      }
    }
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) {
      child_fail(error_pipe[1], errno);
    }
    raise(SIGSTOP);
    if (options.before_exec) {
      if (int err = options.before_exec(); err != 0) {
        child_fail(error_pipe[1], err);
      }
    }
    execve(options.exe_path.c_str(), argv.data(), envp.data());
    child_fail(error_pipe[1], errno);
  }
  close(error_pipe[1]);
  if (options.isolate) {
    close(isolation_pipe[1]);
    isolation_pipe[1] = -1;
  }
  auto kill_child = [&](Status status) -> Status {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, __WALL);
    close(error_pipe[0]);
    close_isolation_pipe();
    return status;
  };

  int wstatus = 0;
  if (waitpid(pid, &wstatus, WUNTRACED) != pid || !WIFSTOPPED(wstatus)) {
    return kill_child(Status::error(StatusCode::kIoError, "the new process did not stop before exec"));
  }
  if (ptrace(PTRACE_SEIZE, pid, nullptr, options.ptrace_options) != 0) {
    int saved = errno;
    return kill_child(Status::from_errno(
        saved, saved == EPERM ? "ptrace is not permitted here (check /proc/sys/kernel/yama/ptrace_scope)"
                              : "ptrace(PTRACE_SEIZE)"));
  }
  kill(pid, SIGCONT);

  // Run the child to its exec event, passing over the stops of its start.
  while (true) {
    if (waitpid(pid, &wstatus, __WALL) != pid) {
      return kill_child(Status::from_errno(errno, "waiting for the new process"));
    }
    if (WIFEXITED(wstatus) || WIFSIGNALED(wstatus)) {
      int child_errno = 0;
      ssize_t n = read(error_pipe[0], &child_errno, sizeof child_errno);
      close(error_pipe[0]);
      close_isolation_pipe();
      if (n == sizeof child_errno) {
        return Status::error(StatusCode::kNotFound,
                             fmt::format("cannot execute '{}': {}", options.exe_path,
                                         std::strerror(child_errno)));
      }
      return Status::error(StatusCode::kIoError,
                           fmt::format("'{}' ended before it started", options.exe_path));
    }
    unsigned event = static_cast<unsigned>(wstatus) >> 16;
    if (event == PTRACE_EVENT_EXEC) {
      break;
    }
    int signal = WSTOPSIG(wstatus);
    bool pass_signal = event == 0 && signal != SIGSTOP && signal != SIGCONT && signal != SIGTRAP;
    ptrace(PTRACE_CONT, pid, nullptr, pass_signal ? signal : 0);
  }
  close(error_pipe[0]);
  if (options.isolate) {
    // The child wrote before its exec, which closed the pipe: one read gets
    // the failure or end of file (isolated).
    IsolationFailure failure;
    *options.isolation_failure =
        read(isolation_pipe[0], &failure, sizeof failure) == sizeof failure ? failure
                                                                            : IsolationFailure{};
    close_isolation_pipe();
  }
  return pid;
}

}  // namespace repro::os
