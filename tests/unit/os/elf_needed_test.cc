#include "core/os/elf_needed.h"

#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

using repro::os::needed_libraries;

TEST_CASE("a dynamic executable needs libc", "[os][elf]") {
  auto needed = needed_libraries("/proc/self/exe");
  REQUIRE(needed.is_ok());
  CHECK(std::find(needed->begin(), needed->end(), "libc.so.6") != needed->end());
}

TEST_CASE("a file that is not ELF is refused, a missing one is an error", "[os][elf]") {
  char path[] = "/tmp/repro-elf-needed-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, "#!/bin/sh\necho hi\n", 18) == 18);
  close(fd);
  auto script = needed_libraries(path);
  unlink(path);
  REQUIRE_FALSE(script.is_ok());
  CHECK(script.status().code() == repro::StatusCode::kInvalidArgument);
  CHECK_FALSE(needed_libraries("/nonexistent/program").is_ok());
}
