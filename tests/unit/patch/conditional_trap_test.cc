#include "core/patch/conditional_trap.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

using repro::patch::conditional_trap_code;
using repro::patch::jump_to_trampoline;
using repro::patch::movable_loop_at;

namespace {

// Reads this process's own code; false where it is not mapped.
bool read_code(uint64_t address, uint8_t* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

// How MovedFunction::move moves code.
struct How {
  size_t offset = 0;        // of the target instruction in the function
  bool flags_dead = false;  // compares may change the flags
  bool whole_loop = false;  // the loop around the target moves too
};

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

  /// Moves the displaceable run at the target (and the loop around it);
  /// returns the run's instruction count.
  size_t move(How how = {}) {
    const uint64_t target = reinterpret_cast<uint64_t>(code_) + how.offset;
    repro::patch::TrampolineRequest request{.trampoline = reinterpret_cast<uint64_t>(code_) + kPage,
                                            .target = target,
                                            .flags_dead = how.flags_dead};
    request.run =
        repro::patch::displaceable_run(code_ + how.offset, repro::patch::kRunCodeBytes, target);
    REQUIRE(!request.run.empty());
    size_t length = 0;
    for (const auto& instruction : request.run) length += instruction.length;
    request.original = std::string_view(reinterpret_cast<char*>(code_ + how.offset), length);
    request.want.rcx = 0xdeadbeefdeadbeef;  // no caller has these registers
    if (how.whole_loop) {
      request.loop = movable_loop_at(read_code, target);
      REQUIRE(request.loop.has_value());
    }
    auto trap = conditional_trap_code(request);
    REQUIRE(trap.is_ok());
    REQUIRE(trap->bytes.size() <= repro::patch::kTrampolinePageBytes);
    CHECK(trap->trap_rip > request.trampoline);
    CHECK(trap->trap_rip < request.trampoline + trap->bytes.size());
    CHECK(trap->moved_addresses.size() == request.run.size());
    CHECK(trap->changes_flags == how.flags_dead);
    std::memcpy(code_ + kPage, trap->bytes.data(), trap->bytes.size());
    auto jump = jump_to_trampoline(target, request.trampoline, length);
    REQUIRE(jump.is_ok());
    std::memcpy(code_ + how.offset, jump->data(), jump->size());
    __builtin___clear_cache(reinterpret_cast<char*>(code_),
                            reinterpret_cast<char*>(code_) + 2 * kPage);
    return request.run.size();
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
  CHECK(f.move({.flags_dead = true}) == 2);
  CHECK(f.call(5) == 1005);
  CHECK(f.call(0xdeadbeefdeadbeef - 1000) == 0xdeadbeefdeadbeef);  // rcx still differs
}

namespace {

// f(n) = n + (n - 1) + ... + 1, for n >= 1, in a loop of movable
// instructions closed by jne back to its head at offset 2.
const std::vector<uint8_t> kSumLoop = {0x31, 0xc0,        // 0: xor eax, eax
                                       0x48, 0x01, 0xf8,  // 2: add rax, rdi          <- loop head
                                       0x48, 0x8d, 0x7f, 0xff,  // 5: lea rdi, [rdi - 1]
                                       0x48, 0x85, 0xff,        // 9: test rdi, rdi
                                       0x75, 0xf4,              // c: jne 2
                                       0xc3};                   // e: ret

}  // namespace

TEST_CASE("a small loop of movable instructions closed by a conditional jump is found") {
  std::vector<uint8_t> page(4096, 0xcc);
  std::copy(kSumLoop.begin(), kSumLoop.end(), page.begin() + 512);
  const uint64_t base = reinterpret_cast<uint64_t>(page.data()) + 512;
  for (uint64_t offset : {2, 5, 9}) {
    auto loop = movable_loop_at(read_code, base + offset);
    REQUIRE(loop.has_value());
    CHECK(loop->head == base + 2);
    CHECK(loop->code.size() == 12);
    REQUIRE(loop->instructions.size() == 4);  // the closing jne included
    REQUIRE(loop->instructions.back().jump.has_value());
    CHECK(loop->instructions.back().jump->condition == 0x5);  // ne
    CHECK(loop->instructions.back().jump->destination == base + 2);
  }
  CHECK_FALSE(movable_loop_at(read_code, base).has_value());       // before the head
  CHECK_FALSE(movable_loop_at(read_code, base + 3).has_value());   // inside an instruction
  CHECK_FALSE(movable_loop_at(read_code, base + 14).has_value());  // ret: no loop
}

TEST_CASE("a loop moved whole from its head runs each turn in the trampoline") {
  MovedFunction f(kSumLoop, 0);
  CHECK(f.move({.offset = 2, .flags_dead = true, .whole_loop = true}) == 2);
  CHECK(f.call(1) == 1);
  CHECK(f.call(10) == 55);
  CHECK(f.call(1000) == 500500);
}

TEST_CASE("a loop moved whole from the middle, with the flags live there, turns around") {
  // At offset 5 the flags are live (test leaves AF undefined before jne):
  // the compares keep them; the copy of the head runs before the next check.
  std::vector<uint8_t> code = kSumLoop;
  CHECK_FALSE(repro::patch::arithmetic_flags_dead(code.data() + 5, code.size() - 5, 0x1005));
  MovedFunction f(code, 0);
  CHECK(f.move({.offset = 5, .whole_loop = true}) == 2);
  CHECK(f.call(1) == 1);
  CHECK(f.call(10) == 55);
  CHECK(f.call(1000) == 500500);
}

namespace {

// f(n) = how many of n - 1, ..., 0 are odd, for n >= 1: a loop with a
// branch inside it, over an instruction, to a place inside the loop.
const std::vector<uint8_t> kCountOddLoop = {
    0x31, 0xc0,              // 0: xor eax, eax
    0x48, 0xff, 0xcf,        // 2: dec rdi                <- loop head
    0x40, 0xf6, 0xc7, 0x01,  // 5: test dil, 1
    0x74, 0x03,              // 9: je e
    0x48, 0xff, 0xc0,        // b: inc rax
    0x48, 0x85, 0xff,        // e: test rdi, rdi
    0x75, 0xef,              // 11: jne 2
    0xc3};                   // 13: ret

}  // namespace

TEST_CASE("a loop with a branch inside moves whole, the branch aimed at its copy") {
  for (bool flags_dead : {true, false}) {
    MovedFunction f(kCountOddLoop, 0);
    CHECK(f.move({.offset = 2, .flags_dead = flags_dead, .whole_loop = true}) == 2);
    CHECK(f.call(1) == 0);
    CHECK(f.call(10) == 5);
    CHECK(f.call(7) == 3);
    CHECK(f.call(1001) == 500);
  }
}
