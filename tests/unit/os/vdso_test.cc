#include "core/os/vdso.h"

#include <catch2/catch.hpp>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/os/proc_maps.h"

using repro::os::plan_vdso_patches;
using repro::os::VdsoPatch;
using repro::os::vdso_stub;

TEST_CASE("vDSO stubs make the syscall, or return -ENOSYS", "[os][vdso]") {
  CHECK(vdso_stub(SYS_clock_gettime) == std::string("\xb8\xe4\x00\x00\x00\x0f\x05\xc3", 8));
  CHECK(vdso_stub(-1) == std::string("\x48\xc7\xc0\xda\xff\xff\xff\xc3", 8));
}

TEST_CASE("this process's vDSO: every exported function gets a stub", "[os][vdso]") {
  uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) {
    WARN("no vDSO in this process (hidden by a tracer?)");
    return;
  }
  auto mappings = repro::os::read_mappings(getpid());
  REQUIRE(mappings.is_ok());
  auto vdso = std::find_if(mappings->begin(), mappings->end(),
                           [&](const repro::os::Mapping& m) { return m.start == base; });
  REQUIRE(vdso != mappings->end());
  std::string image(reinterpret_cast<const char*>(base), vdso->end - vdso->start);
  auto patches = plan_vdso_patches(image, base);
  REQUIRE(patches.is_ok());
  auto find = [&](const std::string& name) {
    return std::find_if(patches->begin(), patches->end(),
                        [&](const VdsoPatch& p) { return p.symbol == name; });
  };
  for (auto [name, number] : {std::pair{"__vdso_clock_gettime", SYS_clock_gettime},
                              std::pair{"__vdso_gettimeofday", SYS_gettimeofday},
                              std::pair{"__vdso_time", SYS_time},
                              std::pair{"__vdso_getcpu", SYS_getcpu}}) {
    INFO(name);
    auto patch = find(name);
    REQUIRE(patch != patches->end());
    CHECK(patch->syscall_number == number);
    CHECK(patch->address >= vdso->start);
    CHECK(patch->address < vdso->end);
  }
  // Aliases ("clock_gettime" beside "__vdso_clock_gettime") share one patch.
  CHECK(find("clock_gettime") == patches->end());
  for (size_t i = 1; i < patches->size(); ++i) {
    CHECK((*patches)[i - 1].address < (*patches)[i].address);
  }
}

TEST_CASE("a vDSO image that is not ELF is refused", "[os][vdso]") {
  auto patches = plan_vdso_patches(std::string(4096, '\0'), 0x7000);
  REQUIRE(!patches.is_ok());
  CHECK(patches.status().code() == repro::StatusCode::kCorruption);
}
