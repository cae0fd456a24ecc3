#include "core/format/trace_reader.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>

#include "core/format/content_id.h"
#include "core/format/event_stream.h"
#include "core/format/file_copy_reads.h"
#include "core/format/file_util.h"
#include "core/format/trace_format.h"
#include "core/format/trace_trailer.h"

namespace repro::format {

class TraceReader::Impl {
 public:
  explicit Impl(std::string dir)
      : dir_(std::move(dir)), file_copy_reads_(join_path(dir_, kFilesDirName)) {}

  Status open();
  Result<bool> next(Event* event);
  // End-of-stream checks for a complete trace: truncation, trailing bytes,
  // and the trailer's counts.
  Status check_complete_end() const;

  std::string dir_;
  std::string events_path_;
  TraceHeader header_;
  TraceState state_ = TraceState::kIncomplete;
  TraceTrailer trailer_;
  std::unique_ptr<ByteSource> source_;
  std::unique_ptr<EventStreamReader> stream_;
  FileCopyReads file_copy_reads_;
  bool tolerate_missing_file_copies_ = false;
  Status error_;
  bool ended_ = false;
};

Status TraceReader::Impl::open() {
  struct stat st;
  if (::stat(dir_.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) {
      return Status::error(StatusCode::kNotFound, "no such trace directory");
    }
    return Status::from_errno(err, "stat");
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::error(StatusCode::kNotFound, "not a directory");
  }
  const bool complete = path_exists(join_path(dir_, kCompleteMarkerName));
  const bool incomplete = path_exists(join_path(dir_, kIncompleteMarkerName));

  std::string header_path = join_path(dir_, kHeaderFileName);
  Result<std::string> header_text = read_small_file(header_path, kMaxMetadataFileBytes);
  if (!header_text.is_ok()) {
    if (header_text.status().code() == StatusCode::kNotFound) {
      if (complete || incomplete) {
        return Status::error(StatusCode::kCorruption, fmt::format("'{}' is missing", header_path));
      }
      return Status::error(StatusCode::kNotFound, "not a repro trace (no header file)");
    }
    return header_text.status();
  }
  Result<TraceHeader> header = header_from_json_checked(header_text.value());
  if (!header.is_ok()) {
    if (header.status().code() == StatusCode::kVersionMismatch) {
      return header.status();
    }
    return header.status().context(fmt::format("'{}'", header_path));
  }
  header_ = std::move(header).value();

  // A trace is complete only once finish() renamed the marker; anything
  // else (crash, kill, still recording, marker lost) reads as incomplete.
  state_ = complete ? TraceState::kComplete : TraceState::kIncomplete;
  if (complete) {
    std::string trailer_path = join_path(dir_, kTrailerFileName);
    Result<std::string> trailer_text = read_small_file(trailer_path, kMaxMetadataFileBytes);
    if (!trailer_text.is_ok()) {
      if (trailer_text.status().code() == StatusCode::kNotFound) {
        return Status::error(
            StatusCode::kCorruption,
            fmt::format("the trace is marked complete but '{}' is missing", trailer_path));
      }
      return trailer_text.status();
    }
    Result<TraceTrailer> trailer = trailer_from_json(trailer_text.value());
    if (!trailer.is_ok()) {
      return trailer.status().context(fmt::format("'{}'", trailer_path));
    }
    trailer_ = trailer.value();
  }

  events_path_ = join_path(dir_, kEventsFileName);
  Result<std::unique_ptr<FileByteSource>> source = FileByteSource::open(events_path_);
  if (!source.is_ok()) {
    if (source.status().code() != StatusCode::kNotFound) {
      return source.status();
    }
    if (complete) {
      return Status::error(
          StatusCode::kCorruption,
          fmt::format("the trace is marked complete but '{}' is missing", events_path_));
    }
    // Killed between creating the marker and the events file: no events.
    source_ = std::make_unique<MemoryByteSource>(std::string_view());
  } else {
    source_ = std::move(source).value();
  }
  stream_ = std::make_unique<EventStreamReader>(source_.get(), fmt::format("'{}'", events_path_));
  return Status::ok();
}

Status TraceReader::Impl::check_complete_end() const {
  const uint64_t valid = stream_->valid_bytes();
  const uint64_t total = source_->size();
  if (stream_->truncated()) {
    if (valid == trailer_.events_bytes) {
      return Status::error(StatusCode::kCorruption,
                           fmt::format("'{}': {} unexpected bytes after the last frame, at byte "
                                       "offset {} (the trailer says the events end there)",
                                       events_path_, total - valid, valid));
    }
    return Status::error(
        StatusCode::kCorruption,
        fmt::format("'{}' is truncated: the trace is marked complete with {} events in {} bytes, "
                    "but the file is {} bytes and ends inside the frame at byte offset {} ({} "
                    "bytes dropped after event {})",
                    events_path_, trailer_.event_count, trailer_.events_bytes, total, valid,
                    stream_->dropped_bytes(), stream_->events_read()));
  }
  if (valid != trailer_.events_bytes) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("'{}' has {} bytes of whole frames, but the trailer says {} "
                                     "(file ends at byte offset {})",
                                     events_path_, valid, trailer_.events_bytes, total));
  }
  if (stream_->events_read() != trailer_.event_count) {
    return Status::error(
        StatusCode::kCorruption,
        fmt::format("'{}' holds {} events, but the trailer says {} (end at byte "
                    "offset {})",
                    events_path_, stream_->events_read(), trailer_.event_count, valid));
  }
  return Status::ok();
}

