#include "core/base/status.h"

#include <cstring>

namespace repro {

Status Status::from_errno(int errnum, const std::string& what) {
  return Status(StatusCode::kIoError, what + ": " + std::strerror(errnum));
}

Status Status::context(const std::string& what) const {
  if (is_ok()) {
    return *this;
  }
  return Status(code_, what + ": " + message_);
}

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kIoError: return "i/o error";
    case StatusCode::kCorruption: return "corruption";
    case StatusCode::kVersionMismatch: return "version mismatch";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kTraceeDied: return "tracee died";
    case StatusCode::kDivergence: return "divergence";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) {
    return "ok";
  }
  return std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace repro
