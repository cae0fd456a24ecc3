#include "core/format/event_stream.h"

#include "core/format/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <lz4frame.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/format/trace_format.h"
#include "core/format/varint.h"

namespace repro::format {
namespace {

LZ4F_preferences_t frame_preferences(size_t content_bytes) {
  LZ4F_preferences_t preferences;
  std::memset(&preferences, 0, sizeof(preferences));
  preferences.frameInfo.blockSizeID = LZ4F_max64KB;
  // Independent blocks: the reader decompresses into a buffer it may move
  // while growing it, which is only safe when lz4 keeps no pointer into
  // earlier output (linked blocks use earlier output as their dictionary).
  preferences.frameInfo.blockMode = LZ4F_blockIndependent;
  preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  preferences.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  preferences.frameInfo.frameType = LZ4F_frame;
  preferences.frameInfo.contentSize = content_bytes;
  preferences.compressionLevel = 0;  // lz4 fast: the recorder's hot path
  preferences.autoFlush = 1;
  return preferences;
}

// The header's BD byte: bits 4-6 hold the block maximum size id.
constexpr uint8_t kBlockSizeId64KB = 4;

}  // namespace

Status compress_frame(std::string_view content, ByteBuffer* out) {
  LZ4F_preferences_t preferences = frame_preferences(content.size());
  size_t bound = LZ4F_compressFrameBound(content.size(), &preferences);
  out->clear();
  uint8_t* dst = out->reserve_extra(bound);
  size_t written = LZ4F_compressFrame(dst, bound, content.data(), content.size(), &preferences);
  if (LZ4F_isError(written)) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("lz4 frame compression of {} bytes failed: {}", content.size(),
                                     LZ4F_getErrorName(written)));
  }
  out->set_size(written);
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Sources

Status MemoryByteSource::read_at(uint64_t offset, uint8_t* dst, size_t length) {
  if (offset > bytes_.size() || length > bytes_.size() - offset) {
    return Status::error(StatusCode::kIoError,
                         fmt::format("read of {} bytes at offset {} past the end of {} bytes",
                                     length, offset, bytes_.size()));
  }
  if (length != 0) {
    std::memcpy(dst, bytes_.data() + offset, length);
  }
  return Status::ok();
}

Result<std::unique_ptr<FileByteSource>> FileByteSource::open(const std::string& path) {
  uint64_t size_bytes = 0;
  REPRO_ASSIGN_OR_RETURN(ScopedFd fd, open_regular_file(path, StatusCode::kIoError, &size_bytes));
  return std::unique_ptr<FileByteSource>(new FileByteSource(std::move(fd), size_bytes, path));
}

