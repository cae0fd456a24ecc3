#include "replayer/gdb_protocol.h"

#include <errno.h>
#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace repro::replayer {

namespace {

bool needs_escape(char c) { return c == '#' || c == '$' || c == '}' || c == '*'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace

uint8_t packet_checksum(std::string_view bytes) {
  uint8_t sum = 0;
  for (char c : bytes) {
    sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(c));
  }
  return sum;
}

std::string escape_binary(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (needs_escape(c)) {
      out += '}';
      out += static_cast<char>(c ^ 0x20);
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_binary(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '}' && i + 1 < escaped.size()) {
      out += static_cast<char>(escaped[++i] ^ 0x20);
    } else {
      out += escaped[i];
    }
  }
  return out;
}

std::string frame_packet(std::string_view payload) {
  std::string body = escape_binary(payload);
  return fmt::format("${}#{:02x}", body, packet_checksum(body));
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    auto byte = static_cast<uint8_t>(c);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xf];
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = hex_digit(hex[i]);
    int low = hex_digit(hex[i + 1]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    out += static_cast<char>(high << 4 | low);
  }
  return out;
}

std::optional<uint64_t> parse_hex_number(std::string_view hex) {
  if (hex.empty() || hex.size() > 16) {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (char c : hex) {
    int digit = hex_digit(c);
    if (digit < 0) {
      return std::nullopt;
    }
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

void PacketDecoder::feed(std::string_view bytes) {
  buffer_.append(bytes);
  parse();
}

std::optional<PacketDecoder::Item> PacketDecoder::next() {
  if (items_.empty()) {
    return std::nullopt;
  }
  Item item = std::move(items_.front());
  items_.pop_front();
  return item;
}

void PacketDecoder::parse() {
  size_t i = 0;
  while (i < buffer_.size()) {
    char c = buffer_[i];
    if (c == '+' || c == '-' || c == '\x03') {
      Item item;
      item.kind = c == '+' ? Item::Kind::kAck
                  : c == '-' ? Item::Kind::kNack
                             : Item::Kind::kInterrupt;
      items_.push_back(item);
      ++i;
      continue;
    }
    if (c != '$') {
      ++i;  // noise between packets (a stray newline): the protocol ignores it
      continue;
    }
    size_t hash = buffer_.find('#', i + 1);
    if (hash == std::string::npos || hash + 2 >= buffer_.size()) {
      break;  // the rest of this packet is still to come
    }
    std::string_view body(buffer_.data() + i + 1, hash - i - 1);
    auto sent = parse_hex_number(std::string_view(buffer_.data() + hash + 1, 2));
    Item item;
    if (sent && *sent == packet_checksum(body)) {
      item.payload = std::string(body);  // binary payloads (X) are unescaped by their reader
    } else {
      item.kind = Item::Kind::kBadChecksum;
    }
    items_.push_back(std::move(item));
    i = hash + 3;
  }
  buffer_.erase(0, i);
}

GdbConnection::~GdbConnection() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

Result<bool> GdbConnection::receive(bool block) {
  if (!block) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) {
      return true;
    }
  }
  char buffer[4096];
  while (true) {
    ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      if (errno == ECONNRESET) {
        closed_ = true;
        return false;
      }
      return Status::from_errno(errno, "reading from gdb");
    }
    if (n == 0) {
      closed_ = true;
      return false;
    }
    decoder_.feed(std::string_view(buffer, static_cast<size_t>(n)));
    return true;
  }
}

Result<std::optional<std::string>> GdbConnection::read_packet() {
  while (true) {
    std::optional<PacketDecoder::Item> item;
    if (!pending_.empty()) {
      item = std::move(pending_.front());
      pending_.pop_front();
    } else {
      item = decoder_.next();
    }
    if (!item) {
      REPRO_ASSIGN_OR_RETURN(bool open, receive(true));
      if (!open) {
        return std::optional<std::string>();
      }
      continue;
    }
    switch (item->kind) {
      case PacketDecoder::Item::Kind::kInterrupt:
        interrupted_ = true;
        break;
      case PacketDecoder::Item::Kind::kBadChecksum:
        if (acks_) {
          REPRO_RETURN_IF_ERROR(send(fd_, "-", 1, MSG_NOSIGNAL) == 1
                                    ? Status::ok()
                                    : Status::from_errno(errno, "writing to gdb"));
        }
        break;
      case PacketDecoder::Item::Kind::kPacket:
        if (acks_ && send(fd_, "+", 1, MSG_NOSIGNAL) != 1) {
          return Status::from_errno(errno, "writing to gdb");
        }
        return std::optional<std::string>(std::move(item->payload));
      default:
        break;  // a late ack
    }
  }
}

Status GdbConnection::send_packet(std::string_view payload) {
  std::string framed = frame_packet(payload);
  // How often a packet is sent again when gdb asks for it: a link that
  // garbles this many in a row is not one to debug over.
  constexpr int kMaxAttempts = 10;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    size_t sent = 0;
    while (sent < framed.size()) {
      ssize_t n = send(fd_, framed.data() + sent, framed.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        closed_ = closed_ || errno == EPIPE || errno == ECONNRESET;
        return Status::from_errno(errno, "writing to gdb");
      }
      sent += static_cast<size_t>(n);
    }
    if (!acks_) {
      return Status::ok();
    }
    while (true) {
      std::optional<PacketDecoder::Item> item = decoder_.next();
      if (!item) {
        REPRO_ASSIGN_OR_RETURN(bool open, receive(true));
        if (!open) {
          return Status::error(StatusCode::kIoError, "gdb closed the connection");
        }
        continue;
      }
      if (item->kind == PacketDecoder::Item::Kind::kAck) {
        return Status::ok();
      }
      if (item->kind == PacketDecoder::Item::Kind::kNack) {
        break;  // send it again
      }
      if (item->kind == PacketDecoder::Item::Kind::kInterrupt) {
        interrupted_ = true;
      } else {
        pending_.push_back(std::move(*item));
      }
    }
  }
  return Status::error(StatusCode::kIoError, "gdb kept rejecting a packet");
}

bool GdbConnection::take_interrupt() {
  if (receive(false).is_ok()) {
    while (std::optional<PacketDecoder::Item> item = decoder_.next()) {
      if (item->kind == PacketDecoder::Item::Kind::kInterrupt) {
        interrupted_ = true;
      } else {
        pending_.push_back(std::move(*item));
      }
    }
  }
  bool was = interrupted_;
  interrupted_ = false;
  return was;
}

}  // namespace repro::replayer
