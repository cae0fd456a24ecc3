#include "core/patch/instruction.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using repro::patch::decode_instruction;
using repro::patch::InstructionKind;

namespace {

repro::patch::Instruction decode(std::vector<uint8_t> bytes) {
  bytes.resize(16, 0x90);
  return decode_instruction(bytes.data(), bytes.size(), 0x401000);
}

}  // namespace

TEST_CASE("syscalls, traps, rdtsc and cpuid are never stepped over") {
  CHECK(decode({0x0f, 0x05}).kind == InstructionKind::kStop);        // syscall
  CHECK(decode({0xcc}).kind == InstructionKind::kStop);              // int3
  CHECK(decode({0xcd, 0x80}).kind == InstructionKind::kStop);        // int 0x80
  CHECK(decode({0x0f, 0x31}).kind == InstructionKind::kStop);        // rdtsc
  CHECK(decode({0x0f, 0x01, 0xf9}).kind == InstructionKind::kStop);  // rdtscp
  CHECK(decode({0x0f, 0xa2}).kind == InstructionKind::kStop);        // cpuid
  CHECK(decode({0x0f, 0x0b}).kind == InstructionKind::kStop);        // ud2
}

TEST_CASE("pushf is never stepped over: it would save the trap flag") {
  CHECK(decode({0x9c}).kind == InstructionKind::kStop);
}

TEST_CASE("branches and calls are steppable but stay in place") {
  CHECK(decode({0x0f, 0x85, 0x10, 0, 0, 0}).kind == InstructionKind::kSteppable);  // jne rel32
  CHECK(decode({0xe8, 0x10, 0, 0, 0}).kind == InstructionKind::kSteppable);        // call rel32
  CHECK(decode({0xff, 0xe0}).kind == InstructionKind::kSteppable);                 // jmp rax
  CHECK(decode({0xc3}).kind == InstructionKind::kSteppable);                       // ret
  // rep stosb: a thread can stand in its middle, so it never moves
  CHECK(decode({0xf3, 0xaa}).kind == InstructionKind::kSteppable);
  CHECK(decode({0xf3, 0x48, 0xa5}).kind == InstructionKind::kSteppable);  // rep movsq
  CHECK(decode({0xaa}).kind == InstructionKind::kMovable);                // stosb alone
}

TEST_CASE("rep movs, stos and lods are repeated string instructions with their element size") {
  auto at = [](std::vector<uint8_t> bytes) {
    bytes.resize(16, 0x90);
    return repro::patch::repeated_string_at(bytes.data(), bytes.size());
  };
  auto movsb = at({0xf3, 0xa4});
  REQUIRE(movsb);
  CHECK(movsb->length == 2);
  CHECK(movsb->element_bytes == 1);
  CHECK((movsb->uses_rsi && movsb->uses_rdi));
  auto movsq = at({0xf3, 0x48, 0xa5});
  REQUIRE(movsq);
  CHECK(movsq->length == 3);
  CHECK(movsq->element_bytes == 8);
  auto stosd = at({0xf3, 0xab});
  REQUIRE(stosd);
  CHECK(stosd->element_bytes == 4);
  CHECK((!stosd->uses_rsi && stosd->uses_rdi));
  auto stosw = at({0x66, 0xf3, 0xab});
  REQUIRE(stosw);
  CHECK(stosw->element_bytes == 2);
  auto lodsb = at({0xf3, 0xac});
  REQUIRE(lodsb);
  CHECK((lodsb->uses_rsi && !lodsb->uses_rdi));
  CHECK_FALSE(at({0xa4}));                    // movsb without rep: one step
  CHECK_FALSE(at({0xf3, 0xa6}));              // repe cmpsb: a compare may end it early
  CHECK_FALSE(at({0xf2, 0xae}));              // repne scasb
  CHECK_FALSE(at({0x67, 0xf3, 0xa4}));        // 32-bit addressing
  CHECK_FALSE(at({0xf2, 0x0f, 0x10, 0xc1}));  // movsd xmm0, xmm1 (SSE, not a string)
}

