#include "core/format/sparse_copy.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/falloc.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/format/file_util.h"

namespace repro::format {
namespace {

// Holes and zero pages are found at this granularity (the x86-64 page,
// which is also what a mapping shows at a time).
constexpr uint64_t kPageBytes = 4096;
// Data is read in pieces of this size: large enough that a syscall per
// piece is cheap, small enough to stay in cache while hashed.
constexpr uint64_t kChunkBytes = 1024 * 1024;
// Starts the hash input of a sparse copy, so its ids differ from those of
// whole copies (a plain XXH3-128 of the bytes).
constexpr char kSparseIdPrefix[] = "repro sparse range v1";

// Calls `visit(offset, length)` for each run of data (not a hole) of `fd`
// within [from, to). Where the file system cannot say where holes are (no
// SEEK_DATA), all of [from, to) is visited.
template <typename Visit>
Status for_each_data_run(int fd, uint64_t from, uint64_t to, Visit visit) {
  uint64_t at = from;
  while (at < to) {
    off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) {
        return Status::ok();  // only a hole from here to the end
      }
      return visit(at, to - at);  // no SEEK_DATA here: treat it all as data
    }
    if (static_cast<uint64_t>(data) >= to) {
      return Status::ok();
    }
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    uint64_t end = hole < 0 ? to : std::min<uint64_t>(static_cast<uint64_t>(hole), to);
    REPRO_RETURN_IF_ERROR(visit(static_cast<uint64_t>(data), end - static_cast<uint64_t>(data)));
    at = end;
  }
  return Status::ok();
}

Status read_at(int fd, char* buffer, uint64_t length, uint64_t offset, uint64_t* got) {
  *got = 0;
  while (*got < length) {
    ssize_t n = ::pread(fd, buffer + *got, length - *got, static_cast<off_t>(offset + *got));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return Status::from_errno(errno, "reading");
    }
    if (n == 0) {
      break;
    }
    *got += static_cast<uint64_t>(n);
  }
  return Status::ok();
}

Status write_at(int fd, const char* bytes, uint64_t length, uint64_t offset,
                const std::string& path) {
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pwrite(fd, bytes + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return Status::from_errno(n < 0 ? errno : EIO, fmt::format("writing '{}'", path));
    }
    done += static_cast<uint64_t>(n);
  }
  return Status::ok();
}

bool all_zero(const char* bytes, uint64_t length) {
  static const char kZeros[kPageBytes] = {};
  return std::memcmp(bytes, kZeros, length) == 0;
}

void hash_u64(XXH3_state_t* state, uint64_t value) {
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) {
    le[i] = static_cast<unsigned char>(value >> (8 * i));
  }
  XXH3_128bits_update(state, le, sizeof le);
}

}  // namespace

namespace {

// The id of write_sparse_range over [from, to) of `source`; each non-zero
// page is also written to `out` at its offset unless `out` is -1.
Result<std::string> hash_sparse_range(int source, const std::string& source_path,
                                      uint64_t size_bytes, uint64_t from, uint64_t to, int out,
                                      const std::string& out_path) {
  from = std::min(from & ~(kPageBytes - 1), size_bytes);
  to = std::min(to, size_bytes);
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, kSparseIdPrefix, sizeof kSparseIdPrefix);
  hash_u64(state, size_bytes);
  std::vector<char> buffer(kChunkBytes);
  Status status = for_each_data_run(source, from, to, [&](uint64_t start, uint64_t length) {
    // Runs start on a page boundary (holes are whole blocks), except
    // where the range starts; pages are counted from offset 0.
    for (uint64_t at = start; at < start + length;) {
      uint64_t want = std::min(kChunkBytes, start + length - at);
      uint64_t got = 0;
      Status read = read_at(source, buffer.data(), want, at, &got);
      if (!read.is_ok()) {
        return read.context(fmt::format("'{}'", source_path));
      }
      if (got == 0) {
        break;  // the file shrank meanwhile
      }
      for (uint64_t page = 0; page < got;) {
        uint64_t page_end = std::min(got, (at + page + kPageBytes) / kPageBytes * kPageBytes - at);
        const char* bytes = buffer.data() + page;
        if (!all_zero(bytes, page_end - page)) {
          hash_u64(state, at + page);
          hash_u64(state, page_end - page);
          XXH3_128bits_update(state, bytes, page_end - page);
          if (out >= 0) {
            REPRO_RETURN_IF_ERROR(write_at(out, bytes, page_end - page, at + page, out_path));
          }
        }
        page = page_end;
      }
      at += got;
    }
    return Status::ok();
  });
  XXH128_hash_t hash = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  REPRO_RETURN_IF_ERROR(status);
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  std::string id;
  for (unsigned char byte : canonical.digest) {
    id += fmt::format("{:02x}", byte);
  }
  return id;
}

}  // namespace

Result<std::string> write_sparse_range(int source, const std::string& source_path,
                                       uint64_t size_bytes, uint64_t from, uint64_t to, int out,
                                       const std::string& out_path) {
  REPRO_ASSIGN_OR_RETURN(
      std::string id, hash_sparse_range(source, source_path, size_bytes, from, to, out, out_path));
  if (::ftruncate(out, static_cast<off_t>(size_bytes)) != 0) {
    return Status::from_errno(errno, fmt::format("sizing '{}'", out_path));
  }
  return id;
}

Result<std::string> sparse_copy_content_id(int copy, const std::string& copy_path,
                                           uint64_t size_bytes) {
  // The copy holds zeros outside the range it was made of, so its non-zero
  // pages over the whole file are exactly those write_sparse_range hashed.
  return hash_sparse_range(copy, copy_path, size_bytes, 0, size_bytes, -1, copy_path);
}

Status copy_range_sparse(int source, uint64_t size_bytes, uint64_t from, uint64_t to, int dest,
                         const std::string& dest_path) {
  to = std::min(to, size_bytes);
  if (::ftruncate(dest, static_cast<off_t>(size_bytes)) != 0) {
    return Status::from_errno(errno, fmt::format("sizing '{}'", dest_path));
  }
  if (from >= to) {
    return Status::ok();
  }
  std::vector<char> buffer(kChunkBytes);
  if (::fallocate(dest, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from),
                  static_cast<off_t>(to - from)) != 0) {
    // No hole punching here: write zeros over the range instead.
    std::fill(buffer.begin(), buffer.end(), 0);
    for (uint64_t at = from; at < to; at += kChunkBytes) {
      REPRO_RETURN_IF_ERROR(
          write_at(dest, buffer.data(), std::min(kChunkBytes, to - at), at, dest_path));
    }
  }
  return for_each_data_run(source, from, to, [&](uint64_t start, uint64_t length) {
    for (uint64_t at = start; at < start + length;) {
      uint64_t got = 0;
      Status read =
          read_at(source, buffer.data(), std::min(kChunkBytes, start + length - at), at, &got);
      if (!read.is_ok()) {
        return read.context(fmt::format("copying into '{}'", dest_path));
      }
      if (got == 0) {
        break;
      }
      REPRO_RETURN_IF_ERROR(write_at(dest, buffer.data(), got, at, dest_path));
      at += got;
    }
    return Status::ok();
  });
}

}  // namespace repro::format
