#include "core/patch/conditional_trap.h"

#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstring>

using repro::patch::conditional_trap_code;
using repro::patch::jump_to_trampoline;

TEST_CASE("a jump to the trampoline fills the whole instruction") {
  auto bytes = jump_to_trampoline(0x1000, 0x3000, 7);
  REQUIRE(bytes.is_ok());
  REQUIRE(bytes->size() == 7);
  CHECK(static_cast<uint8_t>((*bytes)[0]) == 0xe9);
  int32_t rel;
  std::memcpy(&rel, bytes->data() + 1, 4);
  CHECK(rel == 0x3000 - 0x1005);
  CHECK(static_cast<uint8_t>((*bytes)[5]) == 0xcc);
  CHECK_FALSE(jump_to_trampoline(0x1000, 0x3000, 4).is_ok());
  CHECK_FALSE(jump_to_trampoline(0x1000, 0x1000 + (uint64_t{1} << 32), 5).is_ok());
}

TEST_CASE("a trampoline whose registers do not match runs the moved instruction and returns") {
  // A function "mov rax, [rip+disp]; ret" whose load is moved into a
  // trampoline on the next page: calling it must still return the word it
  // loads, through the fixed displacement, and with the stack intact.
  const size_t page = 4096;
  void* memory = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(memory != MAP_FAILED);
  auto* code = static_cast<uint8_t*>(memory);
  const uint64_t target = reinterpret_cast<uint64_t>(code);
  const uint64_t trampoline = target + page;
  const uint64_t data = 0x1122334455667788;
  std::memcpy(code + 0x100, &data, sizeof data);
  const uint8_t function[] = {0x48, 0x8b, 0x05, 0xf9, 0x00, 0x00, 0x00,  // mov rax, [rip+0xf9]
                              0xc3};                                   // ret
  std::memcpy(code, function, sizeof function);
  auto run = repro::patch::displaceable_run(code, repro::patch::kRunCodeBytes, target);
  REQUIRE(run.size() == 1);
  const size_t length = run[0].length;

  user_regs_struct never{};
  never.rcx = 0xdeadbeefdeadbeef;  // no caller has these registers
  auto trap = conditional_trap_code(trampoline, target, never,
                                    std::string_view(reinterpret_cast<char*>(code), length), run);
  REQUIRE(trap.is_ok());
  REQUIRE(trap->bytes.size() <= repro::patch::kTrampolineMaxSize);
  CHECK(trap->trap_rip > trampoline);
  CHECK(trap->trap_rip < trampoline + trap->bytes.size());
  std::memcpy(code + page, trap->bytes.data(), trap->bytes.size());
  auto jump = jump_to_trampoline(target, trampoline, length);
  REQUIRE(jump.is_ok());
  std::memcpy(code, jump->data(), jump->size());
  __builtin___clear_cache(reinterpret_cast<char*>(code), reinterpret_cast<char*>(code) + 2 * page);

  auto call = reinterpret_cast<uint64_t (*)()>(code);
  for (int i = 0; i < 3; ++i) {
    CHECK(call() == data);
  }
  munmap(memory, 2 * page);
}

TEST_CASE("a run of short instructions moves as a whole, rip-relative operands included") {
  // "mov rax, rdi; mov rcx, [rip+disp]; add rax, rcx; ret" with the first
  // two instructions (10 bytes) moved: f(x) = x + word.
  const size_t page = 4096;
  void* memory = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(memory != MAP_FAILED);
  auto* code = static_cast<uint8_t*>(memory);
  const uint64_t target = reinterpret_cast<uint64_t>(code);
  const uint64_t word = 1000;
  std::memcpy(code + 0x100, &word, sizeof word);
  const uint8_t function[] = {
      0x48, 0x89, 0xf8,                          // mov rax, rdi
      0x48, 0x8b, 0x0d, 0xf6, 0x00, 0x00, 0x00,  // mov rcx, [rip+0xf6] (-> 0x100)
      0x48, 0x01, 0xc8,                          // add rax, rcx
      0xc3};                                     // ret
  std::memcpy(code, function, sizeof function);
  auto run = repro::patch::displaceable_run(code, repro::patch::kRunCodeBytes, target);
  REQUIRE(run.size() == 2);
  const size_t length = run[0].length + run[1].length;
  REQUIRE(length == 10);
  user_regs_struct never{};
  never.rcx = 0xdeadbeefdeadbeef;
  auto trap = conditional_trap_code(target + page, target, never,
                                    std::string_view(reinterpret_cast<char*>(code), length), run);
  REQUIRE(trap.is_ok());
  CHECK(trap->moved_addresses.size() == 2);
  std::memcpy(code + page, trap->bytes.data(), trap->bytes.size());
  auto jump = jump_to_trampoline(target, target + page, length);
  REQUIRE(jump.is_ok());
  std::memcpy(code, jump->data(), jump->size());
  __builtin___clear_cache(reinterpret_cast<char*>(code), reinterpret_cast<char*>(code) + 2 * page);
  auto call = reinterpret_cast<uint64_t (*)(uint64_t)>(code);
  CHECK(call(5) == 1005);
  CHECK(call(7) == 1007);
  munmap(memory, 2 * page);
}
