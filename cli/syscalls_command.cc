// `repro syscalls [NAME]`: prints the syscall table.

#include <fmt/core.h>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "core/syscalls/syscall_table.h"

namespace repro::cli {
namespace {

std::string describe_arg(const syscalls::ArgSpec& arg) {
  std::string text = syscalls::arg_kind_name(arg.kind);
  switch (arg.rule) {
    case syscalls::LengthRule::kNone: break;
    case syscalls::LengthRule::kArg:
    case syscalls::LengthRule::kSockLen:
    case syscalls::LengthRule::kIovec:
    case syscalls::LengthRule::kCString:
      text += fmt::format("[{}:arg{}]", syscalls::length_rule_name(arg.rule), arg.length_arg);
      break;
    case syscalls::LengthRule::kFixed:
    case syscalls::LengthRule::kResultTimesFixed:
      text += fmt::format("[{}:{}]", syscalls::length_rule_name(arg.rule), arg.fixed_bytes);
      break;
    case syscalls::LengthRule::kArgTimesFixed:
      text += fmt::format("[{}:arg{}*{}]", syscalls::length_rule_name(arg.rule), arg.length_arg,
                          arg.fixed_bytes);
      break;
    default:
      text += fmt::format("[{}]", syscalls::length_rule_name(arg.rule));
      break;
  }
  if (arg.structure != syscalls::StructKind::kNone) {
    text += fmt::format("={}", syscalls::struct_kind_name(arg.structure));
  }
  return text;
}

std::string describe_row(const syscalls::SyscallInfo& row) {
  std::string args;
  for (int i = 0; i < row.arg_count; ++i) {
    args += (i ? ", " : "") + describe_arg(row.args[i]);
  }
  std::string flags;
  if (row.flags & syscalls::kMayBlock) flags += " may-block";
  if (!(row.flags & syscalls::kEffectsKnown)) flags += " effects-unknown";
  if (row.flags & syscalls::kNoReturn) flags += " no-return";
  if (row.flags & syscalls::kUnsupported) flags += " unsupported";
  std::string aarch64 = row.aarch64 >= 0 ? fmt::format("{}", row.aarch64) : "-";
  return fmt::format("{:<24} {:>4} {:>4}  {:<8} ({}){}", row.name, row.x86_64, aarch64,
                     syscalls::replay_policy_name(row.policy), args, flags);
}

class SyscallsCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("name", name_, "print only this syscall (name or x86-64 number)");
  }

  int run() override {
    if (!name_.empty()) {
      const syscalls::SyscallInfo* row = syscalls::find_by_name(name_);
      if (row == nullptr && name_.find_first_not_of("0123456789") == std::string::npos) {
        row = syscalls::find_x86_64(std::stoi(name_));
      }
      if (row == nullptr) {
        return report_error(Status::error(StatusCode::kInvalidArgument,
                                          fmt::format("no syscall named '{}'", name_)));
      }
      fmt::print("{}\n", describe_row(*row));
      return kExitOk;
    }
    fmt::print("{:<24} {:>4} {:>4}  {:<8} {}\n", "# name", "x64", "a64", "policy",
               "(argument kinds) flags");
    for (const auto& row : syscalls::all_syscalls()) {
      fmt::print("{}\n", describe_row(row));
    }
    return kExitOk;
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<Command> make_syscalls_command() { return std::make_unique<SyscallsCommand>(); }

}  // namespace repro::cli
