#include "core/patch/syscall_sites.h"

#include <capstone/capstone.h>
#include <link.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using repro::patch::SyscallSite;

namespace {

std::vector<SyscallSite> sites_in(const std::vector<uint8_t>& code) {
  return repro::patch::syscall_sites_in_function(code.data(), code.size(), 0x1000);
}

// The path of the libc this test runs with, as the loader found it.
std::string libc_path() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        std::string name = info->dlpi_name;
        if (name.find("/libc.so") != std::string::npos) {
          *static_cast<std::string*>(out) = name;
          return 1;
        }
        return 0;
      },
      &path);
  return path;
}

// What the CPU's own cmp leaves in the arithmetic flags.
uint64_t flags_of_cmp(uint64_t rax, repro_site_compare compare) {
  uint64_t flags = 0;
  switch (compare) {
    case REPRO_SITE_CMP_RAX_4096:
      asm("cmpq $-4096, %1\n pushfq\n popq %0" : "=r"(flags) : "r"(rax) : "cc");
      break;
    case REPRO_SITE_CMP_RAX_4095:
      asm("cmpq $-4095, %1\n pushfq\n popq %0" : "=r"(flags) : "r"(rax) : "cc");
      break;
    case REPRO_SITE_CMP_EAX_4096:
      asm("cmpl $-4096, %k1\n pushfq\n popq %0" : "=r"(flags) : "r"(rax) : "cc");
      break;
    case REPRO_SITE_CMP_EAX_4095:
      asm("cmpl $-4095, %k1\n pushfq\n popq %0" : "=r"(flags) : "r"(rax) : "cc");
      break;
  }
  return flags;
}

}  // namespace

TEST_CASE("a syscall with a constant number and libc's error test is a site") {
  // mov $217,%eax; syscall; cmp $-4096,%rax; ja +0; ret
  std::vector<uint8_t> code = {0xb8, 0xd9, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x3d,
                               0x00, 0xf0, 0xff, 0xff, 0x77, 0x00, 0xc3};
  auto sites = sites_in(code);
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].vaddr == 0x1005);
  CHECK(sites[0].syscall_number == SYS_getdents64);
  CHECK(sites[0].compare == REPRO_SITE_CMP_RAX_4096);
  CHECK(sites[0].length == 8);

  // xor %eax,%eax; syscall; cmp $-4095,%eax; ret
  std::vector<uint8_t> read = {0x31, 0xc0, 0x0f, 0x05, 0x3d, 0x01, 0xf0, 0xff, 0xff, 0xc3};
  sites = sites_in(read);
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].syscall_number == SYS_read);
  CHECK(sites[0].compare == REPRO_SITE_CMP_EAX_4095);
  CHECK(sites[0].length == 7);
}

TEST_CASE("the number may be loaded a few instructions before") {
  // mov $257,%eax; mov %rdi,%rsi; mov $-100,%edi; syscall; cmp $-4096,%rax; ret
  std::vector<uint8_t> code = {0xb8, 0x01, 0x01, 0x00, 0x00, 0x48, 0x89, 0xfe, 0xbf, 0x9c, 0xff,
                               0xff, 0xff, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0xc3};
  auto sites = sites_in(code);
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].syscall_number == SYS_openat);
  CHECK(sites[0].vaddr == 0x100d);
}

TEST_CASE("syscalls that are not sites") {
  SECTION("eax is changed between the constant and the syscall") {
    // mov $0,%eax; add %edi,%eax; syscall; cmp $-4096,%rax; ret
    CHECK(sites_in({0xb8, 0, 0, 0, 0, 0x01, 0xf8, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff,
                    0xc3})
              .empty());
  }
  SECTION("a branch lands between the constant and the syscall") {
    // jmp +5 (to the nop); mov $0,%eax; nop; syscall; cmp $-4096,%rax; ret
    CHECK(sites_in({0xeb, 0x05, 0xb8, 0, 0, 0, 0, 0x90, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff,
                    0xff, 0xc3})
              .empty());
  }
  SECTION("the number comes from a register") {
    // mov %edi,%eax; syscall; cmp $-4096,%rax; ret
    CHECK(sites_in({0x89, 0xf8, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0xc3}).empty());
  }
  SECTION("something else follows") {
    // mov $0,%eax; syscall; test %rax,%rax; ret
    CHECK(sites_in({0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0x48, 0x85, 0xc0, 0xc3}).empty());
  }
  SECTION("a branch lands on the compare") {
    // jmp +5 (to the cmp); mov $0,%eax; syscall; cmp $-4096,%rax; ret
    std::vector<uint8_t> code = {0xeb, 0x07, 0xb8, 0, 0, 0, 0, 0x0f, 0x05,
                                 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0xc3};
    CHECK(sites_in(code).empty());
  }
  SECTION("a branch lands on the syscall itself") {
    // jmp +5 (to the syscall); mov $0,%eax; syscall; cmp $-4096,%rax; ret
    std::vector<uint8_t> code = {0xeb, 0x05, 0xb8, 0, 0, 0, 0, 0x0f, 0x05,
                                 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0xc3};
    CHECK(sites_in(code).empty());
  }
  SECTION("the function jumps through a register") {
    // mov $0,%eax; syscall; cmp $-4096,%rax; jmp *%rdx
    std::vector<uint8_t> code = {0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0x48,
                                 0x3d, 0x00, 0xf0, 0xff, 0xff, 0xff, 0xe2};
    CHECK(sites_in(code).empty());
  }
  SECTION("the bytes of syscall inside another instruction") {
    // mov $0x050f,%eax (b8 0f 05 00 00); cmp $-4096,%rax would follow the
    // bytes 0f 05 only if they were decoded from the middle.
    std::vector<uint8_t> code = {0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3};
    CHECK(sites_in(code).empty());
  }
}

