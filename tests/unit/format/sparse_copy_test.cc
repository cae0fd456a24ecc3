#include "core/format/sparse_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/base/scoped_fd.h"
#include "core/format/content_id.h"
#include "format_test_util.h"

namespace repro::format {
namespace {

using testing::TempDir;

constexpr uint64_t kMiB = 1024 * 1024;

// A sparse file of `size` bytes with `text` written at each offset.
ScopedFd make_sparse(const std::string& path, uint64_t size,
                     const std::vector<std::pair<uint64_t, std::string>>& writes) {
  ScopedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  REQUIRE(fd.valid());
  REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(size)) == 0);
  for (const auto& [offset, text] : writes) {
    REQUIRE(::pwrite(fd.get(), text.data(), text.size(), static_cast<off_t>(offset)) ==
            static_cast<ssize_t>(text.size()));
  }
  return fd;
}

std::string read_at(int fd, uint64_t offset, size_t length) {
  std::string bytes(length, '?');
  REQUIRE(::pread(fd, bytes.data(), length, static_cast<off_t>(offset)) ==
          static_cast<ssize_t>(length));
  return bytes;
}

TEST_CASE("write_sparse_range copies the range's non-zero pages and keeps the size", "[format]") {
  TempDir temp;
  ScopedFd source =
      make_sparse(temp.sub("source"), 512 * kMiB,
                  {{0, "before"}, {100 * kMiB + 5, "in range"}, {300 * kMiB, "after"}});
  ScopedFd out(::open(temp.sub("out").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  Result<std::string> id = write_sparse_range(source.get(), "source", 512 * kMiB, 64 * kMiB,
                                              200 * kMiB, out.get(), "out");
  REQUIRE(id.is_ok());
  CHECK(is_valid_content_id(id.value()));
  struct stat st;
  REQUIRE(::fstat(out.get(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_size) == 512 * kMiB);
  CHECK(st.st_blocks * 512 <= 64 * 1024);
  CHECK(read_at(out.get(), 100 * kMiB + 5, 8) == "in range");
  CHECK(read_at(out.get(), 0, 6) == std::string(6, '\0'));
  CHECK(read_at(out.get(), 300 * kMiB, 5) == std::string(5, '\0'));

  // The id depends on the bytes stored, not on how the source holds them:
  // a page of written zeros counts as a hole.
  ScopedFd zeros =
      make_sparse(temp.sub("zeros"), 512 * kMiB,
                  {{100 * kMiB + 5, "in range"}, {150 * kMiB, std::string(8192, '\0')}});
  ScopedFd out2(::open(temp.sub("out2").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  Result<std::string> same = write_sparse_range(zeros.get(), "zeros", 512 * kMiB, 64 * kMiB,
                                                200 * kMiB, out2.get(), "out2");
  REQUIRE(same.is_ok());
  CHECK(same.value() == id.value());
  // A whole copy of the same bytes has another id (another kind of copy).
  CHECK(id.value() != content_id_of_bytes(std::string(4096, 'x')));
}

TEST_CASE("copy_range_sparse replaces only the range and sets the size", "[format]") {
  TempDir temp;
  ScopedFd source = make_sparse(temp.sub("source"), 256 * kMiB, {{10 * kMiB, "new"}});
  ScopedFd dest = make_sparse(temp.sub("dest"), 8 * kMiB,
                              {{0, "keep"}, {10 * kMiB - 4096, "old"}, {12 * kMiB, "gone"}});
  REQUIRE(
      copy_range_sparse(source.get(), 256 * kMiB, 8 * kMiB, 16 * kMiB, dest.get(), "dest").is_ok());
  struct stat st;
  REQUIRE(::fstat(dest.get(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_size) == 256 * kMiB);
  CHECK(read_at(dest.get(), 0, 4) == "keep");                               // outside the range
  CHECK(read_at(dest.get(), 10 * kMiB, 3) == "new");                        // copied
  CHECK(read_at(dest.get(), 10 * kMiB - 4096, 3) == std::string(3, '\0'));  // a hole in source
  CHECK(read_at(dest.get(), 12 * kMiB, 4) == std::string(4, '\0'));
}

}  // namespace
}  // namespace repro::format
