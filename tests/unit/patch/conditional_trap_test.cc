#include "core/patch/conditional_trap.h"

#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

using repro::patch::conditional_trap_code;
using repro::patch::jump_to_trampoline;

namespace {

// A function in an executable page whose first instructions are moved into
// a trampoline on the next page, with registers that never match: calling
// it must behave as the original did.
class MovedFunction {
 public:
  MovedFunction(const std::vector<uint8_t>& function, uint64_t data_word) {
    memory_ = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory_ != MAP_FAILED);
    code_ = static_cast<uint8_t*>(memory_);
    std::memcpy(code_ + 0x100, &data_word, sizeof data_word);
    std::memcpy(code_, function.data(), function.size());
  }
  ~MovedFunction() { munmap(memory_, 2 * kPage); }

  /// Moves the displaceable run at the start, with compares that change
  /// the flags or not; returns its instruction count.
  size_t move(bool flags_dead = false) {
    const uint64_t target = reinterpret_cast<uint64_t>(code_);
    const uint64_t trampoline = target + kPage;
    auto run = repro::patch::displaceable_run(code_, repro::patch::kRunCodeBytes, target);
    REQUIRE(!run.empty());
    size_t length = 0;
    for (const auto& instruction : run) length += instruction.length;
    user_regs_struct never{};
    never.rcx = 0xdeadbeefdeadbeef;  // no caller has these registers
    auto trap = conditional_trap_code(trampoline, target, never, user_regs_struct{},
                                      std::string_view(reinterpret_cast<char*>(code_), length), run,
                                      flags_dead);
    REQUIRE(trap.is_ok());
    REQUIRE(trap->bytes.size() <= repro::patch::kTrampolinePageBytes);
    CHECK(trap->trap_rip > trampoline);
    CHECK(trap->trap_rip < trampoline + trap->bytes.size());
    CHECK(trap->moved_addresses.size() == run.size());
    CHECK(trap->changes_flags == flags_dead);
    std::memcpy(code_ + kPage, trap->bytes.data(), trap->bytes.size());
    auto jump = jump_to_trampoline(target, trampoline, length);
    REQUIRE(jump.is_ok());
    std::memcpy(code_, jump->data(), jump->size());
    __builtin___clear_cache(reinterpret_cast<char*>(code_),
                            reinterpret_cast<char*>(code_) + 2 * kPage);
    return run.size();
  }

  uint64_t call(uint64_t argument) const {
    return reinterpret_cast<uint64_t (*)(uint64_t)>(code_)(argument);
  }

 private:
  static constexpr size_t kPage = 4096;
  void* memory_ = nullptr;
  uint8_t* code_ = nullptr;
};

}  // namespace

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
  // "mov rax, [rip+disp]; ret": the load moves, through a fixed displacement.
  MovedFunction f({0x48, 0x8b, 0x05, 0xf9, 0x00, 0x00, 0x00,  // mov rax, [rip+0xf9] (-> 0x100)
                   0xc3},                                     // ret
                  0x1122334455667788);
  CHECK(f.move() == 1);
  for (int i = 0; i < 3; ++i) {
    CHECK(f.call(0) == 0x1122334455667788);
  }
}

TEST_CASE("a run of short instructions moves as a whole, rip-relative operands included") {
  // "mov rax, rdi; mov rcx, [rip+disp]; add rax, rcx; ret" with the first
  // two instructions (10 bytes) moved: f(x) = x + word.
  MovedFunction f({0x48, 0x89, 0xf8,                          // mov rax, rdi
                   0x48, 0x8b, 0x0d, 0xf6, 0x00, 0x00, 0x00,  // mov rcx, [rip+0xf6] (-> 0x100)
                   0x48, 0x01, 0xc8,                          // add rax, rcx
                   0xc3},                                     // ret
                  1000);
  CHECK(f.move() == 2);
  CHECK(f.call(5) == 1005);
  CHECK(f.call(7) == 1007);
}

TEST_CASE(
    "where the flags are dead, a trampoline that compares with cmp runs the run and returns") {
  // The same function: "add rax, rcx" overwrites the flags after the run.
  const std::vector<uint8_t> function = {0x48, 0x89, 0xf8,  // mov rax, rdi
                                         0x48, 0x8b, 0x0d, 0xf6,
                                         0x00, 0x00, 0x00,  // mov rcx, [rip]
                                         0x48, 0x01, 0xc8,  // add rax, rcx
                                         0xc3};             // ret
  CHECK(repro::patch::arithmetic_flags_dead(function.data(), function.size(), 0x1000));
  MovedFunction f(function, 1000);
  CHECK(f.move(/*flags_dead=*/true) == 2);
  CHECK(f.call(5) == 1005);
  CHECK(f.call(0xdeadbeefdeadbeef - 1000) == 0xdeadbeefdeadbeef);  // rcx still differs
}
