#include "replayer/gdb_registers.h"

#include <errno.h>
#include <fmt/core.h>
#include <sys/ptrace.h>

#include <array>
#include <cstring>

namespace repro::replayer {

namespace {

// Register sizes in bytes, by regnum, as the target description declares
// them: rax..r15, rip (8); eflags, cs, ss, ds, es, fs, gs (4); st0..st7
// (10); fctrl, fstat, ftag, fiseg, fioff, foseg, fooff, fop (4); xmm0..15
// (16); mxcsr (4); orig_rax, fs_base, gs_base (8).
constexpr std::array<size_t, kGdbRegisterCount> kSizes = [] {
  std::array<size_t, kGdbRegisterCount> sizes{};
  int n = 0;
  for (int i = 0; i < 17; ++i) sizes[n++] = 8;
  for (int i = 0; i < 7; ++i) sizes[n++] = 4;
  for (int i = 0; i < 8; ++i) sizes[n++] = 10;
  for (int i = 0; i < 8; ++i) sizes[n++] = 4;
  for (int i = 0; i < 16; ++i) sizes[n++] = 16;
  sizes[n++] = 4;
  for (int i = 0; i < 3; ++i) sizes[n++] = 8;
  return sizes;
}();

constexpr size_t layout_bytes() {
  size_t total = 0;
  for (size_t size : kSizes) total += size;
  return total;
}

std::string build_description() {
  std::string xml =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n<target>\n"
      "<architecture>i386:x86-64</architecture>\n<osabi>GNU/Linux</osabi>\n"
      "<feature name=\"org.gnu.gdb.i386.core\">\n"
      "<flags id=\"i386_eflags\" size=\"4\">\n";
  const char* flags[][2] = {{"CF", "0"},  {"", "1"},   {"PF", "2"},   {"AF", "4"},  {"ZF", "6"},
                            {"SF", "7"},  {"TF", "8"}, {"IF", "9"},   {"DF", "10"}, {"OF", "11"},
                            {"NT", "14"}, {"RF", "16"}, {"VM", "17"}, {"AC", "18"}, {"VIF", "19"},
                            {"VIP", "20"}, {"ID", "21"}};
  for (auto& flag : flags) {
    xml += fmt::format("  <field name=\"{}\" start=\"{}\" end=\"{}\"/>\n", flag[0], flag[1], flag[1]);
  }
  xml += "</flags>\n";
  int regnum = 0;
  auto reg = [&](const std::string& name, int bits, const std::string& type,
                 const std::string& extra = "") {
    xml += fmt::format("<reg name=\"{}\" bitsize=\"{}\" type=\"{}\" regnum=\"{}\"{}/>\n", name,
                       bits, type, regnum++, extra);
  };
  for (const char* name : {"rax", "rbx", "rcx", "rdx", "rsi", "rdi"}) reg(name, 64, "int64");
  reg("rbp", 64, "data_ptr");
  reg("rsp", 64, "data_ptr");
  for (int i = 8; i < 16; ++i) reg(fmt::format("r{}", i), 64, "int64");
  reg("rip", 64, "code_ptr");
  reg("eflags", 32, "i386_eflags");
  for (const char* name : {"cs", "ss", "ds", "es", "fs", "gs"}) reg(name, 32, "int32");
  for (int i = 0; i < 8; ++i) reg(fmt::format("st{}", i), 80, "i387_ext");
  for (const char* name : {"fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop"}) {
    reg(name, 32, "int", " group=\"float\"");
  }
  xml +=
      "</feature>\n<feature name=\"org.gnu.gdb.i386.sse\">\n"
      "<vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>\n"
      "<vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>\n"
      "<vector id=\"v16i8\" type=\"int8\" count=\"16\"/>\n"
      "<vector id=\"v8i16\" type=\"int16\" count=\"8\"/>\n"
      "<vector id=\"v4i32\" type=\"int32\" count=\"4\"/>\n"
      "<vector id=\"v2i64\" type=\"int64\" count=\"2\"/>\n"
      "<union id=\"vec128\">\n"
      "  <field name=\"v4_float\" type=\"v4f\"/>\n  <field name=\"v2_double\" type=\"v2d\"/>\n"
      "  <field name=\"v16_int8\" type=\"v16i8\"/>\n  <field name=\"v8_int16\" type=\"v8i16\"/>\n"
      "  <field name=\"v4_int32\" type=\"v4i32\"/>\n  <field name=\"v2_int64\" type=\"v2i64\"/>\n"
      "  <field name=\"uint128\" type=\"uint128\"/>\n</union>\n";
  for (int i = 0; i < 16; ++i) reg(fmt::format("xmm{}", i), 128, "vec128");
  reg("mxcsr", 32, "int", " group=\"vector\"");
  xml += "</feature>\n<feature name=\"org.gnu.gdb.i386.linux\">\n";
  reg("orig_rax", 64, "int");
  xml += "</feature>\n<feature name=\"org.gnu.gdb.i386.segments\">\n";
  reg("fs_base", 64, "int");
  reg("gs_base", 64, "int");
  xml += "</feature>\n</target>\n";
  return xml;
}

// The 16-bit fxsave tag word keeps one bit per register (in use or not);
// gdb shows the full two-bit tags. An in-use register is called valid
// (00), an unused one empty (11).
uint32_t full_tag_word(uint16_t abridged) {
  uint32_t tags = 0;
  for (int i = 0; i < 8; ++i) {
    uint32_t tag = (abridged >> i) & 1 ? 0 : 3;
    tags |= tag << (2 * i);
  }
  return tags;
}

uint16_t abridged_tag_word(uint32_t full) {
  uint16_t abridged = 0;
  for (int i = 0; i < 8; ++i) {
    if (((full >> (2 * i)) & 3) != 3) {
      abridged = static_cast<uint16_t>(abridged | (1 << i));
    }
  }
  return abridged;
}

// One register's bytes in gdb's layout <-> its home in the structs: a
// `size`-byte little-endian field; wider gdb registers are zero-extended,
// narrower ones truncated (segment selectors, eflags).
struct Field {
  void* home;
  size_t home_bytes;
};

template <typename Visit>
void for_each_field(GdbRegisterState& s, Visit visit) {
  os::Registers& g = s.general;
  unsigned long long* general[] = {&g.rax, &g.rbx, &g.rcx, &g.rdx, &g.rsi, &g.rdi, &g.rbp, &g.rsp,
                         &g.r8,  &g.r9,  &g.r10, &g.r11, &g.r12, &g.r13, &g.r14, &g.r15,
                         &g.rip, &g.eflags, &g.cs, &g.ss, &g.ds, &g.es, &g.fs, &g.gs};
  int regnum = 0;
  for (unsigned long long* field : general) {
    visit(regnum++, Field{field, 8});
  }
  for (int i = 0; i < 8; ++i) {
    visit(regnum++, Field{&s.fpu.st_space[i * 4], 10});
  }
  visit(regnum++, Field{&s.fpu.cwd, 2});
  visit(regnum++, Field{&s.fpu.swd, 2});
  visit(regnum++, Field{nullptr, 0});  // ftag: converted by the caller
  visit(regnum++, Field{reinterpret_cast<char*>(&s.fpu.rip) + 4, 4});  // fiseg
  visit(regnum++, Field{&s.fpu.rip, 4});                               // fioff
  visit(regnum++, Field{reinterpret_cast<char*>(&s.fpu.rdp) + 4, 4});  // foseg
  visit(regnum++, Field{&s.fpu.rdp, 4});                               // fooff
  visit(regnum++, Field{&s.fpu.fop, 2});
  for (int i = 0; i < 16; ++i) {
    visit(regnum++, Field{&s.fpu.xmm_space[i * 4], 16});
  }
  visit(regnum++, Field{&s.fpu.mxcsr, 4});
  visit(regnum++, Field{&g.orig_rax, 8});
  visit(regnum++, Field{&g.fs_base, 8});
  visit(regnum++, Field{&g.gs_base, 8});
}

constexpr int kFtagRegnum = 34;

}  // namespace

const std::string& gdb_target_description() {
  static const std::string xml = build_description();
  return xml;
}

std::optional<std::pair<size_t, size_t>> gdb_register_slot(int regnum) {
  if (regnum < 0 || regnum >= kGdbRegisterCount) {
    return std::nullopt;
  }
  size_t offset = 0;
  for (int i = 0; i < regnum; ++i) {
    offset += kSizes[i];
  }
  return std::make_pair(offset, kSizes[regnum]);
}

std::string to_gdb_layout(const GdbRegisterState& state) {
  GdbRegisterState copy = state;
  std::string layout(layout_bytes(), '\0');
  size_t offset = 0;
  for_each_field(copy, [&](int regnum, Field field) {
    size_t size = kSizes[regnum];
    if (regnum == kFtagRegnum) {
      uint32_t tags = full_tag_word(copy.fpu.ftw);
      std::memcpy(&layout[offset], &tags, sizeof tags);
    } else {
      std::memcpy(&layout[offset], field.home, std::min(size, field.home_bytes));
    }
    offset += size;
  });
  return layout;
}

bool from_gdb_layout(std::string_view layout, GdbRegisterState* state) {
  if (layout.size() != layout_bytes()) {
    return false;
  }
  size_t offset = 0;
  for_each_field(*state, [&](int regnum, Field field) {
    size_t size = kSizes[regnum];
    if (regnum == kFtagRegnum) {
      uint32_t tags = 0;
      std::memcpy(&tags, &layout[offset], sizeof tags);
      state->fpu.ftw = abridged_tag_word(tags);
    } else {
      // A narrower gdb register (eflags, a selector) keeps the field's
      // upper bytes zero, as the kernel has them.
      if (size < field.home_bytes) {
        std::memset(field.home, 0, field.home_bytes);
      }
      std::memcpy(field.home, &layout[offset], std::min(size, field.home_bytes));
    }
    offset += size;
  });
  return true;
}

Result<GdbRegisterState> read_gdb_registers(pid_t tid) {
  GdbRegisterState state;
  REPRO_ASSIGN_OR_RETURN(state.general, os::get_registers(tid));
  if (ptrace(PTRACE_GETFPREGS, tid, nullptr, &state.fpu) != 0) {
    return os::ptrace_error(errno, "reading the FPU registers", tid);
  }
  return state;
}

Status write_gdb_registers(pid_t tid, const GdbRegisterState& state) {
  REPRO_RETURN_IF_ERROR(os::set_registers(tid, state.general));
  if (ptrace(PTRACE_SETFPREGS, tid, nullptr, &state.fpu) != 0) {
    return os::ptrace_error(errno, "writing the FPU registers", tid);
  }
  return Status::ok();
}

}  // namespace repro::replayer
