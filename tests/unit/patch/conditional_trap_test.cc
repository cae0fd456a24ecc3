#include "core/patch/conditional_trap.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <ucontext.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <optional>
#include <vector>

using repro::patch::conditional_trap_code;
using repro::patch::jump_to_trampoline;
using repro::patch::movable_loop_at;

namespace {

// Calls function(argument) with every other general register set to a
// constant (rax holds the function), so that two calls from the same frame
// reach it with the same registers.
extern "C" uint64_t run_with_fixed_registers(const void* function, uint64_t argument);
asm(R"(
  .text
  .type run_with_fixed_registers, @function
run_with_fixed_registers:
  .cfi_startproc
  push %rbx
  push %rbp
  push %r12
  push %r13
  push %r14
  push %r15
  sub $8, %rsp
  .cfi_def_cfa_offset 64
  mov %rdi, %rax
  mov %rsi, %rdi
  mov $0x1001, %ebx
  mov $0x1002, %ebp
  mov $0x1003, %r12d
  mov $0x1004, %r13d
  mov $0x1005, %r14d
  mov $0x1006, %r15d
  mov $0x1007, %ecx
  mov $0x1008, %edx
  mov $0x1009, %esi
  mov $0x100a, %r8d
  mov $0x100b, %r9d
  mov $0x100c, %r10d
  mov $0x100d, %r11d
  call *%rax
  add $8, %rsp
  pop %r15
  pop %r14
  pop %r13
  pop %r12
  pop %rbp
  pop %rbx
  ret
  .cfi_endproc
  .size run_with_fixed_registers, .-run_with_fixed_registers
)");

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
  // The registers a visit must have to trap (default: none has them), and
  // the word it must hold too.
  std::optional<user_regs_struct> want;
  std::optional<repro::patch::WatchedWord> word;
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
    if (how.want) {
      request.want = *how.want;
    }
    request.word = how.word;
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
    trap_rip_ = trap->trap_rip;
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
  /// The same, with every other register the same at each call.
  uint64_t call_with_fixed_registers(uint64_t argument) const {
    return run_with_fixed_registers(code_, argument);
  }
  /// The rip of a thread stopped by the trampoline's trap.
  uint64_t trap_rip() const { return trap_rip_; }

 private:
  static constexpr size_t kPage = 4096;
  void* memory_ = nullptr;
  uint8_t* code_ = nullptr;
  uint64_t trap_rip_ = 0;
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

namespace {

// The traps a trampoline test sees: an int3 the function starts with,
// which records the registers at the instruction after it, and the
// trampoline's own (at `trampoline_trap_rip`). Both resume after the trap.
struct Traps {
  uint64_t trampoline_trap_rip = 0;
  int entries = 0;
  int trampoline = 0;
  user_regs_struct at_entry{};
};
Traps traps;

void on_sigtrap(int /*signal*/, siginfo_t* /*info*/, void* context) {
  const greg_t* g = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
  if (static_cast<uint64_t>(g[REG_RIP]) == traps.trampoline_trap_rip) {
    ++traps.trampoline;
    return;
  }
  ++traps.entries;
  user_regs_struct& r = traps.at_entry;
  r.rax = g[REG_RAX], r.rbx = g[REG_RBX], r.rcx = g[REG_RCX], r.rdx = g[REG_RDX];
  r.rsi = g[REG_RSI], r.rdi = g[REG_RDI], r.rbp = g[REG_RBP], r.rsp = g[REG_RSP];
  r.r8 = g[REG_R8], r.r9 = g[REG_R9], r.r10 = g[REG_R10], r.r11 = g[REG_R11];
  r.r12 = g[REG_R12], r.r13 = g[REG_R13], r.r14 = g[REG_R14], r.r15 = g[REG_R15];
  r.rip = g[REG_RIP];
}

volatile uint64_t watched_word = 0;

}  // namespace

TEST_CASE("a trampoline with a watched word traps only when memory holds it too") {
  struct sigaction action {};
  action.sa_sigaction = on_sigtrap;
  action.sa_flags = SA_SIGINFO;
  struct sigaction previous {};
  REQUIRE(sigaction(SIGTRAP, &action, &previous) == 0);
  for (bool flags_dead : {false, true}) {
    INFO("flags dead: " << flags_dead);
    traps = Traps{};
    // "int3; mov rax, [rip+disp]; ret": the int3 records the registers at
    // the load, which then moves into the trampoline.
    MovedFunction f({0xcc,                                      // int3
                     0x48, 0x8b, 0x05, 0xf8, 0x00, 0x00, 0x00,  // mov rax, [rip+0xf8] (-> 0x100)
                     0xc3},                                     // ret
                    77);
    CHECK(f.call_with_fixed_registers(5) == 77);
    REQUIRE(traps.entries == 1);
    const user_regs_struct at_load = traps.at_entry;
    watched_word = 42;
    CHECK(f.move({.offset = 1,
                  .flags_dead = flags_dead,
                  .want = at_load,
                  .word = repro::patch::WatchedWord{
                      reinterpret_cast<uint64_t>(&watched_word), 42}}) == 1);
    traps.trampoline_trap_rip = f.trap_rip();

    CHECK(f.call_with_fixed_registers(5) == 77);  // registers and word match
    CHECK(traps.trampoline == 1);
    watched_word = 41;
    CHECK(f.call_with_fixed_registers(5) == 77);  // the word differs
    CHECK(traps.trampoline == 1);
    watched_word = 42;
    CHECK(f.call_with_fixed_registers(6) == 77);  // rdi differs
    CHECK(traps.trampoline == 1);
    CHECK(f.call_with_fixed_registers(5) == 77);
    CHECK(traps.trampoline == 2);
    CHECK(traps.entries == 5);
  }
  sigaction(SIGTRAP, &previous, nullptr);
}
