#include "core/patch/syscall_sites.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/patch/capstone_handle.h"
#include "core/patch/elf_code.h"

namespace repro::patch {
namespace {

constexpr uint8_t kSyscall[2] = {0x0f, 0x05};

// Byte offsets of `syscall` (0f 05) in `bytes`: places to look, not sites.
bool holds_syscall_bytes(const uint8_t* bytes, size_t size) {
  for (size_t i = 0; i + 1 < size; ++i) {
    if (bytes[i] == kSyscall[0] && bytes[i + 1] == kSyscall[1]) {
      return true;
    }
  }
  return false;
}

// The constant `insn` loads into eax (mov $N,%eax; xor %eax,%eax), or -1.
int eax_constant(const cs_insn& insn) {
  const cs_x86& x86 = insn.detail->x86;
  if (insn.id == X86_INS_MOV && x86.op_count == 2 && x86.operands[0].type == X86_OP_REG &&
      x86.operands[0].reg == X86_REG_EAX && x86.operands[1].type == X86_OP_IMM &&
      x86.operands[1].imm >= 0 && x86.operands[1].imm < 4096) {
    return static_cast<int>(x86.operands[1].imm);
  }
  if (insn.id == X86_INS_XOR && x86.op_count == 2 && x86.operands[0].type == X86_OP_REG &&
      x86.operands[1].type == X86_OP_REG && x86.operands[0].reg == X86_REG_EAX &&
      x86.operands[1].reg == X86_REG_EAX) {
    return 0;
  }
  return -1;
}


}  // namespace

std::optional<std::pair<repro_site_compare, uint8_t>> site_compare_at(const uint8_t* bytes,
                                                                      size_t size) {
  static constexpr uint8_t kRax4096[] = {0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff};
  static constexpr uint8_t kRax4095[] = {0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff};
  static constexpr uint8_t kEax4096[] = {0x3d, 0x00, 0xf0, 0xff, 0xff};
  static constexpr uint8_t kEax4095[] = {0x3d, 0x01, 0xf0, 0xff, 0xff};
  auto is = [&](const uint8_t* pattern, size_t length) {
    return size >= length && std::memcmp(bytes, pattern, length) == 0;
  };
  if (is(kRax4096, sizeof kRax4096)) {
    return std::pair{REPRO_SITE_CMP_RAX_4096, uint8_t{6}};
  }
  if (is(kRax4095, sizeof kRax4095)) {
    return std::pair{REPRO_SITE_CMP_RAX_4095, uint8_t{6}};
  }
  if (is(kEax4096, sizeof kEax4096)) {
    return std::pair{REPRO_SITE_CMP_EAX_4096, uint8_t{5}};
  }
  if (is(kEax4095, sizeof kEax4095)) {
    return std::pair{REPRO_SITE_CMP_EAX_4095, uint8_t{5}};
  }
  return std::nullopt;
}

std::vector<SyscallSite> syscall_sites_in_function(const uint8_t* code, size_t size,
                                                   uint64_t address) {
  thread_local const Capstone decoder(/*skip_data=*/false);
  if (!decoder.ok()) {
    return {};
  }
  const csh handle = decoder.handle();
  const uint8_t* const start = code;
  const uint64_t start_address = address;
  const size_t total = size;
  // One pass to decode and collect the direct branches' targets, one to
  // follow the constant in eax through straight-line code.
  struct Decoded {
    uint64_t address = 0;
    uint8_t size = 0;
    bool is_syscall = false;
    int sets_constant = -1;   // the constant it loads into eax, if it does
    bool writes_eax = false;  // any other write to rax, eax, ax, al or ah
    bool leaves = false;      // an unconditional jump, call or return
  };
  std::vector<Decoded> decoded;
  std::set<uint64_t> targets;
  bool indirect_jump = false;
  cs_insn* insn = cs_malloc(handle);
  while (cs_disasm_iter(handle, &code, &size, &address, insn)) {
    Decoded d;
    d.address = insn->address;
    d.size = static_cast<uint8_t>(insn->size);
    d.is_syscall = insn->id == X86_INS_SYSCALL;
    d.sets_constant = eax_constant(*insn);
    bool jump = cs_insn_group(handle, insn, CS_GRP_JUMP);
    bool call = cs_insn_group(handle, insn, CS_GRP_CALL);
    d.leaves = call || insn->id == X86_INS_JMP || cs_insn_group(handle, insn, CS_GRP_RET);
    if (jump || call) {
      const cs_x86& x86 = insn->detail->x86;
      for (uint8_t i = 0; i < x86.op_count; ++i) {
        if (x86.operands[i].type == X86_OP_IMM) {
          targets.insert(static_cast<uint64_t>(x86.operands[i].imm));
        } else if (insn->id == X86_INS_JMP) {
          indirect_jump = true;
        }
      }
    }
    cs_regs read_regs, written_regs;
    uint8_t read_count = 0, written_count = 0;
    if (cs_regs_access(handle, insn, read_regs, &read_count, written_regs, &written_count) ==
        CS_ERR_OK) {
      for (uint8_t i = 0; i < written_count; ++i) {
        uint16_t reg = written_regs[i];
        d.writes_eax |= reg == X86_REG_RAX || reg == X86_REG_EAX || reg == X86_REG_AX ||
                        reg == X86_REG_AL || reg == X86_REG_AH;
      }
    } else {
      d.writes_eax = true;
    }
    decoded.push_back(d);
  }
  cs_free(insn, 1);
  if (indirect_jump) {
    return {};
  }
  std::vector<SyscallSite> sites;
  int constant = -1;
  for (const Decoded& d : decoded) {
    if (targets.count(d.address) != 0) {
      constant = -1;  // reached from elsewhere too, maybe with another eax
    }
    if (d.is_syscall && constant >= 0) {
      size_t offset = d.address - start_address + d.size;
      if (auto compare = site_compare_at(start + offset, offset <= total ? total - offset : 0)) {
        sites.push_back({0, d.address, constant, compare->first,
                         static_cast<uint8_t>(d.size + compare->second)});
      }
    }
    if (d.sets_constant >= 0) {
      constant = d.sets_constant;
    } else if (d.writes_eax || d.leaves) {
      constant = -1;
    }
  }
  std::erase_if(sites, [&](const SyscallSite& site) {
    auto target = targets.lower_bound(site.vaddr);
    return target != targets.end() && *target < site.vaddr + site.length;
  });
  return sites;
}

Result<std::vector<SyscallSite>> scan_for_syscall_sites(const std::string& path) {
  std::vector<SyscallSite> sites;
  REPRO_ASSIGN_OR_RETURN(std::optional<ElfCode> elf, ElfCode::open(path));
  if (!elf) {
    return sites;
  }
  REPRO_ASSIGN_OR_RETURN(std::vector<FunctionRange> ranges, elf->function_ranges());
  std::set<uint64_t> seen;
  for (const FunctionRange& range : ranges) {
    size_t size = 0;
    const uint8_t* code = elf->code_at(range.start, range.end, &size);
    if (code == nullptr || !holds_syscall_bytes(code, size)) {
      continue;
    }
    for (SyscallSite& site : syscall_sites_in_function(code, size, range.start)) {
      if (seen.insert(site.vaddr).second) {
        site.file_offset = static_cast<uint64_t>(code - elf->file()) + (site.vaddr - range.start);
        sites.push_back(site);
      }
    }
  }
  std::sort(sites.begin(), sites.end(),
            [](const SyscallSite& a, const SyscallSite& b) { return a.vaddr < b.vaddr; });
  return sites;
}

bool within_jump_reach(uint64_t from, uint64_t to) {
  int64_t distance = static_cast<int64_t>(to - (from + 5));
  return distance >= INT32_MIN && distance <= INT32_MAX;
}

namespace {

void put_rel32(std::string& out, uint64_t end_of_instruction, uint64_t target) {
  auto rel = static_cast<int32_t>(static_cast<int64_t>(target - end_of_instruction));
  out.append(reinterpret_cast<const char*>(&rel), sizeof rel);
}

}  // namespace

std::string syscall_stub_bytes(uint64_t stub_address, uint64_t return_address,
                               uint64_t entry_address) {
  // lea -(128+8)(%rsp),%rsp: below the red zone, room for a return address.
  std::string stub = "\x48\x8d\xa4\x24";
  int32_t down = -static_cast<int32_t>(REPRO_FASTPATH_SITE_RED_ZONE_BYTES + 8);
  stub.append(reinterpret_cast<const char*>(&down), sizeof down);
  // movabs $return_address,%r11 (r11, like rcx, is what a syscall clobbers)
  stub += "\x49\xbb";
  stub.append(reinterpret_cast<const char*>(&return_address), sizeof return_address);
  stub += std::string("\x4c\x89\x1c\x24", 4);  // mov %r11,(%rsp)
  stub += '\xe9';                               // jmp entry
  put_rel32(stub, stub_address + stub.size() + 4, entry_address);
  stub.resize(kSyscallStubBytes, '\xcc');
  return stub;
}

std::string site_jump_bytes(uint64_t site_address, uint64_t stub_address, uint8_t length) {
  std::string jump = "\xe9";
  put_rel32(jump, site_address + 5, stub_address);
  jump.resize(length, '\xcc');
  return jump;
}

void finish_site_compare(os::Registers& regs, repro_site_compare compare, uint8_t length) {
  // cmp sets CF, PF, AF, ZF, SF and OF from left - right.
  bool wide = compare == REPRO_SITE_CMP_RAX_4096 || compare == REPRO_SITE_CMP_RAX_4095;
  uint64_t right = compare == REPRO_SITE_CMP_RAX_4096 || compare == REPRO_SITE_CMP_EAX_4096
                       ? static_cast<uint64_t>(-4096)
                       : static_cast<uint64_t>(-4095);
  uint64_t left = regs.rax;
  uint64_t mask = wide ? ~uint64_t{0} : uint64_t{0xffffffff};
  int sign_bit = wide ? 63 : 31;
  left &= mask;
  right &= mask;
  uint64_t difference = (left - right) & mask;
  auto bit = [](uint64_t value, int n) { return (value >> n) & 1; };
  constexpr uint64_t kCF = 1 << 0, kPF = 1 << 2, kAF = 1 << 4, kZF = 1 << 6, kSF = 1 << 7,
                     kOF = 1 << 11;
  uint64_t flags = regs.eflags & ~(kCF | kPF | kAF | kZF | kSF | kOF);
  flags |= left < right ? kCF : 0;
  flags |= __builtin_popcount(static_cast<unsigned>(difference & 0xff)) % 2 == 0 ? kPF : 0;
  flags |= bit(left ^ right ^ difference, 4) ? kAF : 0;
  flags |= difference == 0 ? kZF : 0;
  flags |= bit(difference, sign_bit) ? kSF : 0;
  flags |= bit(left ^ right, sign_bit) && bit(left ^ difference, sign_bit) ? kOF : 0;
  regs.eflags = flags;
  regs.rip += length - 2;  // rip stood past the syscall, 2 bytes into the site
}

}  // namespace repro::patch
