#include "replayer/exec_argv.h"

#include <fcntl.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using repro::replayer::common_tail;
using repro::replayer::kernel_exec_name;
using repro::replayer::split_exec_argv;
using Strings = std::vector<std::string>;

TEST_CASE("exec argv splits at each NUL, empty strings included", "[replayer][exec]") {
  CHECK(split_exec_argv(std::string("/bin/sh\0./s.sh\0\0x\0", 18)) ==
        Strings{"/bin/sh", "./s.sh", "", "x"});
  CHECK(split_exec_argv(std::string("\0", 1)) == Strings{""});
  CHECK(split_exec_argv("").empty());
  CHECK(split_exec_argv("no-nul") == Strings{"no-nul"});
}

TEST_CASE("exec names follow the kernel's rule for execve and execveat", "[replayer][exec]") {
  CHECK(kernel_exec_name(SYS_execve, 3, "prog") == "prog");
  CHECK(kernel_exec_name(SYS_execveat, AT_FDCWD, "prog") == "prog");
  CHECK(kernel_exec_name(SYS_execveat, 3, "/bin/true") == "/bin/true");
  CHECK(kernel_exec_name(SYS_execveat, 3, "") == "/dev/fd/3");
  CHECK(kernel_exec_name(SYS_execveat, 12, "sub/prog") == "/dev/fd/12/sub/prog");
}

TEST_CASE("common tail counts the last strings two argvs share", "[replayer][exec]") {
  CHECK(common_tail({"/bin/sh", "./s.sh", "a"}, {"./s.sh", "a"}) == 2);
  CHECK(common_tail({"/bin/sh", "-e", "./s.sh"}, {"other", "a"}) == 0);
  CHECK(common_tail({"x"}, {"x"}) == 1);
  CHECK(common_tail({}, {"x"}) == 0);
}
