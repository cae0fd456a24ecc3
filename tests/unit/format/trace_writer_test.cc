#include "core/format/trace_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <catch2/catch.hpp>

#include "core/base/scoped_fd.h"
#include "core/format/content_id.h"
#include "core/format/file_util.h"
#include "core/format/trace_format.h"
#include "core/format/trace_reader.h"
#include "format_test_util.h"

namespace repro::format {
namespace {

using testing::file_size;
using testing::make_event;
using testing::make_header;
using testing::read_file;
using testing::Rng;
using testing::TempDir;
using testing::write_file;

std::unique_ptr<TraceWriter> create_writer(const std::string& dir) {
  Result<std::unique_ptr<TraceWriter>> writer = TraceWriter::create(dir, make_header());
  INFO(writer.status().to_string());
  REQUIRE(writer.is_ok());
  return std::move(writer).value();
}

TEST_CASE("create refuses a non-empty directory and accepts an empty one", "[format]") {
  TempDir temp;
  write_file(temp.sub("stray"), "x");
  Result<std::unique_ptr<TraceWriter>> refused = TraceWriter::create(temp.path(), make_header());
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().message(), Catch::Contains(temp.path()));

  REQUIRE(::mkdir(temp.sub("empty").c_str(), 0755) == 0);
  CHECK(TraceWriter::create(temp.sub("empty"), make_header()).is_ok());
  CHECK(TraceWriter::create(temp.sub("new"), make_header()).is_ok());
  CHECK(TraceWriter::create(temp.sub("missing-parent/trace"), make_header()).status().code() ==
        StatusCode::kIoError);
}

TEST_CASE("the trace directory goes from incomplete to complete", "[format]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  auto writer = create_writer(dir);
  CHECK(testing::file_size(dir + "/header") > 0);
  CHECK(path_exists(dir + "/incomplete"));
  CHECK(path_exists(dir + "/events"));
  CHECK(path_exists(dir + "/files"));
  CHECK_FALSE(path_exists(dir + "/complete"));
  CHECK_FALSE(path_exists(dir + "/trailer"));

  Event event;
  make_event(0, &event);
  REQUIRE(writer->append(event).is_ok());
  CHECK(file_size(dir + "/events") == 0);  // still buffered
  REQUIRE(writer->flush().is_ok());
  uint64_t after_flush = file_size(dir + "/events");
  CHECK(after_flush > 0);
  REQUIRE(writer->flush().is_ok());  // nothing buffered: no-op
  CHECK(file_size(dir + "/events") == after_flush);

  REQUIRE(writer->finish().is_ok());
  CHECK(path_exists(dir + "/complete"));
  CHECK(path_exists(dir + "/trailer"));
  CHECK_FALSE(path_exists(dir + "/incomplete"));
  CHECK(writer->event_count() == 1);
  CHECK(writer->append(event).code() == StatusCode::kInvalidArgument);
  CHECK(writer->finish().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(read_file(dir + "/header"), Catch::Contains("\"format_version\": " + std::to_string(kTraceFormatVersion)));
  // No temp files are left behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    CHECK(entry.path().filename().string().rfind(kTempFilePrefix, 0) != 0);
  }
}

TEST_CASE("frames are written whenever the buffer reaches the frame size", "[format]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  auto writer = create_writer(dir);
  Event event;
  event.kind = EventKind::kSyscall;
  event.syscall_number = 0;
  event.writes.push_back({0x1000, Rng(1).bytes(1000)});
  size_t appended = 0;
  while (file_size(dir + "/events") == 0) {
    REQUIRE(writer->append(event).is_ok());
    ++appended;
    REQUIRE(appended < 10 * kFrameRawBytes / 1000);
  }
  // Each event encodes to a little over 1000 bytes.
  CHECK(appended * 1010 >= kFrameRawBytes);
  CHECK(appended * 1000 <= kFrameRawBytes);
}

TEST_CASE("a write error is sticky", "[format]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  auto writer = create_writer(dir);
  Event event;
  event.kind = EventKind::kSyscallBatch;
  event.data = Rng(5).bytes(100000);  // incompressible
  REQUIRE(writer->append(event).is_ok());
  REQUIRE(writer->flush().is_ok());

  // Cap the file size just past what is written: the next frame's write is
  // cut short, then fails with EFBIG (SIGXFSZ ignored for the duration).
  struct rlimit old_limit;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_action;
  REQUIRE(::sigaction(SIGXFSZ, &ignore, &old_action) == 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = file_size(dir + "/events") + 1000;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
  REQUIRE(writer->append(event).is_ok());
  Status failed = writer->flush();
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  REQUIRE(::sigaction(SIGXFSZ, &old_action, nullptr) == 0);

  REQUIRE_FALSE(failed.is_ok());
  CHECK(failed.code() == StatusCode::kIoError);
  CHECK_THAT(failed.message(), Catch::Contains("events"));
  // The error stays, even now that writing would work again.
  CHECK(writer->append(event).message() == failed.message());
  CHECK(writer->flush().message() == failed.message());
  CHECK(writer->finish().message() == failed.message());
  CHECK(writer->store_bytes("x").status().message() == failed.message());
  CHECK_FALSE(path_exists(dir + "/complete"));

  // The reader sees the first frame and a cut-off second one.
  writer.reset();
  auto reader = TraceReader::open(dir);
  REQUIRE(reader.is_ok());
  Event read;
  CHECK(reader.value()->next(&read).value());
  CHECK(read == event);
  CHECK_FALSE(reader.value()->next(&read).value());
  CHECK(reader.value()->dropped_bytes() == 1000);
}

TEST_CASE("write_all reports ENOSPC from /dev/full", "[format]") {
  ScopedFd full(::open("/dev/full", O_WRONLY | O_CLOEXEC));
  if (!full.valid()) {
    SUCCEED("no /dev/full here");
    return;
  }
  Status status = write_all(full.get(), "abc", 3, "/dev/full");
  CHECK(status.code() == StatusCode::kIoError);
  CHECK_THAT(status.message(), Catch::Contains("No space left on device"));
}

TEST_CASE("an unfinished writer flushes its buffer when destroyed", "[format][roundtrip]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  std::vector<Event> events(100);
  {
    auto writer = create_writer(dir);
    for (size_t i = 0; i < events.size(); ++i) {
      make_event(i, &events[i]);
      REQUIRE(writer->append(events[i]).is_ok());
    }
  }
  auto reader = TraceReader::open(dir);
  REQUIRE(reader.is_ok());
  CHECK(reader.value()->state() == TraceState::kIncomplete);
  Event event;
  for (const Event& expected : events) {
    REQUIRE(reader.value()->next(&event).value());
    CHECK(event == expected);
  }
  CHECK_FALSE(reader.value()->next(&event).value());
}

TEST_CASE("store_file dedupes, preserves content and links read-only files", "[format]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  auto writer = create_writer(dir);
  Rng rng(3);
  const std::string content = rng.bytes(3 * 1024 * 1024 + 17);  // several read chunks
  write_file(temp.sub("a"), content);
  write_file(temp.sub("b"), content);
  write_file(temp.sub("other"), "other content");

  Result<std::string> a = writer->store_file(temp.sub("a"));
  Result<std::string> b = writer->store_file(temp.sub("b"));
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  CHECK(a.value() == b.value());
  CHECK(a.value() == content_id_of_bytes(content));
  CHECK(read_file(dir + "/files/" + a.value()) == content);
  Result<std::string> bytes_id = writer->store_bytes(content);
  REQUIRE(bytes_id.is_ok());
  CHECK(bytes_id.value() == a.value());
  size_t stored = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/files")) {
    (void)entry;
    ++stored;
  }
  CHECK(stored == 1);

  // A writable file is copied: changing it later leaves the copy intact.
  Result<std::string> other = writer->store_file(temp.sub("other"));
  REQUIRE(other.is_ok());
  write_file(temp.sub("other"), "changed");
  CHECK(read_file(dir + "/files/" + other.value()) == "other content");

  // A read-only file on the same filesystem is hard-linked.
  write_file(temp.sub("ro"), "read-only content");
  REQUIRE(::chmod(temp.sub("ro").c_str(), 0444) == 0);
  Result<std::string> ro = writer->store_file(temp.sub("ro"));
  REQUIRE(ro.is_ok());
  struct stat source_stat;
  struct stat stored_stat;
  REQUIRE(::stat(temp.sub("ro").c_str(), &source_stat) == 0);
  REQUIRE(::stat((dir + "/files/" + ro.value()).c_str(), &stored_stat) == 0);
  CHECK(stored_stat.st_ino == source_stat.st_ino);
  CHECK(read_file(dir + "/files/" + ro.value()) == "read-only content");

  // Empty content is a file too.
  Result<std::string> empty = writer->store_bytes("");
  REQUIRE(empty.is_ok());
  CHECK(read_file(dir + "/files/" + empty.value()).empty());

  Result<std::string> missing = writer->store_file(temp.sub("does-not-exist"));
  CHECK(missing.status().code() == StatusCode::kNotFound);
  // Not a regular file: nothing to store, and no fault of the command line.
  CHECK(writer->store_file(temp.path()).status().code() == StatusCode::kUnsupported);
  // A source-side failure is not sticky.
  CHECK(writer->flush().is_ok());
  REQUIRE(writer->finish().is_ok());

  auto reader = TraceReader::open(dir);
  REQUIRE(reader.is_ok());
  Result<std::string> path = reader.value()->file_path(a.value());
  REQUIRE(path.is_ok());
  CHECK(read_file(path.value()) == content);
  CHECK(reader.value()->file_path(std::string(32, '0')).status().code() == StatusCode::kCorruption);
  CHECK(reader.value()->file_path("../header").status().code() == StatusCode::kCorruption);
}

TEST_CASE("a trace is readable by its owner only, whatever the umask", "[format]") {
  for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}}) {
    INFO("umask " << mask);
    TempDir temp;
    const mode_t saved = ::umask(mask);
    std::string dir = temp.sub("trace");
    auto writer = create_writer(dir);
    write_file(temp.sub("input"), "what the program read");
    Result<std::string> copied = writer->store_file(temp.sub("input"));
    Result<std::string> bytes = writer->store_bytes("more of it");
    const bool finished = writer->finish().is_ok();
    ::umask(saved);
    REQUIRE(copied.is_ok());
    REQUIRE(bytes.is_ok());
    REQUIRE(finished);

    auto mode_of = [](const std::string& path) {
      struct stat st;
      REQUIRE(::stat(path.c_str(), &st) == 0);
      return st.st_mode & 07777;
    };
    CHECK(mode_of(dir) == 0700);
    CHECK(mode_of(dir + "/files") == 0700);
    for (const char* name : {"header", "events", "trailer", "complete"}) {
      INFO(name);
      CHECK(mode_of(dir + "/" + name) == 0600);
    }
    CHECK(mode_of(dir + "/files/" + copied.value()) == 0400);
    CHECK(mode_of(dir + "/files/" + bytes.value()) == 0400);
  }
  // An empty directory given to record is made private too.
  TempDir temp;
  REQUIRE(::mkdir(temp.sub("given").c_str(), 0777) == 0);
  REQUIRE(::chmod(temp.sub("given").c_str(), 0777) == 0);
  auto writer = create_writer(temp.sub("given"));
  struct stat st;
  REQUIRE(::stat(temp.sub("given").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
}

TEST_CASE("store_mapped_range stores a large file's mapped range without its holes",
          "[format]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  auto writer = create_writer(dir);
  const uint64_t size = kWholeFileLimitBytes + (1u << 30);  // a large sparse file
  std::string big = temp.sub("big");
  {
    ScopedFd fd(::open(big.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    REQUIRE(fd.valid());
    REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(size)) == 0);
    REQUIRE(::pwrite(fd.get(), "head", 4, 0) == 4);
    REQUIRE(::pwrite(fd.get(), "inside", 6, 1u << 29) == 6);
    REQUIRE(::pwrite(fd.get(), "tail", 4, static_cast<off_t>(size - 4)) == 4);
  }
  // The second GiB's first half: "inside" is in it, "head" and "tail" not.
  Result<std::string> part = writer->store_mapped_range(big, 1u << 28, 1u << 29);
  REQUIRE(part.is_ok());
  CHECK(is_valid_content_id(part.value()));
  std::string stored = dir + "/files/" + part.value();
  struct stat st;
  REQUIRE(::stat(stored.c_str(), &st) == 0);
  CHECK(static_cast<uint64_t>(st.st_size) == size);  // mapped at the same offsets on replay
  CHECK(st.st_blocks * 512 <= 64 * 1024);            // only what the range holds
  ScopedFd copy(::open(stored.c_str(), O_RDONLY | O_CLOEXEC));
  char bytes[6] = {};
  REQUIRE(::pread(copy.get(), bytes, 6, 1u << 29) == 6);
  CHECK(std::string(bytes, 6) == "inside");
  REQUIRE(::pread(copy.get(), bytes, 4, 0) == 4);
  CHECK(std::string(bytes, 4) == std::string(4, '\0'));
  REQUIRE(::pread(copy.get(), bytes, 4, static_cast<off_t>(size - 4)) == 4);
  CHECK(std::string(bytes, 4) == std::string(4, '\0'));

  // The same content gets the same id; other content in the range another.
  CHECK(writer->store_mapped_range(big, 1u << 28, 1u << 29).value() == part.value());
  CHECK(writer->store_mapped_range(big, 0, 4096).value() != part.value());

  // A file up to the limit is stored whole, as store_file does.
  write_file(temp.sub("small"), "small file");
  CHECK(writer->store_mapped_range(temp.sub("small"), 4096, 4096).value() ==
        content_id_of_bytes("small file"));
  CHECK(writer->store_mapped_range(temp.path(), 0, 4096).status().code() ==
        StatusCode::kUnsupported);
  REQUIRE(writer->finish().is_ok());
}

TEST_CASE("store_file copies a sparse file's holes as holes", "[format]") {
  TempDir temp;
  std::string dir = temp.sub("trace");
  auto writer = create_writer(dir);
  const uint64_t size = 32u << 20;  // stored whole (at most kWholeFileLimitBytes)
  std::string sparse = temp.sub("sparse");
  {
    ScopedFd fd(::open(sparse.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    REQUIRE(fd.valid());
    REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(size)) == 0);
    REQUIRE(::pwrite(fd.get(), "middle", 6, 10u << 20) == 6);
  }
  Result<std::string> id = writer->store_file(sparse);
  REQUIRE(id.is_ok());
  std::string content(size, '\0');
  std::memcpy(content.data() + (10u << 20), "middle", 6);
  CHECK(id.value() == content_id_of_bytes(content));
  std::string stored = dir + "/files/" + id.value();
  CHECK(read_file(stored) == content);
  struct stat st;
  REQUIRE(::stat(stored.c_str(), &st) == 0);
  CHECK(st.st_blocks * 512 <= 2u << 20);  // the chunk holding "middle"
  REQUIRE(writer->finish().is_ok());
}

}  // namespace
}  // namespace repro::format
