#include "hunter/escalate.h"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <csignal>

#include "hunter/trigger.h"

using repro::hunter::CaughtFailure;
using repro::hunter::command_line;
using repro::hunter::describe;
using repro::hunter::Escalation;
using repro::hunter::EscalationReport;
using repro::hunter::failure_trigger;
using repro::hunter::fired;
using repro::hunter::HuntOutcome;
using repro::hunter::parse_trigger;
using repro::hunter::ProcessEnd;
using repro::hunter::RunResult;

namespace {

// Whether the trigger chosen for `end` fires on a run that ended with
// shell-style `status`.
bool trigger_fires(const ProcessEnd& end, int status) {
  auto trigger = parse_trigger(failure_trigger(end));
  REQUIRE(trigger.is_ok());
  return fired({*trigger}, RunResult{status, false, ""}) != nullptr;
}

Escalation failed_with_exit_3() {
  Escalation escalation;
  escalation.command = "./flaky --fast";
  escalation.native = ProcessEnd::from_wait_status(W_EXITCODE(3, 0));
  escalation.triggers = {"exit:3"};
  escalation.runs_allowed = 100;
  return escalation;
}

}  // namespace

TEST_CASE("a process's end reads from its wait status", "[hunter][ci]") {
  ProcessEnd exited = ProcessEnd::from_wait_status(W_EXITCODE(3, 0));
  CHECK(exited.exit_code == 3);
  CHECK(exited.signal == 0);
  CHECK(exited.shell_status() == 3);
  CHECK(exited.failed());
  CHECK(exited.text() == "exit status 3");

  ProcessEnd aborted = ProcessEnd::from_wait_status(W_EXITCODE(0, SIGABRT));
  CHECK(aborted.signal == SIGABRT);
  CHECK(aborted.shell_status() == 134);
  CHECK(aborted.failed());
  CHECK(aborted.text() == "killed by SIGABRT");

  CHECK_FALSE(ProcessEnd::from_wait_status(W_EXITCODE(0, 0)).failed());
}

TEST_CASE("the trigger for a failure is its exit status or its signal", "[hunter][ci]") {
  ProcessEnd exit3{3, 0};
  CHECK(failure_trigger(exit3) == "exit:3");
  CHECK(trigger_fires(exit3, 3));
  CHECK_FALSE(trigger_fires(exit3, 1));
  CHECK_FALSE(trigger_fires(exit3, 0));

  ProcessEnd abort{0, SIGABRT};
  CHECK(failure_trigger(abort) == "signal:6");
  CHECK(trigger_fires(abort, 128 + SIGABRT));
  CHECK_FALSE(trigger_fires(abort, 128 + SIGSEGV));
  CHECK_FALSE(trigger_fires(abort, 1));

  // An exit status above 128 is an exit status, not a signal.
  ProcessEnd exit200{200, 0};
  CHECK(failure_trigger(exit200) == "exit:200");
  CHECK(trigger_fires(exit200, 200));
}

TEST_CASE("a command line quotes what a shell would split", "[hunter][ci]") {
  CHECK(command_line({"make", "-C", "build/x", "test"}) == "make -C build/x test");
  CHECK(command_line({"sh", "-c", "exit 3"}) == "sh -c 'exit 3'");
  CHECK(command_line({"echo", "it's", ""}) == "echo 'it'\\''s' ''");
}

TEST_CASE("a caught failure is told with its trace, a notice and a summary line", "[hunter][ci]") {
  Escalation escalation = failed_with_exit_3();
  HuntOutcome outcome;
  outcome.runs = 4;
  CaughtFailure caught;
  caught.seed = 17;
  caught.trace = "out/seed-17";
  caught.trigger = "exit:3";
  caught.status = 3;
  caught.reproduced = true;
  caught.replay_summary = "the replay fails the same way (status 3)";
  outcome.catches.push_back(caught);
  escalation.outcome = outcome;

  EscalationReport report = describe(escalation);
  CHECK(report.captured);
  REQUIRE(report.lines.size() == 3);
  CHECK(report.lines[0] ==
        "`./flaky --fast` failed (exit status 3); caught `exit:3` after 4 recordings (seed 17): "
        "trace out/seed-17");
  CHECK(report.lines[1] == "the replay fails the same way (status 3)");
  CHECK(report.lines[2] == "replay it with: repro replay out/seed-17");
  CHECK(report.workflow_command.starts_with("::notice title=repro::`./flaky --fast` failed"));
  CHECK(report.workflow_command.ends_with("replay it with: repro replay out/seed-17"));
  CHECK(report.summary_line.starts_with("- repro ci: `./flaky --fast` failed (exit status 3)"));
  CHECK(report.summary_line.ends_with("replay it with `repro replay out/seed-17`"));
}

TEST_CASE("a failure not caught, or a hunt that failed, is a warning", "[hunter][ci]") {
  Escalation escalation = failed_with_exit_3();
  escalation.outcome = HuntOutcome{};
  escalation.outcome->runs = 100;
  EscalationReport missed = describe(escalation);
  CHECK_FALSE(missed.captured);
  REQUIRE(missed.lines.size() == 1);
  CHECK(missed.lines[0] ==
        "`./flaky --fast` failed (exit status 3); `exit:3` did not show in 100 recordings under "
        "chaos scheduling, nothing kept");
  CHECK(missed.workflow_command == "::warning title=repro::" + missed.lines[0]);

  escalation.outcome.reset();
  escalation.hunt_error = "recording the program: 100% broken\nsecond line";
  EscalationReport broken = describe(escalation);
  CHECK_FALSE(broken.captured);
  // A workflow command is one line; % starts an escape.
  CHECK(broken.workflow_command.ends_with("100%25 broken%0Asecond line"));
}
