#include "core/fastpath/syscall_batch.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "core/fastpath/fastpath_abi.h"

namespace repro::fastpath {
namespace {

// One record as the preloaded library lays it out.
std::string record(int32_t number, int64_t result, uint64_t output_address,
                   const std::string& output, const std::string& input = "",
                   uint8_t input_arg = 0, uint8_t second_input_arg = 0) {
  repro_fastpath_record header{};
  header.record_bytes = static_cast<uint32_t>(
      sizeof header + ((output.size() + input.size() + 7) & ~size_t{7}));
  header.input_bytes = static_cast<uint16_t>(input.size());
  header.input_arg = input_arg;
  header.second_input_arg = second_input_arg;
  header.syscall_number = number;
  header.args[0] = 3;
  header.args[2] = output.size();
  header.result = result;
  header.output_address = output_address;
  header.output_bytes = static_cast<uint32_t>(output.size());
  std::string bytes(reinterpret_cast<const char*>(&header), sizeof header);
  bytes += output;
  bytes += input;
  bytes.resize(header.record_bytes, '\0');
  return bytes;
}

TEST_CASE("a batch decodes to its syscalls in order, with their output") {
  std::string data = record(110, 4242, 0, "") + record(0, 5, 0x7000, "hello");
  auto syscalls = parse_syscall_batch(data);
  REQUIRE(syscalls.is_ok());
  REQUIRE(syscalls->size() == 2);
  CHECK((*syscalls)[0].syscall_number == 110);
  CHECK((*syscalls)[0].result == 4242);
  CHECK((*syscalls)[0].output.empty());
  CHECK((*syscalls)[1].syscall_number == 0);
  CHECK((*syscalls)[1].args[0] == 3);
  CHECK((*syscalls)[1].args[2] == 5);
  CHECK((*syscalls)[1].output_address == 0x7000);
  CHECK((*syscalls)[1].output == "hello");
  CHECK(data.size() == 80 + 88);
}

TEST_CASE("a record's path follows its output and becomes the syscall event's input") {
  std::string stat(144, '\x7f');
  std::string data = record(262, 0, 0x7100, stat, "/etc/hosts", 1) + record(110, 7, 0, "");
  auto syscalls = parse_syscall_batch(data);
  REQUIRE(syscalls.is_ok());
  REQUIRE(syscalls->size() == 2);
  const BatchedSyscall& newfstatat = (*syscalls)[0];
  CHECK(newfstatat.output == stat);
  REQUIRE(newfstatat.inputs.size() == 1);
  CHECK(newfstatat.inputs[0].bytes == "/etc/hosts");
  CHECK(newfstatat.inputs[0].arg_index == 1);
  CHECK(newfstatat.record_bytes == 80 + 160);
  CHECK((*syscalls)[1].record_offset == 240);
  CHECK((*syscalls)[1].inputs.empty());
  format::Event event;
  to_syscall_event(newfstatat, 4, &event);
  CHECK(event.thread == 4);
  CHECK(event.syscall_flags == format::kSyscallFastPath);
  REQUIRE(event.inputs.size() == 1);
  CHECK(event.inputs[0].arg_index == 1);
  CHECK(event.inputs[0].bytes == "/etc/hosts");
  REQUIRE(event.writes.size() == 1);
  CHECK(event.writes[0].address == 0x7100);
}

TEST_CASE("a record with a second input holds both strings, split at a NUL") {
  using namespace std::string_literals;
  // lgetxattr("/etc/hosts", "security.selinux", buf, 255) = -ENODATA
  std::string data = record(192, -61, 0x7200, "", "/etc/hosts\0security.selinux"s, 0, 1) +
                     record(193, -61, 0x7200, "", "\0user.x"s, 0, 1);
  auto syscalls = parse_syscall_batch(data);
  REQUIRE(syscalls.is_ok());
  REQUIRE(syscalls->size() == 2);
  const BatchedSyscall& both = (*syscalls)[0];
  REQUIRE(both.inputs.size() == 2);
  CHECK(both.inputs[0].arg_index == 0);
  CHECK(both.inputs[0].bytes == "/etc/hosts");
  CHECK(both.inputs[1].arg_index == 1);
  CHECK(both.inputs[1].bytes == "security.selinux");
  // An empty path: only the name is an input.
  const BatchedSyscall& name_only = (*syscalls)[1];
  REQUIRE(name_only.inputs.size() == 1);
  CHECK(name_only.inputs[0].arg_index == 1);
  CHECK(name_only.inputs[0].bytes == "user.x");
  format::Event event;
  to_syscall_event(both, 0, &event);
  CHECK(event.inputs == both.inputs);
}

TEST_CASE("a record whose path runs past its length is corruption") {
  std::string data = record(262, 0, 0x7100, "", "/etc/hosts", 1);
  uint32_t too_short = 88;  // the header and 8 of the path's 10 bytes
  std::memcpy(data.data(), &too_short, sizeof too_short);
  CHECK_FALSE(parse_syscall_batch(data.substr(0, 88)).is_ok());
  std::string bad_arg = record(262, 0, 0x7100, "", "/etc/hosts", 6);
  CHECK_FALSE(parse_syscall_batch(bad_arg).is_ok());
}

TEST_CASE("an empty batch has no syscalls") {
  auto syscalls = parse_syscall_batch("");
  REQUIRE(syscalls.is_ok());
  CHECK(syscalls->empty());
}

TEST_CASE("a batch cut short or with a bad record length is corruption") {
  std::string data = record(0, 5, 0x7000, "hello");
  auto cut = parse_syscall_batch(std::string_view(data).substr(0, data.size() - 8));
  REQUIRE_FALSE(cut.is_ok());
  CHECK(cut.status().code() == StatusCode::kCorruption);
  CHECK_FALSE(parse_syscall_batch(data.substr(0, 40)).is_ok());
  std::string short_length = data;
  uint32_t too_short = 80;  // less than the header and its 5 output bytes
  std::memcpy(short_length.data(), &too_short, sizeof too_short);
  CHECK_FALSE(parse_syscall_batch(short_length).is_ok());
}

}  // namespace
}  // namespace repro::fastpath
