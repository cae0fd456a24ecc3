#include "core/format/env_redaction.h"

#include <catch2/catch.hpp>

namespace repro::format {
namespace {

TEST_CASE("redacted variables keep their names and lose their values", "[format]") {
  const std::vector<std::string> env = {
      "HOME=/root",          "API_TOKEN=s3cr3t-value", "PATH=/usr/bin",  "no-equals-sign",
      "GITHUB_TOKEN=ghp_xy", "TOKEN_COUNT=",           "API_TOKEN=again"};
  std::vector<RedactedVariable> redacted;
  std::vector<std::string> stored =
      redact_environment(env, {std::regex("TOKEN"), std::regex("^HOME$")}, &redacted);
  CHECK(stored == std::vector<std::string>{"HOME=", "API_TOKEN=", "PATH=/usr/bin", "no-equals-sign",
                                           "GITHUB_TOKEN=", "TOKEN_COUNT=", "API_TOKEN="});
  CHECK(redacted == std::vector<RedactedVariable>{{"HOME", 5},
                                                  {"API_TOKEN", 12},
                                                  {"GITHUB_TOKEN", 6},
                                                  {"TOKEN_COUNT", 0},
                                                  {"API_TOKEN", 5}});

  // Replay: the same names, filler as long as each value was, so the
  // environment takes the same bytes on the stack as when recorded.
  std::vector<std::string> replayed = environment_for_replay(stored, redacted);
  CHECK(replayed == std::vector<std::string>{
                        "HOME=*****", "API_TOKEN=************", "PATH=/usr/bin", "no-equals-sign",
                        "GITHUB_TOKEN=******", "TOKEN_COUNT=", "API_TOKEN=*****"});
  REQUIRE(replayed.size() == env.size());
  for (size_t i = 0; i < env.size(); ++i) {
    CHECK(replayed[i].size() == env[i].size());
  }
}

TEST_CASE("no patterns, or none matching, leave the environment as it is", "[format]") {
  const std::vector<std::string> env = {"A=1", "B=2"};
  std::vector<RedactedVariable> redacted = {{"stale", 1}};
  CHECK(redact_environment(env, {}, &redacted) == env);
  CHECK(redacted.empty());
  CHECK(redact_environment(env, {std::regex("^C$")}, &redacted) == env);
  CHECK(redacted.empty());
  CHECK(environment_for_replay(env, {}) == env);
  // A redacted name that is not in the environment changes nothing.
  CHECK(environment_for_replay(env, {{"C", 3}}) == env);
}

}  // namespace
}  // namespace repro::format
