#include "core/diag/backtrace.h"

#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

// A leaf without unwind tables, as clone.S is after its syscall: it pushes
// nothing, clears rbp (so no frame-pointer guess can walk on) and stops at
// an int3 for the test to unwind it.
asm(R"(
  .text
  .globl leaf_without_unwind_tables
  .type leaf_without_unwind_tables, @function
leaf_without_unwind_tables:
  mov %rbp, %rax
  xor %ebp, %ebp
  int3
  mov %rax, %rbp
  ret
  .size leaf_without_unwind_tables, .-leaf_without_unwind_tables
)");
extern "C" void leaf_without_unwind_tables();

namespace {

volatile int calls_made = 0;

__attribute__((noinline)) void caller_of_leaf() {
  leaf_without_unwind_tables();
  calls_made = calls_made + 1;  // keeps the call from becoming a jump
}

}  // namespace

TEST_CASE("backtraces step over a leaf without unwind tables to its caller",
          "[diag][backtrace]") {
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    caller_of_leaf();
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSTOPPED(status));
  REQUIRE(WSTOPSIG(status) == SIGTRAP);

  repro::diag::Unwound unwound = repro::diag::unwind(child, child, {});
  kill(child, SIGKILL);
  waitpid(child, &status, 0);

  INFO("note: " << unwound.note);
  REQUIRE(unwound.frames.size() >= 3);
  CHECK(unwound.frames[0].function == "leaf_without_unwind_tables");
  CHECK(unwound.frames[1].function.find("caller_of_leaf") != std::string::npos);
  // The walk goes on from the caller, through its unwind tables.
  CHECK(unwound.frames[2].function.find("C_A_T_C_H") != std::string::npos);
}
