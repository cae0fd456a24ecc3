#include "analysis/socket_address.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

namespace repro::analysis {

SocketAddress parse_socket_address(std::string_view bytes) {
  SocketAddress address;
  if (bytes.size() < sizeof(sa_family_t)) {
    address.text = "?";
    return address;
  }
  sa_family_t family;
  std::memcpy(&family, bytes.data(), sizeof family);
  address.family = family;
  char text[INET6_ADDRSTRLEN] = {};
  if (family == AF_INET && bytes.size() >= sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, bytes.data(), sizeof in);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    address.text = fmt::format("{}:{}", text, ntohs(in.sin_port));
  } else if (family == AF_INET6 && bytes.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6;
    std::memcpy(&in6, bytes.data(), sizeof in6);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    address.text = fmt::format("[{}]:{}", text, ntohs(in6.sin6_port));
  } else if (family == AF_UNIX) {
    std::string_view path = bytes.substr(sizeof(sa_family_t));
    if (path.empty()) {
      address.text = "unnamed";
    } else if (path[0] == '\0') {
      address.text = "@" + std::string(path.substr(1));  // an abstract name
    } else {
      address.unix_path = std::string(path.substr(0, path.find('\0')));
      address.text = address.unix_path;
    }
  } else if (family == AF_INET || family == AF_INET6) {
    address.family = 0;
    address.text = "?";
  } else {
    address.text = family_name(family);
  }
  return address;
}

std::string family_name(int family) {
  switch (family) {
    case AF_INET:
      return "inet";
    case AF_INET6:
      return "inet6";
    case AF_UNIX:
      return "unix";
    case AF_NETLINK:
      return "netlink";
    default:
      return fmt::format("family {}", family);
  }
}

}  // namespace repro::analysis