TEST_CASE("libc's wrappers have sites for the calls the fast path takes") {
  auto sites = repro::patch::scan_for_syscall_sites(libc_path());
  REQUIRE(sites.is_ok());
  auto has = [&](int number) {
    for (const SyscallSite& site : *sites) {
      if (site.syscall_number == number) {
        return true;
      }
    }
    return false;
  };
  // These are the ones find and ls make from inside libc.
  CHECK(has(SYS_getdents64));
  CHECK(has(SYS_fcntl));
  CHECK(has(SYS_close));
  CHECK(has(SYS_newfstatat));
  CHECK(has(SYS_openat));
  CHECK(has(SYS_read));
  CHECK(sites->size() > 100);
}

TEST_CASE("a stub and a site jump decode as meant") {
  uint64_t site = 0x7f0000001000;
  uint64_t stub = 0x7f0000200000;
  uint64_t entry = 0x7f00001ff000;
  std::string jump = repro::patch::site_jump_bytes(site, stub, 8);
  REQUIRE(jump.size() == 8);
  std::string code = repro::patch::syscall_stub_bytes(stub, site + 8, entry);
  REQUIRE(code.size() == repro::patch::kSyscallStubBytes);

  csh handle;
  REQUIRE(cs_open(CS_ARCH_X86, CS_MODE_64, &handle) == CS_ERR_OK);
  cs_insn* insn = nullptr;
  size_t count = cs_disasm(handle, reinterpret_cast<const uint8_t*>(jump.data()), 5, site, 0, &insn);
  REQUIRE(count == 1);
  CHECK(std::string(insn[0].mnemonic) == "jmp");
  CHECK(std::strtoull(insn[0].op_str, nullptr, 16) == stub);
  cs_free(insn, count);
  count = cs_disasm(handle, reinterpret_cast<const uint8_t*>(code.data()), 27, stub, 0, &insn);
  REQUIRE(count == 4);
  CHECK(std::string(insn[0].mnemonic) + " " + insn[0].op_str == "lea rsp, [rsp - 0x88]");
  CHECK(std::string(insn[1].mnemonic) == "movabs");
  CHECK(std::string(insn[1].op_str) == "r11, 0x7f0000001008");
  CHECK(std::string(insn[2].mnemonic) + " " + insn[2].op_str == "mov qword ptr [rsp], r11");
  CHECK(std::strtoull(insn[3].op_str, nullptr, 16) == entry);
  cs_free(insn, count);
  cs_close(&handle);
  CHECK(repro::patch::within_jump_reach(site, stub));
  CHECK_FALSE(repro::patch::within_jump_reach(0x1000, 0x7f0000000000));
}

TEST_CASE("finishing a site sets the flags the compare would") {
  constexpr uint64_t kArithmetic = 0x8d5;  // CF PF AF ZF SF OF
  const uint64_t results[] = {0, 1, 5, 4096, 0x7fffffff, 0x80000000, 0xfffff000,
                              static_cast<uint64_t>(-1), static_cast<uint64_t>(-4095),
                              static_cast<uint64_t>(-4096), static_cast<uint64_t>(-4097),
                              static_cast<uint64_t>(-2), 0x8000000000000000ull};
  for (repro_site_compare compare : {REPRO_SITE_CMP_RAX_4096, REPRO_SITE_CMP_RAX_4095,
                                     REPRO_SITE_CMP_EAX_4096, REPRO_SITE_CMP_EAX_4095}) {
    for (uint64_t rax : results) {
      repro::os::Registers regs{};
      regs.rax = rax;
      regs.rip = 0x1002;
      regs.eflags = 0x202;
      repro::patch::finish_site_compare(regs, compare, 8);
      INFO("compare " << compare << " rax " << std::hex << rax);
      CHECK((regs.eflags & kArithmetic) == (flags_of_cmp(rax, compare) & kArithmetic));
      CHECK((regs.eflags & ~kArithmetic) == 0x202);
      CHECK(regs.rip == 0x1008);
    }
  }
}
