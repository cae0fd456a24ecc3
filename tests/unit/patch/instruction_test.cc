#include "core/patch/instruction.h"

#include <catch2/catch.hpp>

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

TEST_CASE("short plain instructions and branches are steppable but stay in place") {
  auto add = decode({0x48, 0x01, 0xd8});  // add rax, rbx
  CHECK(add.kind == InstructionKind::kSteppable);
  CHECK(add.length == 3);
  CHECK(decode({0x0f, 0x85, 0x10, 0, 0, 0}).kind == InstructionKind::kSteppable);  // jne rel32
  CHECK(decode({0xe8, 0x10, 0, 0, 0}).kind == InstructionKind::kSteppable);        // call rel32
  CHECK(decode({0xff, 0xe0}).kind == InstructionKind::kSteppable);                 // jmp rax
  CHECK(decode({0xc3}).kind == InstructionKind::kSteppable);                       // ret
}

TEST_CASE("five-byte plain instructions are relocatable, rip-relative ones with their displacement") {
  auto mov_imm = decode({0xb8, 1, 2, 3, 4});  // mov eax, 0x04030201
  CHECK(mov_imm.kind == InstructionKind::kRelocatable);
  CHECK(mov_imm.length == 5);
  CHECK(mov_imm.rip_displacement_offset == -1);

  auto load = decode({0x48, 0x8b, 0x05, 0x10, 0, 0, 0});  // mov rax, [rip+0x10]
  CHECK(load.kind == InstructionKind::kRelocatable);
  CHECK(load.length == 7);
  CHECK(load.rip_displacement_offset == 3);

  auto cmp = decode({0x83, 0x3d, 0x10, 0, 0, 0, 0});  // cmp dword [rip+0x10], 0
  CHECK(cmp.kind == InstructionKind::kRelocatable);
  CHECK(cmp.rip_displacement_offset == 2);
}

TEST_CASE("undecodable bytes stop") {
  std::vector<uint8_t> bad = {0x0f, 0xff};  // ud0 without operands, truncated
  CHECK(decode_instruction(bad.data(), 1, 0x401000).kind == InstructionKind::kStop);
}