TEST_CASE("plain instructions are movable, rip-relative ones with their displacement") {
  auto add = decode({0x48, 0x01, 0xd8});  // add rax, rbx
  CHECK(add.kind == InstructionKind::kMovable);
  CHECK(add.length == 3);

  auto mov_imm = decode({0xb8, 1, 2, 3, 4});  // mov eax, 0x04030201
  CHECK(mov_imm.kind == InstructionKind::kMovable);
  CHECK(mov_imm.length == 5);
  CHECK(mov_imm.rip_displacement_offset == -1);

  auto load = decode({0x48, 0x8b, 0x05, 0x10, 0, 0, 0});  // mov rax, [rip+0x10]
  CHECK(load.kind == InstructionKind::kMovable);
  CHECK(load.length == 7);
  CHECK(load.rip_displacement_offset == 3);

  auto cmp = decode({0x83, 0x3d, 0x10, 0, 0, 0, 0});  // cmp dword [rip+0x10], 0
  CHECK(cmp.kind == InstructionKind::kMovable);
  CHECK(cmp.rip_displacement_offset == 2);
}

TEST_CASE("undecodable bytes stop") {
  std::vector<uint8_t> bad = {0x0f, 0xff};  // ud0 without operands, truncated
  CHECK(decode_instruction(bad.data(), 1, 0x401000).kind == InstructionKind::kStop);
}

TEST_CASE("a displaceable run is the shortest run of movable instructions of five bytes or more") {
  std::vector<uint8_t> code = {0x48, 0x01, 0xd8,  // add rax, rbx
                               0x48, 0x31, 0xc8,  // xor rax, rcx
                               0x75, 0xf8};       // jne -8
  code.resize(32, 0x90);
  auto run = repro::patch::displaceable_run(code.data(), code.size(), 0x401000);
  REQUIRE(run.size() == 2);
  CHECK(run[0].length + run[1].length == 6);

  std::vector<uint8_t> branchy = {0x48, 0x01, 0xd8,  // add rax, rbx
                                  0x75, 0xfb};       // jne: ends the run too early
  branchy.resize(32, 0x90);
  CHECK(repro::patch::displaceable_run(branchy.data(), branchy.size(), 0x401000).empty());

  std::vector<uint8_t> one = {0x48, 0x8b, 0x05, 0x10, 0, 0, 0};  // mov rax, [rip+0x10]
  one.resize(32, 0x90);
  CHECK(repro::patch::displaceable_run(one.data(), one.size(), 0x401000).size() == 1);
}

TEST_CASE("a direct jump into the middle of a run is found, one to its start is not") {
  // 0x401000: jmp 0x401013 (into the run); 0x401010: add rax, rbx (run
  // start); 0x401013: xor rax, rcx; 0x401016: jne 0x401010.
  std::vector<uint8_t> code(0x20, 0x90);
  const uint8_t jump_in[] = {0xe9, 0x0e, 0x00, 0x00, 0x00};  // jmp +0x0e -> 0x401013
  std::memcpy(code.data(), jump_in, sizeof jump_in);
  const uint8_t loop[] = {0x48, 0x01, 0xd8, 0x48, 0x31, 0xc8, 0x75, 0xf8};
  std::memcpy(code.data() + 0x10, loop, sizeof loop);
  CHECK(repro::patch::direct_branch_lands_inside(code.data(), code.size(), 0x401000, 0x401010,
                                                 0x401016));
  code[1] = 0x0b;  // jmp -> 0x401010, the run's start: fine
  CHECK_FALSE(repro::patch::direct_branch_lands_inside(code.data(), code.size(), 0x401000,
                                                       0x401010, 0x401016));
}

TEST_CASE("the flags are dead only where straight-line code overwrites all of them unread") {
  auto dead = [](std::vector<uint8_t> bytes) {
    return repro::patch::arithmetic_flags_dead(bytes.data(), bytes.size(), 0x401000);
  };
  // movzx ecx, byte [rax]; add rax, 1: add defines every arithmetic flag
  CHECK(dead({0x0f, 0xb6, 0x08, 0x48, 0x83, 0xc0, 0x01}));
  // imul rdx, rdi (CF, OF); cmp rsi, rax (the rest)
  CHECK(dead({0x48, 0x0f, 0xaf, 0xd7, 0x48, 0x39, 0xc6}));
  // jne reads them
  CHECK_FALSE(dead({0x0f, 0x85, 0x10, 0, 0, 0}));
  // adc reads CF
  CHECK_FALSE(dead({0x48, 0x11, 0xc8}));
  // xor leaves AF undefined, jne follows before anything defines it
  CHECK_FALSE(dead({0x48, 0x31, 0xc8, 0x75, 0xf0}));
  // inc keeps CF; the code ends before anything overwrites it
  CHECK_FALSE(dead({0x48, 0xff, 0xc0}));
  // a move, then the end of the code: nothing known
  CHECK_FALSE(dead({0x48, 0x89, 0xf8}));
}
