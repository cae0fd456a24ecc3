#include "hunter/trigger.h"

#include <catch2/catch.hpp>
#include <csignal>

using repro::hunter::fired;
using repro::hunter::parse_trigger;
using repro::hunter::RunResult;
using repro::hunter::Trigger;

namespace {

std::vector<Trigger> triggers(std::initializer_list<const char*> words) {
  std::vector<Trigger> parsed;
  for (const char* word : words) {
    auto trigger = parse_trigger(word);
    REQUIRE(trigger.is_ok());
    parsed.push_back(std::move(*trigger));
  }
  return parsed;
}

RunResult run(int status, std::string output = "", bool timed_out = false) {
  return RunResult{status, timed_out, std::move(output)};
}

}  // namespace

TEST_CASE("triggers parse, and bad ones say why", "[hunter]") {
  CHECK(parse_trigger("exit")->kind == Trigger::Kind::kExit);
  CHECK(parse_trigger("exit:3")->number == 3);
  CHECK(parse_trigger("signal")->number == 0);
  CHECK(parse_trigger("signal:SEGV")->number == SIGSEGV);
  CHECK(parse_trigger("signal:SIGABRT")->number == SIGABRT);
  CHECK(parse_trigger("signal:9")->number == 9);
  CHECK(parse_trigger("timeout:1.5")->seconds == 1.5);
  CHECK(parse_trigger("deadlock")->kind == Trigger::Kind::kDeadlock);
  for (const char* bad : {"", "exit:", "exit:256", "exit:x", "signal:NOPE", "output:", "output:(",
                          "timeout:0", "timeout:-1", "deadlocks", "deadlock:1", "crash"}) {
    INFO(bad);
    auto parsed = parse_trigger(bad);
    REQUIRE_FALSE(parsed.is_ok());
    CHECK(parsed.status().code() == repro::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("triggers fire on what a run did", "[hunter]") {
  auto exit_any = triggers({"exit"});
  CHECK(fired(exit_any, run(0)) == nullptr);
  CHECK(fired(exit_any, run(1)) != nullptr);
  CHECK(fired(exit_any, run(1, "", /*timed_out=*/true)) == nullptr);
  auto exit_3 = triggers({"exit:3"});
  CHECK(fired(exit_3, run(3)) != nullptr);
  CHECK(fired(exit_3, run(1)) == nullptr);
  auto segv = triggers({"signal:SEGV"});
  CHECK(fired(segv, run(128 + SIGSEGV)) != nullptr);
  CHECK(fired(segv, run(128 + SIGABRT)) == nullptr);
  CHECK(fired(triggers({"signal"}), run(128 + SIGABRT)) != nullptr);
  CHECK(fired(triggers({"signal"}), run(1)) == nullptr);
  auto output = triggers({"output:assert.*failed"});
  CHECK(fired(output, run(0, "x\nassertion failed\n")) != nullptr);
  CHECK(fired(output, run(1, "all good\n")) == nullptr);
  CHECK(fired(triggers({"timeout:5"}), run(130, "", true)) != nullptr);
  RunResult deadlocked = run(76);
  deadlocked.deadlocked = true;
  CHECK(fired(triggers({"deadlock"}), deadlocked) != nullptr);
  CHECK(fired(triggers({"deadlock"}), run(76)) == nullptr);  // a program's own status 76
  CHECK(fired(triggers({"deadlock"}), run(1)) == nullptr);
  // The first that fires is the one named.
  auto both = triggers({"exit:2", "output:boom"});
  CHECK(fired(both, run(2, "boom"))->text == "exit:2");
  CHECK(fired(both, run(0, "boom"))->text == "output:boom");
}
