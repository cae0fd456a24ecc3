#include "analysis/memory_text.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include <cstring>

#include "analysis/value_names.h"

namespace repro::analysis {
namespace {

// Copies a struct out of bytes of at least its size.
template <typename T>
bool load(std::string_view bytes, T* out) {
  if (bytes.size() < sizeof(T)) {
    return false;
  }
  std::memcpy(out, bytes.data(), sizeof(T));
  return true;
}

}  // namespace

std::string quoted(std::string_view bytes, size_t limit, bool more) {
  std::string text = "\"";
  size_t shown = std::min(bytes.size(), limit);
  for (size_t i = 0; i < shown; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    switch (c) {
      case '\n':
        text += "\\n";
        break;
      case '\t':
        text += "\\t";
        break;
      case '\r':
        text += "\\r";
        break;
      case '\v':
        text += "\\v";
        break;
      case '\f':
        text += "\\f";
        break;
      case '"':
        text += "\\\"";
        break;
      case '\\':
        text += "\\\\";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          text += static_cast<char>(c);
        } else {
          // Shortest octal, unless a digit follows, which would extend it.
          bool digit_follows = i + 1 < shown && bytes[i + 1] >= '0' && bytes[i + 1] <= '7';
          text += digit_follows ? fmt::format("\\{:03o}", c) : fmt::format("\\{:o}", c);
        }
    }
  }
  text += '"';
  if (more || shown < bytes.size()) {
    text += "...";
  }
  return text;
}

std::optional<std::string_view> written_bytes(const format::Event& event, uint64_t address,
                                              uint64_t length) {
  for (const format::MemoryWrite& write : event.writes) {
    if (address >= write.address && address - write.address <= write.bytes.size() &&
        length <= write.bytes.size() - (address - write.address)) {
      return std::string_view(write.bytes).substr(address - write.address, length);
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> write_at(const format::Event& event, uint64_t address) {
  for (const format::MemoryWrite& write : event.writes) {
    if (write.address == address) {
      return std::string_view(write.bytes);
    }
  }
  return std::nullopt;
}

const std::string* input_of(const format::Event& event, int arg_index) {
  for (const format::SyscallInput& input : event.inputs) {
    if (input.arg_index == arg_index) {
      return &input.bytes;
    }
  }
  return nullptr;
}

std::string stat_text(std::string_view bytes) {
  struct stat st;
  if (!load(bytes, &st)) {
    return "";
  }
  std::string text = "{st_mode=" + mode_text(st.st_mode);
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    text += fmt::format(", st_rdev=makedev({:#x}, {:#x})", major(st.st_rdev), minor(st.st_rdev));
  } else {
    text += fmt::format(", st_size={}", static_cast<int64_t>(st.st_size));
  }
  return text + ", ...}";
}

std::string timespec_text(std::string_view bytes) {
  struct timespec ts;
  if (!load(bytes, &ts)) {
    return "";
  }
  return fmt::format("{{tv_sec={}, tv_nsec={}}}", static_cast<int64_t>(ts.tv_sec),
                     static_cast<int64_t>(ts.tv_nsec));
}

std::string pollfds_text(std::string_view bytes) {
  std::string text = "[";
  for (size_t offset = 0; offset + sizeof(struct pollfd) <= bytes.size();
       offset += sizeof(struct pollfd)) {
    struct pollfd fd;
    (void)load(bytes.substr(offset), &fd);
    text += offset == 0 ? "" : ", ";
    text += fmt::format("{{fd={}, events={}, revents={}}}", fd.fd,
                        poll_events_text(static_cast<uint16_t>(fd.events)),
                        poll_events_text(static_cast<uint16_t>(fd.revents)));
  }
  return text + "]";
}

std::string fd_pair_text(std::string_view bytes) {
  int fds[2];
  if (!load(bytes, &fds)) {
    return "";
  }
  return fmt::format("[{}, {}]", fds[0], fds[1]);
}

std::string sockaddr_text(std::string_view bytes) {
  sa_family_t family;
  if (!load(bytes, &family)) {
    return "";
  }
  std::string head = "{sa_family=" + sock_domain_text(family);
  if (family == AF_UNIX) {
    std::string_view path = bytes.substr(offsetof(struct sockaddr_un, sun_path));
    if (!path.empty() && path[0] == '\0') {  // abstract: the name is every byte after the NUL
      return head + ", sun_path=@" + quoted(path.substr(1), path.size()) + "}";
    }
    path = path.substr(0, path.find('\0'));
    return head + ", sun_path=" + quoted(path, path.size()) + "}";
  }
  if (family == AF_INET) {
    struct sockaddr_in in;
    if (!load(bytes, &in)) {
      return head + ", ...}";
    }
    char address[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &in.sin_addr, address, sizeof address);
    return head + fmt::format(", sin_port=htons({}), sin_addr=inet_addr(\"{}\")}}",
                              ntohs(in.sin_port), address);
  }
  if (family == AF_INET6) {
    struct sockaddr_in6 in6;
    if (!load(bytes, &in6)) {
      return head + ", ...}";
    }
    char address[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, &in6.sin6_addr, address, sizeof address);
    return head + fmt::format(", sin6_port=htons({}), sin6_addr=\"{}\"}}", ntohs(in6.sin6_port),
                              address);
  }
  return head + ", ...}";
}

}  // namespace repro::analysis
