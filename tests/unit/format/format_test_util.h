#pragma once
// Helpers shared by the format tests: a self-deleting temp directory, a
// deterministic event generator, and small file utilities.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/format/event.h"
#include "core/format/trace_header.h"

namespace repro::format::testing {

/// A fresh directory under $TMPDIR (or /tmp), removed with its content on
/// destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/repro-format-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    if (made == nullptr) {
      std::abort();
    }
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Small deterministic PRNG (splitmix64 stream).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() { return splitmix64(state_++); }
  /// Uniform in [0, bound). Requires: bound > 0.
  uint64_t below(uint64_t bound) { return next() % bound; }
  std::string bytes(size_t length) {
    std::string out(length, '\0');
    for (size_t i = 0; i < length; i += 8) {
      uint64_t word = next();
      std::memcpy(out.data() + i, &word, std::min<size_t>(8, length - i));
    }
    return out;
  }

 private:
  uint64_t state_;
};

/// Fills *event (cleared first) with the INDEX-th event of a deterministic,
/// syscall-heavy stream that uses every kind and only each kind's fields.
inline void make_event(uint64_t index, Event* event) {
  event->clear();
  Rng rng(index * 7919 + 17);
  uint64_t pick = rng.below(100);
  event->thread = static_cast<uint32_t>(rng.below(4));
  if (pick < 60) {
    event->kind = EventKind::kSyscall;
    event->syscall_number = 110;  // getppid
    event->result = 4242;
    if (pick < 5) {
      event->syscall_number = 257;  // openat, with its path as an input
      event->args = {static_cast<uint64_t>(-100), 0x7ffff7fb5510, 0x80000, 0, 0, 0};
      event->result = pick < 2 ? -2 : 3;
      event->inputs = {{1, "/lib/x86_64-linux-gnu/libc.so.6"}};
    }
  } else if (pick < 75) {
    event->kind = EventKind::kSyscall;
    event->syscall_number = 0;  // read
    size_t length = rng.below(200);
    event->args = {3, 0x7ffd00001000 + rng.below(64) * 16, length, 0, 0, 0};
    event->result = rng.below(3) == 0 ? -11 : static_cast<int64_t>(length);
    if (event->result > 0) {
      event->writes.push_back({event->args[1], rng.bytes(length)});
    }
    event->syscall_flags = rng.below(4) == 0 ? uint32_t{kSyscallExecuted} : 0u;
  } else if (pick < 80) {
    event->kind = EventKind::kSyscallEntered;
    event->syscall_number = 202;  // futex
    event->args = {rng.next(), 0, 1, 0, 0, rng.below(2)};
  } else if (pick < 84) {
    event->kind = EventKind::kSignal;
    event->signal_number = static_cast<int32_t>(rng.below(64));
    event->signal_flags = static_cast<uint32_t>(rng.below(2));
    event->signal_info = rng.bytes(128);
  } else if (pick < 87) {
    event->kind = EventKind::kPreempt;
    event->registers = rng.bytes(216);
    event->extended_registers_hash = rng.next();
    event->memory_hash = rng.next();
    for (uint64_t page = 0, count = rng.below(40); page < count; ++page) {
      event->page_hashes.push_back({0x555555554000ull + page * 4096, rng.next()});
    }
    if (rng.below(4) == 0 && !event->page_hashes.empty()) {
      event->writes.push_back({event->page_hashes.back().address, rng.bytes(4096)});
    }
  } else if (pick < 91) {
    event->kind = EventKind::kRdtsc;
    event->tsc = 1'000'000'000ull + index * 1000 + rng.below(1000);
    event->tsc_aux = static_cast<uint32_t>(rng.below(2));
    event->address = 0x7ffff7fd0000ull + rng.below(4) * 0x40;
  } else if (pick < 93) {
    event->kind = EventKind::kThreadStart;
    event->parent_thread = static_cast<uint32_t>(rng.below(4));
    event->recorded_tid = static_cast<int32_t>(1000 + rng.below(30000));
    event->clone_flags = 0x3d0f00;
  } else if (pick < 94) {
    event->kind = EventKind::kExec;
    event->path = "/usr/bin/true";
    event->content_id = "0123456789abcdef0123456789abcdef";
    event->data = std::string("/usr/bin/true\0", 14);
    event->random_bytes = rng.bytes(16);
  } else if (pick < 96) {
    event->kind = EventKind::kThreadExit;
    event->exit_status = static_cast<int32_t>(rng.below(256)) << 8;
  } else if (pick < 98) {
    event->kind = EventKind::kMappedFile;
    event->path = "/lib/x86_64-linux-gnu/libc.so.6";
    event->content_id = "fedcba9876543210fedcba9876543210";
    event->result = static_cast<int64_t>(0x7f0000000000ull + rng.below(1 << 20) * 4096);
  } else if (pick < 99) {
    event->kind = EventKind::kSyscallBatch;
    event->data = rng.bytes(rng.below(300));
  } else if (rng.below(2) == 0) {
    event->kind = EventKind::kSyscallPatch;
    event->path = "/lib/x86_64-linux-gnu/libc.so.6";
    event->address = 0x7ffff7e00000ull + rng.below(1 << 20);
    event->data = std::string("\x0f\x05\x48\x3d\x00\xf0\xff\xff", 8);
    event->writes.push_back({0x7ffff7fb0000ull + rng.below(2048) * 32, rng.bytes(32)});
    event->writes.push_back({event->address, rng.bytes(8)});
  } else {
    event->kind = EventKind::kRdtscPatch;
    event->path = "/lib64/ld-linux-x86-64.so.2";
    for (uint64_t site = 0, count = 1 + rng.below(20); site < count; ++site) {
      event->writes.push_back({0x7ffff7fc0000ull + rng.below(1 << 16), site % 2 ? "\x0f\x31" : "\x0f\x01\xf9"});
    }
  }
}

/// make_event(index) for index < capacity, each generated once on first use
/// (the generator is slow under sanitizers, and corruption tests compare the
/// same events thousands of times).
class ExpectedEvents {
 public:
  explicit ExpectedEvents(uint64_t capacity) : capacity_(capacity) {}
  /// The INDEX-th event; generated into *scratch when beyond the capacity.
  const Event& at(uint64_t index, Event* scratch) {
    if (index >= capacity_) {
      make_event(index, scratch);
      return *scratch;
    }
    while (events_.size() <= index) {
      events_.emplace_back();
      make_event(events_.size() - 1, &events_.back());
    }
    return events_[index];
  }

 private:
  uint64_t capacity_;
  std::vector<Event> events_;
};

inline TraceHeader make_header() {
  TraceHeader header;
  header.cpu = current_cpu_identity();
  header.kernel_release = "6.18.0-test";
  header.argv = {"/bin/prog", "--flag", ""};
  header.env = {"HOME=/root", "LANG=C.UTF-8"};
  header.cwd = "/work";
  header.exe_path = "/bin/prog";
  header.seed = 12345;
  header.start_time_ns = 1700000000000000000ull;
  header.repro_version = "0.1.0";
  return header;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

inline uint64_t file_size(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace repro::format::testing
