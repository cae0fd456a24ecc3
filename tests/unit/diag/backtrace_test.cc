#include "core/diag/backtrace.h"

#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

// A leaf without unwind tables, as clone.S is after its syscall: it pushes
// nothing and stops at an int3 for the test to unwind it. Its caller has
// unwind tables but clears rbp around the call (saved on the stack, as the
// tables say), so no frame-pointer guess can walk on from the leaf.
asm(R"(
  .text
  .globl leaf_without_unwind_tables
  .type leaf_without_unwind_tables, @function
leaf_without_unwind_tables:
  int3
  ret
  .size leaf_without_unwind_tables, .-leaf_without_unwind_tables

  .globl caller_of_leaf
  .type caller_of_leaf, @function
caller_of_leaf:
  .cfi_startproc
  push %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  xor %ebp, %ebp
  call leaf_without_unwind_tables
  pop %rbp
  .cfi_def_cfa_offset 8
  ret
  .cfi_endproc
  .size caller_of_leaf, .-caller_of_leaf
)");
extern "C" void caller_of_leaf();

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

  std::string frames;
  for (const repro::diag::Frame& frame : unwound.frames) {
    frames += " " + frame.function;
  }
  INFO("frames:" << frames << "; note: " << unwound.note);
  REQUIRE(unwound.frames.size() >= 3);
  CHECK(unwound.frames[0].function == "leaf_without_unwind_tables");
  CHECK(unwound.frames[1].function == "caller_of_leaf");
  // The walk goes on from the caller, through its unwind tables.
  CHECK(unwound.frames[2].function.find("C_A_T_C_H") != std::string::npos);
}