Status FileByteSource::read_at(uint64_t offset, uint8_t* dst, size_t length) {
  while (length > 0) {
    ssize_t n = ::pread(fd_.get(), dst, length, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return Status::from_errno(errno, fmt::format("reading '{}' at offset {}", path_, offset));
    }
    if (n == 0) {
      return Status::error(
          StatusCode::kIoError,
          fmt::format("'{}' shrank while being read (end of file at offset {})", path_, offset));
    }
    dst += n;
    offset += static_cast<uint64_t>(n);
    length -= static_cast<size_t>(n);
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------
// EventStreamReader

EventStreamReader::EventStreamReader(ByteSource* source, std::string name)
    : source_(source), name_(std::move(name)) {}

EventStreamReader::~EventStreamReader() {
  if (dctx_ != nullptr) {
    LZ4F_freeDecompressionContext(dctx_);
  }
}

Status EventStreamReader::frame_error(uint64_t frame_offset, const std::string& what) const {
  return Status::error(StatusCode::kCorruption,
                       fmt::format("{}: frame {} at byte offset {} (events from {}): {}", name_,
                                   frames_read_, frame_offset, frame_first_event_, what));
}

Result<size_t> EventStreamReader::window_at(uint64_t offset, size_t want) {
  uint64_t total = source_->size();
  if (offset >= total) {
    return size_t{0};
  }
  uint64_t left = total - offset;
  size_t needed = static_cast<size_t>(std::min<uint64_t>(want, left));
  uint64_t input_end = input_offset_ + input_.size();
  if (offset >= input_offset_ && offset <= input_end && input_end - offset >= needed) {
    return static_cast<size_t>(input_end - offset);
  }
  size_t chunk = static_cast<size_t>(std::min<uint64_t>(std::max(want, kReadChunkBytes), left));
  input_.clear();
  input_offset_ = offset;
  uint8_t* dst = input_.reserve_extra(chunk);
  REPRO_RETURN_IF_ERROR(source_->read_at(offset, dst, chunk));
  input_.set_size(chunk);
  return chunk;
}

Result<EventStreamReader::FrameLoad> EventStreamReader::load_frame() {
  const uint64_t start = valid_bytes_;
  frame_offset_ = start;
  frame_first_event_ = events_read_;
  const uint64_t total = source_->size();
  if (start == total) {
    return FrameLoad::kEnd;
  }
  auto truncated = [&]() {
    truncated_ = true;
    dropped_bytes_ = total - start;
    return FrameLoad::kTruncated;
  };

  // Frame header: magic, FLG, BD, [content size], HC. Checked by hand first
  // so garbage gets a precise message and lz4 never sees a block size or
  // option we do not write.
  REPRO_ASSIGN_OR_RETURN(size_t available, window_at(start, LZ4F_HEADER_SIZE_MAX));
  const uint8_t* p = input_.data() + (start - input_offset_);
  uint8_t magic_bytes[4];
  put_fixed32(magic_bytes, kLz4FrameMagic);
  if (available < 4) {
    if (std::memcmp(p, magic_bytes, available) == 0) {
      return truncated();
    }
    return frame_error(start, fmt::format("{} trailing bytes that are not an lz4 frame (garbage "
                                          "after the last frame?)",
                                          available));
  }
  uint32_t magic = load_fixed32(p);
  if (magic != kLz4FrameMagic) {
    return frame_error(start, fmt::format("no lz4 frame magic (found 0x{:08x}; garbage after "
                                          "the last frame?)",
                                          magic));
  }
  if (available < LZ4F_MIN_SIZE_TO_KNOW_HEADER_LENGTH) {
    return truncated();
  }
  size_t header_bytes = LZ4F_headerSize(p, available);
  if (LZ4F_isError(header_bytes)) {
    return frame_error(start,
                       fmt::format("bad lz4 frame header: {}", LZ4F_getErrorName(header_bytes)));
  }
  if (available < header_bytes) {
    return truncated();
  }
  if (((p[5] >> 4) & 7) != kBlockSizeId64KB) {
    return frame_error(start, "lz4 frame header names a block size other than 64 KiB");
  }

  if (dctx_ == nullptr) {
    LZ4F_dctx* dctx = nullptr;
    size_t rc = LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION);
    if (LZ4F_isError(rc)) {
      return Status::error(StatusCode::kIoError, fmt::format("creating an lz4 decompression "
                                                             "context: {}",
                                                             LZ4F_getErrorName(rc)));
    }
    dctx_ = dctx;
  }
  LZ4F_resetDecompressionContext(dctx_);
  LZ4F_frameInfo_t info;
  std::memset(&info, 0, sizeof(info));
  size_t consumed = header_bytes;
  size_t rc = LZ4F_getFrameInfo(dctx_, &info, p, &consumed);
  if (LZ4F_isError(rc)) {
    return frame_error(start, fmt::format("bad lz4 frame header: {}", LZ4F_getErrorName(rc)));
  }
  if (info.frameType != LZ4F_frame || info.blockMode != LZ4F_blockIndependent ||
      info.blockChecksumFlag != LZ4F_blockChecksumEnabled ||
      info.contentChecksumFlag != LZ4F_contentChecksumEnabled || info.dictID != 0) {
    return frame_error(start,
                       "lz4 frame options differ from what repro writes (independent "
                       "blocks, block and content checksums, no dictionary)");
  }
  if (info.contentSize < kFramePrologueBytes || info.contentSize > kMaxFrameRawBytes) {
    return frame_error(start,
                       fmt::format("lz4 frame declares {} content bytes, outside "
                                   "[{}, {}]",
                                   info.contentSize, kFramePrologueBytes, kMaxFrameRawBytes));
  }
  const size_t content_bytes = static_cast<size_t>(info.contentSize);
  uint64_t position = start + consumed;

  // Blocks. The content buffer grows only as decompressed bytes arrive, so a
  // corrupt content size cannot make us allocate more than the real data.
  content_.clear();
  size_t hint = rc;
  while (true) {
    REPRO_ASSIGN_OR_RETURN(size_t in_available, window_at(position, std::max<size_t>(hint, 1)));
    if (in_available == 0) {
      return truncated();
    }
    const uint8_t* src = input_.data() + (position - input_offset_);
    size_t produced = content_.size();
    if (content_.capacity() - produced < kLz4BlockBytes) {
      size_t limit = content_bytes + kLz4BlockBytes;
      if (content_.capacity() < limit) {
        content_.reserve(
            std::min(limit, std::max(content_.capacity() * 2, produced + 2 * kLz4BlockBytes)));
      }
    }
    size_t dst_bytes = content_.capacity() - produced;
    size_t src_bytes = in_available;
    rc = LZ4F_decompress(dctx_, content_.data() + produced, &dst_bytes, src, &src_bytes, nullptr);
    if (LZ4F_isError(rc)) {
      return frame_error(start, fmt::format("lz4 decompression failed at byte offset {}: {}",
                                            position, LZ4F_getErrorName(rc)));
    }
    position += src_bytes;
    content_.set_size(produced + dst_bytes);
    if (content_.size() > content_bytes) {
      return frame_error(start, fmt::format("frame decompresses to more than the {} bytes its "
                                            "header declares",
                                            content_bytes));
    }
    if (rc == 0) {
      break;
    }
    if (src_bytes == 0 && dst_bytes == 0) {
      return frame_error(start, "lz4 decompression made no progress");
    }
    hint = rc;
  }
  if (content_.size() != content_bytes) {
    return frame_error(start, fmt::format("frame decompresses to {} bytes, its header declares {}",
                                          content_.size(), content_bytes));
  }

  Status status = decoder_.reset(content_.data(), content_.size());
  if (!status.is_ok()) {
    return frame_error(start, status.message());
  }
  if (decoder_.first_event_index() != events_read_) {
    return frame_error(start, fmt::format("frame starts at event {}, expected event {} (a frame "
                                          "is missing, repeated or out of order)",
                                          decoder_.first_event_index(), events_read_));
  }
  valid_bytes_ = position;
  return FrameLoad::kFrame;
}

Result<bool> EventStreamReader::next(Event* event) {
  if (!error_.is_ok()) {
    return error_;
  }
  while (true) {
    if (have_frame_) {
      Result<bool> decoded = decoder_.next(event);
      if (!decoded.is_ok()) {
        error_ = frame_error(frame_offset_, decoded.status().message());
        return error_;
      }
      if (decoded.value()) {
        ++events_read_;
        return true;
      }
      have_frame_ = false;
      ++frames_read_;
    }
    if (ended_) {
      return false;
    }
    Result<FrameLoad> loaded = load_frame();
    if (!loaded.is_ok()) {
      error_ = loaded.status();
      return error_;
    }
    if (loaded.value() != FrameLoad::kFrame) {
      ended_ = true;
      return false;
    }
    have_frame_ = true;
  }
}

}  // namespace repro::format