Result<bool> TraceReader::Impl::next(Event* event) {
  if (!error_.is_ok()) {
    return error_;
  }
  if (ended_) {
    return false;
  }
  Result<bool> result = stream_->next(event);
  if (!result.is_ok()) {
    error_ = result.status();
    return error_;
  }
  if (result.value()) {
    Status filled = file_copy_reads_.fill(event);
    if (!filled.is_ok() && tolerate_missing_file_copies_) {
      for (MemoryWrite& write : event->writes) {
        write.bytes.clear();
      }
    } else if (!filled.is_ok()) {
      error_ = filled.context(fmt::format("event {}", stream_->events_read() - 1));
      return error_;
    }
    return true;
  }
  if (state_ == TraceState::kComplete) {
    Status status = check_complete_end();
    if (!status.is_ok()) {
      error_ = status;
      return error_;
    }
  }
  ended_ = true;
  return false;
}

// ---------------------------------------------------------------------------

Result<std::unique_ptr<TraceReader>> TraceReader::open(const std::string& dir) {
  auto impl = std::make_unique<Impl>(dir);
  REPRO_RETURN_IF_ERROR(impl->open().context(fmt::format("opening trace '{}'", dir)));
  return std::unique_ptr<TraceReader>(new TraceReader(std::move(impl)));
}

TraceReader::TraceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceReader::~TraceReader() = default;

const TraceHeader& TraceReader::header() const { return impl_->header_; }
TraceState TraceReader::state() const { return impl_->state_; }
Status TraceReader::check_events_size() const {
  if (impl_->state_ != TraceState::kComplete ||
      impl_->source_->size() == impl_->trailer_.events_bytes) {
    return Status::ok();
  }
  const uint64_t size = impl_->source_->size();
  return Status::error(
      StatusCode::kCorruption,
      fmt::format("'{}' is {} bytes, but the trailer of the complete trace says {}: {}",
                  impl_->events_path_, size, impl_->trailer_.events_bytes,
                  size < impl_->trailer_.events_bytes ? "it was cut off" : "bytes were added"));
}

uint64_t TraceReader::trailer_event_count() const {
  return impl_->state_ == TraceState::kComplete ? impl_->trailer_.event_count : 0;
}
Result<bool> TraceReader::next(Event* event) { return impl_->next(event); }
void TraceReader::tolerate_missing_file_copies() { impl_->tolerate_missing_file_copies_ = true; }
uint64_t TraceReader::events_read() const { return impl_->stream_->events_read(); }
uint64_t TraceReader::dropped_bytes() const { return impl_->stream_->dropped_bytes(); }
bool TraceReader::truncated() const { return impl_->stream_->truncated(); }

Result<std::string> TraceReader::file_path(const std::string& content_id) const {
  // The id comes from the trace, and the copy belongs to it: either one
  // wrong is a damaged trace.
  if (!is_valid_content_id(content_id)) {
    return Status::error(
        StatusCode::kCorruption,
        fmt::format("'{}' is not a content id (32 lowercase hex digits)", content_id));
  }
  std::string path = join_path(join_path(impl_->dir_, kFilesDirName), content_id);
  if (!path_exists(path)) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("trace '{}' has no stored file {}", impl_->dir_, content_id));
  }
  return path;
}

const std::string& TraceReader::dir() const { return impl_->dir_; }

}  // namespace repro::format
