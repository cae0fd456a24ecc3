#pragma once
// Copies of parts of files that skip what reads as zeros, for mapped files
// far larger than what they hold (a 1 GiB sparse file, a memfd grown with
// ftruncate): holes are found with SEEK_DATA/SEEK_HOLE and never read, and
// pages of zeros are left as holes in the copy. See kWholeFileLimitBytes.
//
// Stateless functions; thread-compatible.

#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace repro::format {

/// Writes the non-zero pages of bytes [from, to) of `source` (a file of
/// `size_bytes`) into `out`, which must be an empty file; sets `out`'s size
/// to `size_bytes`, so everything else reads as zeros. Returns the content
/// id of the result: XXH3-128 over a prefix naming this kind of copy, the
/// size, and each non-zero page's offset and bytes (a function of the
/// copy's bytes alone, computed without reading holes). Errors: io_error
/// naming `source_path` or `out_path`.
Result<std::string> write_sparse_range(int source, const std::string& source_path,
                                       uint64_t size_bytes, uint64_t from, uint64_t to, int out,
                                       const std::string& out_path);

/// The content id write_sparse_range gave to `copy` (a file of
/// `size_bytes` it wrote), recomputed from the copy alone: the same hash
/// over the non-zero pages of the whole file. Holes are not read. Differs
/// from the name of a copy whose bytes were changed since. Errors: io_error
/// naming `copy_path`.
Result<std::string> sparse_copy_content_id(int copy, const std::string& copy_path,
                                           uint64_t size_bytes);

/// Makes bytes [from, to) of `dest` those of `source` (its size: `size_bytes`)
/// and sets `dest`'s size to `size_bytes`: punches out the range, then copies
/// what is not a hole in `source`. Errors: io_error naming `dest_path`.
Status copy_range_sparse(int source, uint64_t size_bytes, uint64_t from, uint64_t to, int dest,
                         const std::string& dest_path);

}  // namespace repro::format
