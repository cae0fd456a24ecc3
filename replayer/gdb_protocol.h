#pragma once
// The GDB remote serial protocol's framing: packets are "$payload#xx",
// xx the modulo-256 sum of the payload bytes in hex; '#', '$', '}' and '*'
// inside a payload are escaped as '}' followed by the byte xor 0x20. The
// receiver acknowledges each packet with '+' (or '-' to ask again) until
// both sides agree to stop (QStartNoAckMode). A lone 0x03 byte outside a
// packet is an interrupt (Ctrl-C in gdb).
//
// PacketDecoder is pure (bytes in, packets out) so the framing is unit
// tested without a socket; GdbConnection puts it on a connected socket.
// Neither is thread-safe.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace repro::replayer {

/// "$" + escaped payload + "#" + checksum.
std::string frame_packet(std::string_view payload);
/// The modulo-256 sum of `bytes`.
uint8_t packet_checksum(std::string_view bytes);
/// Undoes the '}' escaping of binary data (X packets, qXfer replies).
std::string unescape_binary(std::string_view escaped);
/// Escapes '#', '$', '}' and '*' for a binary payload.
std::string escape_binary(std::string_view raw);

/// Lowercase hex of `bytes`, two digits a byte.
std::string to_hex(std::string_view bytes);
/// The bytes of an even-length hex string; nullopt if it is not one.
std::optional<std::string> from_hex(std::string_view hex);
/// A hex number ("1f", at most 16 digits); nullopt if it is not one.
std::optional<uint64_t> parse_hex_number(std::string_view hex);

/// Splits a byte stream from gdb into what it means.
class PacketDecoder {
 public:
  struct Item {
    enum class Kind { kPacket, kBadChecksum, kAck, kNack, kInterrupt };
    Kind kind = Kind::kPacket;
    std::string payload;  // kPacket: the payload as sent (binary parts still escaped)
  };
  /// Takes the next bytes received.
  void feed(std::string_view bytes);
  /// The next complete item, if any.
  std::optional<Item> next();

 private:
  void parse();
  std::string buffer_;
  std::deque<Item> items_;
};

/// One gdb connection on a connected stream socket, which it owns.
class GdbConnection {
 public:
  explicit GdbConnection(int fd) : fd_(fd) {}
  ~GdbConnection();
  GdbConnection(const GdbConnection&) = delete;
  GdbConnection& operator=(const GdbConnection&) = delete;

  /// Waits for the next packet (acknowledging it while acks are on).
  /// Interrupts received meanwhile are remembered (take_interrupt).
  /// Returns nullopt when gdb closes the connection; an error if reading fails.
  Result<std::optional<std::string>> read_packet();
  /// Sends one packet and, while acks are on, waits for gdb's '+' (sends
  /// again on '-').
  Status send_packet(std::string_view payload);
  /// Stops acknowledging (after replying OK to QStartNoAckMode).
  void stop_acks() { acks_ = false; }
  /// Without blocking: whether gdb sent an interrupt (0x03) since the last
  /// call. Packets that arrive meanwhile are kept for read_packet.
  bool take_interrupt();
  /// Whether gdb has closed the connection.
  bool closed() const { return closed_; }

 private:
  /// Reads what is available into the decoder; false on end of stream.
  Result<bool> receive(bool block);
  int fd_;
  bool acks_ = true;
  bool interrupted_ = false;
  bool closed_ = false;
  PacketDecoder decoder_;
  std::deque<PacketDecoder::Item> pending_;  // items read while waiting for an ack
};

}  // namespace repro::replayer
