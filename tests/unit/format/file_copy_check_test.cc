#include "core/format/file_copy_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/base/scoped_fd.h"
#include "core/format/content_id.h"
#include "core/format/trace_format.h"
#include "core/format/trace_writer.h"
#include "format_test_util.h"

namespace repro::format {
namespace {

using testing::make_header;
using testing::read_file;
using testing::Rng;
using testing::TempDir;
using testing::write_file;

// Replaces byte `offset` of the file at PATH by its complement.
void flip_byte(const std::string& path, off_t offset) {
  ScopedFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  REQUIRE(fd.valid());
  unsigned char byte = 0;
  REQUIRE(::pread(fd.get(), &byte, 1, offset) == 1);
  byte = static_cast<unsigned char>(~byte);
  REQUIRE(::pwrite(fd.get(), &byte, 1, offset) == 1);
}

TEST_CASE("a whole copy is checked against its content id", "[format][corruption]") {
  TempDir temp;
  Rng rng(7);
  const std::string content = rng.bytes(2 * 1024 * 1024 + 5);  // several read chunks
  const std::string id = content_id_of_bytes(content);
  const std::string copy = temp.sub(id);
  write_file(copy, content);
  CHECK(check_file_copy(copy, id).is_ok());

  SECTION("one flipped byte, anywhere") {
    for (off_t offset : {off_t{0}, off_t{1024 * 1024}, static_cast<off_t>(content.size() - 1)}) {
      write_file(copy, content);
      flip_byte(copy, offset);
      Status status = check_file_copy(copy, id);
      CHECK(status.code() == StatusCode::kCorruption);
      CHECK(status.message().find(copy) != std::string::npos);
    }
  }
  SECTION("cut short, emptied, or grown") {
    for (const std::string& other :
         {content.substr(0, content.size() / 2), std::string(), content + "x"}) {
      write_file(copy, other);
      Status status = check_file_copy(copy, id);
      CHECK(status.code() == StatusCode::kCorruption);
      CHECK(status.message().find(content_id_of_bytes(other)) != std::string::npos);
    }
  }
  SECTION("missing, or not a file") {
    CHECK(check_file_copy(temp.sub("absent"), id).code() == StatusCode::kNotFound);
    REQUIRE(::mkdir(temp.sub("dir").c_str(), 0700) == 0);
    CHECK(check_file_copy(temp.sub("dir"), id).code() == StatusCode::kCorruption);
  }
  SECTION("the empty copy of empty content") {
    write_file(copy, "");
    CHECK(check_file_copy(copy, content_id_of_bytes("")).is_ok());
  }
}

TEST_CASE("copies made by the writer pass the check, whole and sparse", "[format][corruption]") {
  TempDir temp;
  const std::string dir = temp.sub("trace");
  auto writer = TraceWriter::create(dir, make_header());
  REQUIRE(writer.is_ok());

  write_file(temp.sub("small"), "a small file");
  Result<std::string> small = writer.value()->store_file(temp.sub("small"));
  REQUIRE(small.is_ok());
  Result<std::string> bytes = writer.value()->store_bytes("stored bytes");
  REQUIRE(bytes.is_ok());

  // Over kWholeFileLimitBytes: only the mapped range is stored, under the
  // sparse-range id.
  const uint64_t size = kWholeFileLimitBytes + (16u << 20);
  const std::string big = temp.sub("big");
  {
    ScopedFd fd(::open(big.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    REQUIRE(fd.valid());
    REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(size)) == 0);
    REQUIRE(::pwrite(fd.get(), "head", 4, 0) == 4);
    REQUIRE(::pwrite(fd.get(), "inside", 6, 1u << 20) == 6);
  }
  Result<std::string> range = writer.value()->store_mapped_range(big, 1u << 20, 4096);
  REQUIRE(range.is_ok());
  REQUIRE(writer.value()->finish().is_ok());

  for (const std::string& id : {small.value(), bytes.value(), range.value()}) {
    INFO(id);
    Status status = check_file_copy(dir + "/files/" + id, id);
    INFO(status.to_string());
    CHECK(status.is_ok());
  }

  // A flipped byte in the stored range, or a page written into a hole,
  // breaks the sparse copy's id too.
  const std::string range_copy = dir + "/files/" + range.value();
  ::chmod(range_copy.c_str(), 0600);
  flip_byte(range_copy, 1u << 20);
  CHECK(check_file_copy(range_copy, range.value()).code() == StatusCode::kCorruption);
  flip_byte(range_copy, 1u << 20);
  REQUIRE(check_file_copy(range_copy, range.value()).is_ok());
  flip_byte(range_copy, static_cast<off_t>(size - 1));
  CHECK(check_file_copy(range_copy, range.value()).code() == StatusCode::kCorruption);
}

}  // namespace
}  // namespace repro::format
