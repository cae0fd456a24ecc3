#include "core/format/failure_stacks.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <limits>

namespace repro::format {
namespace {

FailureStacks crash_in_worker() {
  FailureStacks stacks;
  stacks.signal_number = SIGSEGV;
  stacks.signal_code = 1;  // SEGV_MAPERR
  stacks.fault_address = 0x10;
  stacks.instruction_address = 0x555555555189;
  stacks.instruction_bytes = std::string("\xc7\x00\x2a\x00\x00\x00", 6);
  stacks.instruction = "mov dword ptr [rax], 0x2a";
  ThreadStack worker;
  worker.thread = 2;
  worker.recorded_tid = 4242;
  worker.frames = {
      {0x555555555189, "write_through", "tests/programs/report_crash_program.c", 17, "/tmp/prog"},
      {0x7ffff7e2aac3, "start_thread", "", 0, "/lib/x86_64-linux-gnu/libc.so.6"},
  };
  ThreadStack main_thread;
  main_thread.thread = 1;
  main_thread.recorded_tid = 4241;
  main_thread.note = "unwinding stopped: no matching address range";
  main_thread.frames = {{0x7ffff7e27117, "", "", 0, ""}};
  stacks.threads = {worker, main_thread};
  return stacks;
}

TEST_CASE("failure stacks round-trip with every field populated", "[format][roundtrip]") {
  FailureStacks stacks = crash_in_worker();
  Result<FailureStacks> decoded = decode_failure_stacks(encode_failure_stacks(stacks));
  REQUIRE(decoded.is_ok());
  CHECK(*decoded == stacks);
}

TEST_CASE("failure stacks with no threads and extreme values round-trip", "[format][roundtrip]") {
  FailureStacks stacks;
  stacks.signal_number = -1;
  stacks.signal_code = std::numeric_limits<int32_t>::min();
  stacks.fault_address = std::numeric_limits<uint64_t>::max();
  Result<FailureStacks> decoded = decode_failure_stacks(encode_failure_stacks(stacks));
  REQUIRE(decoded.is_ok());
  CHECK(*decoded == stacks);
}

TEST_CASE("failure stacks cut at every byte are refused as corruption", "[format][corruption]") {
  std::string bytes = encode_failure_stacks(crash_in_worker());
  for (size_t length = 0; length < bytes.size(); ++length) {
    Result<FailureStacks> decoded = decode_failure_stacks(std::string_view(bytes).substr(0, length));
    REQUIRE_FALSE(decoded.is_ok());
    CHECK(decoded.status().code() == StatusCode::kCorruption);
  }
}

TEST_CASE("failure stacks with trailing bytes or a huge count are refused", "[format][corruption]") {
  std::string bytes = encode_failure_stacks(crash_in_worker());
  Result<FailureStacks> trailing = decode_failure_stacks(bytes + "x");
  REQUIRE_FALSE(trailing.is_ok());
  CHECK_THAT(trailing.status().message(), Catch::Contains("trailing bytes"));

  FailureStacks empty;
  std::string counted = encode_failure_stacks(empty);
  counted.back() = '\x7f';  // 127 threads in no bytes
  Result<FailureStacks> huge = decode_failure_stacks(counted);
  REQUIRE_FALSE(huge.is_ok());
  CHECK_THAT(huge.status().message(), Catch::Contains("bad thread count"));
}

}  // namespace
}  // namespace repro::format
