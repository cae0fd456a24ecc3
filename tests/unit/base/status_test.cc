#include "core/base/status.h"

#include <catch2/catch.hpp>

namespace repro {
namespace {

Result<int> parse_positive(int value) {
  if (value <= 0) {
    return Status::error(StatusCode::kInvalidArgument, "not positive");
  }
  return value;
}

Status twice(int value, int* out) {
  REPRO_ASSIGN_OR_RETURN(int checked, parse_positive(value));
  *out = checked * 2;
  return Status::ok();
}

TEST_CASE("status context keeps the code and prefixes the message", "[base]") {
  Status s = Status::error(StatusCode::kCorruption, "bad frame").context("reading 'x/events'");
  CHECK(s.code() == StatusCode::kCorruption);
  CHECK(s.message() == "reading 'x/events': bad frame");
  CHECK(s.to_string() == "corruption: reading 'x/events': bad frame");
}

TEST_CASE("result carries a value or an error through the macros", "[base]") {
  int out = 0;
  CHECK(twice(21, &out).is_ok());
  CHECK(out == 42);
  Status s = twice(-1, &out);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "not positive");
}

TEST_CASE("from_errno names the failing call and the errno text", "[base]") {
  Status s = Status::from_errno(ENOENT, "opening 'nope'");
  CHECK(s.code() == StatusCode::kIoError);
  CHECK(s.message() == "opening 'nope': No such file or directory");
}

}  // namespace
}  // namespace repro
