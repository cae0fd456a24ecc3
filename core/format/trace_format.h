#pragma once
// Constants shared by TraceWriter and TraceReader: the on-disk layout of a
// trace directory. docs/trace-format.md is the byte-level spec; changing
// anything here means changing it too and bumping kTraceFormatVersion.
//
// Overview (see the doc for every byte):
//
//   DIR/header      JSON: format_version, arch, cpu, kernel, argv, env, ...
//   DIR/events      concatenated lz4 frames (LZ4F, block and content
//                   checksums, content size); each frame's content is a
//                   16-byte prologue followed by whole encoded events
//   DIR/files/<id>  content-addressed copies; <id> = 32 hex digits of XXH3-128
//   DIR/incomplete  marker while recording (locked by the writer)
//   DIR/complete    the same marker, renamed by finish()
//   DIR/trailer     JSON written by finish(): event_count, events_bytes
//
// A frame decodes alone: the per-field delta state of the event encoding
// starts from zero at every frame, so damage to one frame never spreads.

#include <cstddef>
#include <cstdint>

namespace repro::format {

/// The layout version. Bumped by any change to the files below, to the frame
/// prologue or to the event encoding; readers accept exactly this version.
inline constexpr uint32_t kTraceFormatVersion = 10;

// File and directory names inside a trace directory.
inline constexpr const char kHeaderFileName[] = "header";
inline constexpr const char kEventsFileName[] = "events";
inline constexpr const char kTrailerFileName[] = "trailer";
inline constexpr const char kIncompleteMarkerName[] = "incomplete";
inline constexpr const char kCompleteMarkerName[] = "complete";
inline constexpr const char kFilesDirName[] = "files";
/// Prefix of temp files (".tmp-<name>-<pid>"); never a valid content id, so
/// a leftover temp file from a crash is never mistaken for a stored copy.
inline constexpr const char kTempFilePrefix[] = ".tmp-";

/// Permission bits of what a trace holds. A trace holds everything the
/// program read (file contents, network data, its environment), so only
/// its owner may read it, whatever the umask: directories 0700, metadata
/// and events 0600, copies in files/ 0400 (content-addressed, so never
/// rewritten). A copy hard-linked to a read-only original keeps the
/// original's bits: it is the same inode, and the 0700 directories keep
/// others from reaching it through the trace.
inline constexpr unsigned kTraceDirMode = 0700;
inline constexpr unsigned kTraceFileMode = 0600;
inline constexpr unsigned kStoredCopyMode = 0400;

/// Value of the "magic" field of `header` and `trailer`. Chosen as the
/// tool's name so `head DIR/header` tells a human what the directory is; a
/// header without it is reported as "not a repro trace header".
inline constexpr const char kHeaderMagic[] = "repro-trace";

/// The LZ4 frame magic number, fixed by the LZ4 frame format spec
/// (0x184D2204, stored little-endian as 04 22 4D 18). The reader checks it
/// itself before handing bytes to LZ4F so that garbage after the last frame
/// (and LZ4 skippable frames, which LZ4F would silently skip) is reported as
/// corruption at its byte offset.
inline constexpr uint32_t kLz4FrameMagic = 0x184D2204;

/// First 4 bytes of every frame's decompressed content: "RPEV" read as a
/// little-endian uint32 ('R' = 0x52 is the low byte). Chosen to be readable
/// in a hex dump of decompressed content; a frame whose checksums pass but
/// whose content does not start with it was not written by repro (for
/// example an unrelated .lz4 file concatenated onto `events`).
inline constexpr uint32_t kFrameContentMagic = 0x56455052;

/// Frame content prologue: magic (u32 LE), event count (u32 LE), index of
/// the frame's first event in the whole trace (u64 LE). The first-event
/// index lets the reader detect a dropped, repeated or reordered frame.
inline constexpr size_t kFramePrologueBytes = 16;

/// The writer compresses its buffer once the encoded events reach this many
/// bytes. 256 KiB: big enough that lz4 finds the repetition in syscall-heavy
/// streams (a frame of getppid events compresses to well under 1 byte per
/// event) and the per-frame cost (header, checksums, one write()) is
/// negligible; small enough that a killed recorder loses at most this much
/// of the unflushed tail and the reader's buffer stays small. Symptom of too
/// small: bench/micro shows bytes/event rising; too big: memory per reader.
inline constexpr size_t kFrameRawBytes = 256 * 1024;

/// Largest decompressed frame content the reader accepts. A single event can
/// exceed kFrameRawBytes (a read() of many megabytes records all the bytes
/// the kernel wrote), so frames can be bigger than kFrameRawBytes, but never
/// bigger than this. 256 MiB bounds what a corrupt frame header can make the
/// reader expect; the reader still grows its buffer only as decompressed
/// bytes actually arrive. Symptom of too small: append() refusing a huge
/// event with invalid_argument "event too large".
inline constexpr size_t kMaxFrameRawBytes = 256u * 1024 * 1024;

/// Largest encoded event the writer accepts: whatever leaves room in a
/// maximal frame for the prologue and a full kFrameRawBytes buffer of
/// earlier events.
inline constexpr size_t kMaxEventBytes = kMaxFrameRawBytes - kFrameRawBytes - kFramePrologueBytes;

/// LZ4F block size used by the writer (LZ4F_max64KB): the smallest LZ4F
/// offers, so a damaged block loses the least and the decoder's internal
/// buffer is 64 KiB; lz4's own compression window is 64 KiB anyway.
inline constexpr size_t kLz4BlockBytes = 64 * 1024;

/// Bytes the reader asks its source for at a time when scanning `events`.
/// 1 MiB: several frames of a typical trace per read() call.
inline constexpr size_t kReadChunkBytes = 1024 * 1024;

/// Largest `header` or `trailer` file the reader loads. argv plus env are
/// bounded by the kernel's ARG_MAX (2 MiB by default, up to a quarter of the
/// stack limit), and JSON escaping can grow a byte to 6 or a hex-coded one to
/// 2; 64 MiB leaves room for that while keeping a corrupt or hostile header
/// from exhausting memory. Symptom of too small: a trace of a program run
/// with a huge environment reported as corrupt with "header is ... bytes".
inline constexpr size_t kMaxMetadataFileBytes = 64u * 1024 * 1024;

/// Most bytes one syscall event may take from a file copy
/// (kSyscallReadsFileCopy): the recorder stores a larger read's bytes
/// instead, and the decoder refuses a larger claim, which bounds what a
/// corrupt length makes it allocate. 64 MiB covers the reads programs make
/// (stdio and most tools read 4 KiB to 1 MiB at a time).
inline constexpr size_t kMaxFileCopyReadBytes = 64u * 1024 * 1024;

/// Bytes of each pipe's stream the recorder keeps to match reads against
/// (kSyscallReadsPipe): a read can only refer to the last this many bytes
/// fed to its pipe, so replay keeps at least as many. A pipe holds at most
/// its capacity (64 KiB by default, 1 MiB for unprivileged F_SETPIPE_SZ),
/// so its reader is never further behind than that.
inline constexpr uint64_t kMaxQueuedPipeBytes = 4u * 1024 * 1024;

/// Largest syscall input (Event::inputs) the decoder accepts: the recorder
/// keeps at most a path (PATH_MAX, 4096 bytes) per argument, so anything
/// longer is corruption.
inline constexpr size_t kMaxSyscallInputBytes = 4096;

/// A mapped file larger than this is not stored whole: its copy in files/
/// has the file's size but holds only the non-zero pages of the range the
/// mmap mapped (holes elsewhere), named by a content id of the "sparse
/// range" kind (sparse_copy.h). Replay need not tell the kinds apart: it maps
/// copies at the recorded offset. A file at most this
/// large costs one read of it per mmap (about 20 ms for 64 MiB from the page
/// cache) and is hard-linked or copied whole, so mappings of its parts made
/// by ld.so share one copy. Symptom of too large: recording a program that
/// maps a little of a big file is slow; too small: traces of programs using
/// big libraries grow by a copy of each mapped segment.
inline constexpr uint64_t kWholeFileLimitBytes = 64u * 1024 * 1024;

/// The content id of a mapped-file event whose mmap mapped /dev/zero (an
/// anonymous mapping by another name; nothing is stored). Not a valid content
/// id, so it never names a file in files/.
inline constexpr const char kDevZeroContentId[] = "dev-zero";

/// Length of a content id: XXH3-128 as 32 lowercase hex digits (high 64
/// bits first, i.e. XXH128_canonical_t order).
inline constexpr size_t kContentIdLength = 32;

}  // namespace repro::format
