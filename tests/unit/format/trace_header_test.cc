#include "core/format/trace_header.h"

#include <catch2/catch.hpp>

#include "core/format/trace_format.h"
#include "core/format/trace_trailer.h"
#include "format_test_util.h"

namespace repro::format {
namespace {

using testing::make_header;
using testing::Rng;

TEST_CASE("a header with every field populated round-trips through JSON", "[format][roundtrip]") {
  TraceHeader header = make_header();
  header.format_version = kTraceFormatVersion;
  header.cpu = {"GenuineIntel", 6, 85, 7, "fffa3203:178bfbff:d19f4fbb:0040069c:bc000400"};
  header.argv = {"prog", "", "with \"quotes\" and \\ and \n newline", "caf\xc3\xa9",
                 std::string("nul\0inside", 10)};
  header.env = {"A=1", std::string(100000, 'e')};
  header.seed = UINT64_MAX;
  header.scheduler = {"chaos", 3, 2000, 50};
  header.start_time_ns = UINT64_MAX - 1;
  header.pinned_cpu = 3;
  header.tsc_mode = TscMode::kPatch;
  header.redacted_env = {{"API_TOKEN", 40}, {"caf\xc3\xa9", 0}};
  Result<TraceHeader> parsed = header_from_json(header_to_json(header));
  REQUIRE(parsed.is_ok());
  CHECK(parsed.value() == header);
  Result<uint32_t> version = header_format_version(header_to_json(header));
  REQUIRE(version.is_ok());
  CHECK(version.value() == kTraceFormatVersion);
}

TEST_CASE("a header without scheduler settings reads as round robin", "[format]") {
  TraceHeader header = make_header();
  header.format_version = kTraceFormatVersion;
  std::string json = header_to_json(header);
  size_t at = json.find("\"scheduler\"");
  REQUIRE(at != std::string::npos);
  size_t end = json.find('}', at);
  json.erase(at, end + 2 - at);  // the object and the comma after it
  Result<TraceHeader> parsed = header_from_json(json);
  REQUIRE(parsed.is_ok());
  CHECK(parsed->scheduler.policy == "round-robin");
}

TEST_CASE("a header names its tsc mode and refuses an unknown one", "[format]") {
  TraceHeader header = make_header();
  header.format_version = kTraceFormatVersion;
  for (TscMode mode : {TscMode::kTrap, TscMode::kPatch}) {
    header.tsc_mode = mode;
    std::string json = header_to_json(header);
    CHECK(json.find(std::string("\"tsc_mode\": \"") + tsc_mode_name(mode) + "\"") !=
          std::string::npos);
    Result<TraceHeader> parsed = header_from_json(json);
    REQUIRE(parsed.is_ok());
    CHECK(parsed->tsc_mode == mode);
  }
  std::string bad = header_to_json(header);
  bad.replace(bad.find("\"patch\""), 7, "\"wait\"");
  Result<TraceHeader> refused = header_from_json(bad);
  REQUIRE(!refused.is_ok());
  CHECK(refused.status().message().find("tsc_mode") != std::string::npos);
}

TEST_CASE("a header without pinned_cpu (an unpinned recording) reads as -1", "[format]") {
  TraceHeader header = make_header();
  header.format_version = kTraceFormatVersion;
  header.pinned_cpu = -1;
  std::string json = header_to_json(header);
  size_t at = json.find("\"pinned_cpu\"");
  REQUIRE(at != std::string::npos);
  size_t line_end = json.find('\n', at);
  json.erase(at, line_end - at + 1);
  REQUIRE(json.find("pinned_cpu") == std::string::npos);
  Result<TraceHeader> parsed = header_from_json(json);
  REQUIRE(parsed.is_ok());
  CHECK(parsed->pinned_cpu == -1);
  std::string bad = header_to_json(header);
  bad.replace(bad.find("-1", bad.find("pinned_cpu")), 2, "\"x\"");
  CHECK_FALSE(header_from_json(bad).is_ok());
}

TEST_CASE("a header without redacted_env has no redacted variables", "[format]") {
  TraceHeader header = make_header();
  header.format_version = kTraceFormatVersion;
  std::string json = header_to_json(header);
  CHECK(json.find("redacted_env") == std::string::npos);  // written only when there are some
  Result<TraceHeader> parsed = header_from_json(json);
  REQUIRE(parsed.is_ok());
  CHECK(parsed.value().redacted_env.empty());
}

TEST_CASE("a bad redacted_env is corruption", "[format][corruption]") {
  TraceHeader header = make_header();
  header.format_version = kTraceFormatVersion;
  header.redacted_env = {{"SECRET", 12}};
  const std::string good = header_to_json(header);
  const std::string field = "\"value_bytes\": 12";
  REQUIRE(good.find(field) != std::string::npos);
  for (const std::string& replacement :
       {std::string("\"value_bytes\": -1"), std::string("\"value_bytes\": 1000000000000"),
        std::string("\"value_bytes\": \"12\""), std::string("\"bytes\": 12")}) {
    std::string text = good;
    text.replace(text.find(field), field.size(), replacement);
    INFO(replacement);
    Result<TraceHeader> parsed = header_from_json(text);
    REQUIRE_FALSE(parsed.is_ok());
    CHECK(parsed.status().code() == StatusCode::kCorruption);
  }
}

TEST_CASE("byte strings that are not UTF-8 round-trip through JSON", "[format][roundtrip]") {
  TraceHeader header = make_header();
  header.argv = {"\xff\xfe", "ok", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf"};
  header.env = {"LATIN1=caf\xe9"};
  header.cwd = "/tmp/\x80";
  header.exe_path = std::string("\x00\x01", 2);
  header.cpu.vendor = "\x01\x02\xff";
  std::string json = header_to_json(header);
  CHECK_THAT(json, Catch::Contains("\"hex\": \"fffe\""));
  Result<TraceHeader> parsed = header_from_json(json);
  REQUIRE(parsed.is_ok());
  CHECK(parsed.value() == header);
}

TEST_CASE("malformed header JSON is corruption, never an exception", "[format][corruption]") {
  std::string good = header_to_json(make_header());
  std::vector<std::string> bad = {
      "",
      "{",
      "[]",
      "null",
      "{\"magic\": \"something-else\", \"format_version\": 1}",
      "{\"format_version\": 1}",
      "{\"magic\": \"repro-trace\"}",
      "{\"magic\": \"repro-trace\", \"format_version\": -1}",
      "{\"magic\": \"repro-trace\", \"format_version\": 4294967296}",
      "{\"magic\": \"repro-trace\", \"format_version\": \"1\"}",
      "{\"magic\": \"repro-trace\", \"format_version\": 1}",
      good.substr(0, good.size() / 2),
      std::string(10000, '[') + std::string(10000, ']'),
      "\xff\xfe\xfd",
  };
  for (const char* field : {"seed", "argv", "cpu", "arch"}) {
    std::string text = good;
    size_t at = text.find(std::string("\"") + field + "\"");
    REQUIRE(at != std::string::npos);
    text[at + 1] = 'X';  // rename the field: now it is missing
    bad.push_back(text);
  }
  std::string hex_bad = good;
  size_t cwd = hex_bad.find("\"/work\"");
  REQUIRE(cwd != std::string::npos);
  hex_bad.replace(cwd, 7, "{\"hex\": \"zz\"}");
  bad.push_back(hex_bad);
  for (const std::string& text : bad) {
    INFO(text.substr(0, 200));
    Result<TraceHeader> parsed = header_from_json(text);
    REQUIRE_FALSE(parsed.is_ok());
    CHECK(parsed.status().code() == StatusCode::kCorruption);
  }
}

TEST_CASE("random byte flips in header JSON give corruption or a header", "[format][corruption]") {
  Rng rng(99);
  const std::string good = header_to_json(make_header());
  int parsed_count = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string text = good;
    int flips = 1 + static_cast<int>(rng.below(3));
    for (int i = 0; i < flips; ++i) {
      text[rng.below(text.size())] = static_cast<char>(rng.next());
    }
    Result<TraceHeader> parsed = header_from_json(text);
    if (parsed.is_ok()) {
      ++parsed_count;
    } else {
      CHECK(parsed.status().code() == StatusCode::kCorruption);
    }
    Result<uint32_t> version = header_format_version(text);
    CHECK((version.is_ok() || version.status().code() == StatusCode::kCorruption));
  }
  SUCCEED("flipped headers that still parsed: " << parsed_count);
}

TEST_CASE("the trailer round-trips and rejects a bad one", "[format][roundtrip]") {
  TraceTrailer trailer{UINT64_MAX, 12345};
  Result<TraceTrailer> parsed = trailer_from_json(trailer_to_json(trailer));
  REQUIRE(parsed.is_ok());
  CHECK(parsed.value() == trailer);
  CHECK(trailer_from_json("{}").status().code() == StatusCode::kCorruption);
  CHECK(trailer_from_json("{\"magic\": \"repro-trace\", \"format_version\": " +
                          std::to_string(kTraceFormatVersion + 1) +
                          ", \"event_count\": 1, \"events_bytes\": 1}")
            .status()
            .code() == StatusCode::kCorruption);
}

TEST_CASE("the current CPU identity names a vendor and feature words", "[format]") {
  CpuIdentity cpu = current_cpu_identity();
#if defined(__x86_64__)
  CHECK(cpu.vendor.size() == 12);
  CHECK(cpu.family != 0);
  CHECK(cpu.features.size() == 5 * 8 + 4);
  CHECK(cpu == current_cpu_identity());
#else
  CHECK(cpu.vendor.empty());
#endif
}

}  // namespace
}  // namespace repro::format
