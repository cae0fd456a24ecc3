// `repro doctor [--json]`: what this host allows and what repro does about
// it. The probes and their assessment live in core/os/host_report.h; this
// file only prints them.

#include <fmt/core.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "core/os/host_report.h"

namespace repro::cli {
namespace {

std::string yes_no(bool value) { return value ? "yes" : "no"; }

void print_text(const os::HostFacts& facts, const std::vector<os::HostCheck>& checks) {
  for (const os::HostCheck& check : checks) {
    fmt::print("{:<10}{:<20}{}; {}\n", os::check_status_name(check.status), check.name, check.found,
               check.consequence);
  }
  const os::CpuInfo& cpu = facts.cpu;
  fmt::print("{:<10}{} family {} model {} stepping {}{}\n", "cpu", cpu.vendor, cpu.family,
             cpu.model, cpu.stepping, cpu.brand.empty() ? "" : fmt::format(" ({})", cpu.brand));
  fmt::print(
      "{:<10}hypervisor: {}; rdtscp: {}; rdrand: {}, rdseed: {} (their results are not "
      "recorded)\n",
      "", cpu.hypervisor ? cpu.hypervisor_vendor : "none", yes_no(cpu.rdtscp), yes_no(cpu.rdrand),
      yes_no(cpu.rdseed));
  if (cpu.xsave) {
    fmt::print(
        "{:<10}xsave: XCR0 {:#x} (supported {:#x}), area {} bytes ({} with every "
        "supported feature)\n",
        "", cpu.xcr0, cpu.xcr0_supported, cpu.xsave_enabled_bytes, cpu.xsave_max_bytes);
  } else {
    fmt::print("{:<10}xsave: no\n", "");
  }
  if (facts.kernel.is_ok()) {
    fmt::print("{:<10}{} {}, {}\n", "kernel", facts.kernel->release, facts.kernel->machine,
               facts.kernel->version);
  } else {
    fmt::print("{:<10}unknown: {}\n", "kernel", facts.kernel.status().message());
  }
}

nlohmann::ordered_json to_json(const os::HostFacts& facts, const std::vector<os::HostCheck>& checks,
                               os::TscMode tsc_mode) {
  nlohmann::ordered_json json;
  json["checks"] = nlohmann::ordered_json::array();
  for (const os::HostCheck& check : checks) {
    json["checks"].push_back({{"name", check.name},
                              {"status", os::check_status_name(check.status)},
                              {"needed", check.needed},
                              {"found", check.found},
                              {"consequence", check.consequence}});
  }
  const os::CpuInfo& cpu = facts.cpu;
  json["cpu"] = {{"vendor", cpu.vendor},
                 {"brand", cpu.brand},
                 {"family", cpu.family},
                 {"model", cpu.model},
                 {"stepping", cpu.stepping},
                 {"hypervisor", cpu.hypervisor},
                 {"hypervisor_vendor", cpu.hypervisor_vendor},
                 {"rdtscp", cpu.rdtscp},
                 {"rdrand", cpu.rdrand},
                 {"rdseed", cpu.rdseed},
                 {"xsave", cpu.xsave},
                 {"osxsave", cpu.osxsave},
                 {"xcr0", fmt::format("{:#x}", cpu.xcr0)},
                 {"xcr0_supported", fmt::format("{:#x}", cpu.xcr0_supported)},
                 {"xsave_enabled_bytes", cpu.xsave_enabled_bytes},
                 {"xsave_max_bytes", cpu.xsave_max_bytes}};
  if (facts.kernel.is_ok()) {
    json["kernel"] = {{"release", facts.kernel->release},
                      {"version", facts.kernel->version},
                      {"machine", facts.kernel->machine}};
  } else {
    json["kernel"] = {{"error", facts.kernel.status().message()}};
  }
  json["tsc_mode"] = os::tsc_mode_name(tsc_mode);
  json["can_record"] = os::can_record(checks);
  json["verdict"] = os::verdict(checks);
  return json;
}

class DoctorCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_flag("--json", json_, "print one JSON object instead of text");
    sub->footer(
        "Tries, in short-lived child processes, each host capability repro relies on or could\n"
        "use, and prints one line per check: status, name, what was found; what that means.\n"
        "  OK        works here\n"
        "  DEGRADED  does not fully work; repro falls back to something slower or narrower\n"
        "  MISSING   does not work; if repro needs it, repro cannot record here\n"
        "Only the checks repro needs (ptrace, seccomp-trace, disable-aslr, rdtsc-trap,\n"
        "cpu-pinning) decide the verdict; the others are for information.\n"
        "The rdtsc-trap line tells the rdtsc mode: trapped and emulated, or patching mode\n"
        "(REPRO_TSC=patch in the environment forces patching mode).\n"
        "Exit status: 0 if repro can record here, 1 if a needed check is MISSING.");
  }

  int run() override {
    auto request = os::tsc_request_from_env();
    if (!request.is_ok()) {
      return report_error(request.status());
    }
    os::HostFacts facts = os::probe_host();
    os::TscMode tsc_mode = os::choose_tsc_mode(facts.tsc, *request);
    std::vector<os::HostCheck> checks = os::assess_host(facts, tsc_mode);
    if (json_) {
      fmt::print("{}\n", to_json(facts, checks, tsc_mode).dump(2));
    } else {
      print_text(facts, checks);
      fmt::print("{}\n", os::verdict(checks));
    }
    return os::can_record(checks) ? kExitOk : kExitFailure;
  }

 private:
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_doctor_command() { return std::make_unique<DoctorCommand>(); }

}  // namespace repro::cli
