#pragma once
// Socket addresses as a syscall's bytes hold them (struct sockaddr_in,
// sockaddr_in6, sockaddr_un), turned into text for reports.

#include <string>
#include <string_view>

namespace repro::analysis {

struct SocketAddress {
  int family = 0;  // AF_*; 0 if the bytes are too short to say
  /// "127.0.0.1:8080", "[::1]:8080", "/run/x.sock", "@abstract", "unnamed";
  /// for other families "family N".
  std::string text;
  /// For AF_UNIX pathname sockets: the path as given (maybe relative).
  std::string unix_path;
};

/// Parses `bytes` (at most the address length the program passed). Never
/// fails: bytes too short for their family give family 0 and text "?".
SocketAddress parse_socket_address(std::string_view bytes);

/// "inet", "inet6", "unix", "netlink", or "family N".
std::string family_name(int family);

}  // namespace repro::analysis
