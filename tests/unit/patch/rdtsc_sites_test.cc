#include "core/patch/rdtsc_sites.h"

#include <link.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

// Code this test scans in its own executable. Each function has CFI, so
// .eh_frame gives its start: a true rdtsc, a true rdtscp after another
// instruction, and decoys whose immediates hold the bytes of rdtsc (0f 31)
// and rdtscp (0f 01 f9) without being those instructions.
extern "C" void repro_test_rdtsc_site();
extern "C" void repro_test_rdtscp_site();
extern "C" void repro_test_decoy_site();
asm(R"(
  .text
  .globl repro_test_rdtsc_site
  .type repro_test_rdtsc_site, @function
repro_test_rdtsc_site:
  .cfi_startproc
  rdtsc
  ret
  .cfi_endproc
  .size repro_test_rdtsc_site, .-repro_test_rdtsc_site

  .globl repro_test_rdtscp_site
  .type repro_test_rdtscp_site, @function
repro_test_rdtscp_site:
  .cfi_startproc
  xor %eax, %eax
  rdtscp
  ret
  .cfi_endproc
  .size repro_test_rdtscp_site, .-repro_test_rdtscp_site

  .globl repro_test_decoy_site
  .type repro_test_decoy_site, @function
repro_test_decoy_site:
  .cfi_startproc
  mov $0x90f9010f, %eax
  mov $0x9090310f, %ecx
  ret
  .cfi_endproc
  .size repro_test_decoy_site, .-repro_test_decoy_site
)");

// The same bytes as data, outside any executable segment.
extern const unsigned char kRdtscBytesAsData[] = {0x0f, 0x31, 0x0f, 0x01, 0xf9};

namespace {

using repro::patch::RdtscScan;
using repro::patch::RdtscSite;

// The load bias of this executable: its ELF addresses plus this are
// its addresses in memory.
uint64_t own_load_bias() {
  uint64_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        *static_cast<uint64_t*>(out) = info->dlpi_addr;
        return 1;  // the first object is the executable itself
      },
      &bias);
  return bias;
}

uint64_t elf_address(void (*function)()) {
  return reinterpret_cast<uint64_t>(function) - own_load_bias();
}

const RdtscSite* site_at(const RdtscScan& scan, uint64_t vaddr) {
  for (const RdtscSite& site : scan.sites) {
    if (site.vaddr == vaddr) {
      return &site;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the scan finds rdtsc and rdtscp decoded from function starts, and only those",
          "[patch]") {
  auto scan = repro::patch::scan_for_rdtsc("/proc/self/exe");
  REQUIRE(scan.is_ok());

  const RdtscSite* rdtsc = site_at(*scan, elf_address(repro_test_rdtsc_site));
  REQUIRE(rdtsc != nullptr);
  CHECK(rdtsc->length == 2);
  CHECK_FALSE(rdtsc->rdtscp);

  const RdtscSite* rdtscp = site_at(*scan, elf_address(repro_test_rdtscp_site) + 2);
  REQUIRE(rdtscp != nullptr);
  CHECK(rdtscp->length == 3);
  CHECK(rdtscp->rdtscp);

  // The file offsets point at the instructions' bytes in the file.
  std::ifstream file("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(bytes.substr(rdtsc->file_offset, 2) == std::string("\x0f\x31", 2));
  CHECK(bytes.substr(rdtscp->file_offset, 3) == std::string("\x0f\x01\xf9", 3));

  // The decoys' patterns sit inside mov immediates: no site there, and
  // they count as unconfirmed patterns.
  uint64_t decoy = elf_address(repro_test_decoy_site);
  for (const RdtscSite& site : scan->sites) {
    CHECK_FALSE((site.vaddr >= decoy && site.vaddr < decoy + 11));
  }
  CHECK(scan->unconfirmed >= 2);
  // Data is never scanned.
  uint64_t data = reinterpret_cast<uint64_t>(kRdtscBytesAsData) - own_load_bias();
  CHECK(site_at(*scan, data) == nullptr);
}

TEST_CASE("a file that is not an ELF object has no sites; a missing one is an error", "[patch]") {
  char path[] = "/tmp/repro-rdtsc-scan-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const char text[] = "#!/bin/sh\n\x0f\x31\n";
  REQUIRE(write(fd, text, sizeof text) == static_cast<ssize_t>(sizeof text));
  close(fd);
  auto scan = repro::patch::scan_for_rdtsc(path);
  unlink(path);
  REQUIRE(scan.is_ok());
  CHECK(scan->sites.empty());
  CHECK_FALSE(repro::patch::scan_for_rdtsc("/nonexistent/repro-file").is_ok());
}

TEST_CASE("a site's trap is ud2 padded with nops, and only rdtsc/rdtscp are sites", "[patch]") {
  CHECK(repro::patch::rdtsc_trap_bytes(2) == std::string("\x0f\x0b", 2));
  CHECK(repro::patch::rdtsc_trap_bytes(3) == std::string("\x0f\x0b\x90", 3));
  bool rdtscp = true;
  CHECK(repro::patch::is_rdtsc_instruction(std::string("\x0f\x31", 2), &rdtscp));
  CHECK_FALSE(rdtscp);
  CHECK(repro::patch::is_rdtsc_instruction(std::string("\x0f\x01\xf9", 3), &rdtscp));
  CHECK(rdtscp);
  CHECK_FALSE(repro::patch::is_rdtsc_instruction(std::string("\x0f\x0b", 2), &rdtscp));
  CHECK_FALSE(repro::patch::is_rdtsc_instruction(std::string("\x0f\x31\x90", 3), &rdtscp));
  CHECK_FALSE(repro::patch::is_rdtsc_instruction(std::string("\x0f", 1), &rdtscp));
}
