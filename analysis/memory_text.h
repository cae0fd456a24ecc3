#pragma once
// Text for bytes a syscall took or left in memory, as strace shows them:
// strings quoted and escaped (and cut, with "..." after the quote), and
// the fields of the common structs (stat, timespec, pollfd, socket
// addresses, an fd pair).
//
// Pure functions of their arguments: thread-safe. A struct decoder given
// fewer bytes than its struct returns an empty string, and the caller
// shows the address instead.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/format/event.h"

namespace repro::analysis {

/// Bytes of a buffer shown before the rest is cut to "...": strace's
/// default string limit.
inline constexpr size_t kShownBufferBytes = 32;

/// `bytes` quoted and escaped strace's way (\n, \t, \", \\, other
/// non-printable bytes as octal), at most `limit` bytes of it, followed
/// by "..." if it was cut or `more` says the buffer went on.
std::string quoted(std::string_view bytes, size_t limit = kShownBufferBytes, bool more = false);

/// The bytes at [address, address + length) among the event's memory
/// writes, when one write covers them all; nullopt otherwise.
std::optional<std::string_view> written_bytes(const format::Event& event, uint64_t address,
                                              uint64_t length);
/// All the bytes of the write that starts at `address`, if there is one.
std::optional<std::string_view> write_at(const format::Event& event, uint64_t address);
/// The input the event holds for argument `arg_index`, if any.
const std::string* input_of(const format::Event& event, int arg_index);

/// "{st_mode=S_IFREG|0644, st_size=15, ...}" from a struct stat.
std::string stat_text(std::string_view bytes);
/// "{tv_sec=1, tv_nsec=500}" from a struct timespec.
std::string timespec_text(std::string_view bytes);
/// "[{fd=3, events=POLLIN, revents=POLLIN}, ...]" from a pollfd array.
std::string pollfds_text(std::string_view bytes);
/// "[3, 4]" from an int[2].
std::string fd_pair_text(std::string_view bytes);
/// "{sa_family=AF_INET, sin_port=htons(9), sin_addr=inet_addr(\"127.0.0.1\")}",
/// "{sa_family=AF_UNIX, sun_path=\"/tmp/s\"}", ...: from a socket address.
std::string sockaddr_text(std::string_view bytes);

}  // namespace repro::analysis
