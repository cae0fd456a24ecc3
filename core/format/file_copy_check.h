#pragma once
// Checks a copy in a trace's files/ against its name, its content id.
//
// Why: replay maps and executes these copies as the program's own code and
// data, so a copy damaged on disk (a flipped bit, a cut-off transfer, an
// emptied file) would replay the program with wrong bytes, and nothing else
// in the trace notices: the events and the header carry checksums of their
// own, the copies only their names. The id is recomputed the way the writer
// made it (trace_writer.cc): XXH3-128 of the bytes for a whole copy, the
// sparse-range id (sparse_copy.h) for a copy of part of a file over
// kWholeFileLimitBytes; a copy is intact if either matches.
//
// Stateless; thread-safe. Cost: one read of the copy (holes of a sparse
// copy over the limit are not read when its sparse id matches).

#include <string>

#include "core/base/status.h"

namespace repro::format {

/// Whether the copy at `path` holds the content that `content_id` names.
/// Returns ok if it does; corruption if it does not (the message names
/// `path` and the id its bytes have), or if `path` is not a regular file;
/// not_found if there is no such file; io_error if it cannot be read.
Status check_file_copy(const std::string& path, const std::string& content_id);

}  // namespace repro::format
