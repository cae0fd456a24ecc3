#include "replayer/gdb_protocol.h"

#include <fmt/core.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "replayer/gdb_registers.h"

namespace repro::replayer {
namespace {

std::vector<PacketDecoder::Item> decode_all(PacketDecoder& decoder) {
  std::vector<PacketDecoder::Item> items;
  while (auto item = decoder.next()) {
    items.push_back(*item);
  }
  return items;
}

TEST_CASE("frame_packet adds the modulo-256 checksum in hex", "[gdb_protocol]") {
  CHECK(frame_packet("OK") == "$OK#9a");
  CHECK(frame_packet("") == "$#00");
  // 'g' is 0x67.
  CHECK(frame_packet("g") == "$g#67");
}

TEST_CASE("frame_packet escapes the protocol's special bytes", "[gdb_protocol]") {
  // '}' then the byte xor 0x20; the checksum covers the escaped bytes.
  std::string framed = frame_packet(std::string("a#b$c}d*", 8));
  CHECK(framed.substr(0, framed.size() - 3) == "$a}\x03" "b}\x04" "c}]d}\x0a");
  std::string body = framed.substr(1, framed.size() - 4);
  CHECK(framed.substr(framed.size() - 2) == fmt::format("{:02x}", packet_checksum(body)));
  CHECK(unescape_binary(body) == "a#b$c}d*");
}

TEST_CASE("PacketDecoder splits acks, interrupts and packets", "[gdb_protocol]") {
  PacketDecoder decoder;
  decoder.feed("+$qSupported:multiprocess+#c6\x03-");
  auto items = decode_all(decoder);
  REQUIRE(items.size() == 4);
  CHECK(items[0].kind == PacketDecoder::Item::Kind::kAck);
  CHECK(items[1].kind == PacketDecoder::Item::Kind::kPacket);
  CHECK(items[1].payload == "qSupported:multiprocess+");
  CHECK(items[2].kind == PacketDecoder::Item::Kind::kInterrupt);
  CHECK(items[3].kind == PacketDecoder::Item::Kind::kNack);
}

TEST_CASE("PacketDecoder waits for a packet split across reads", "[gdb_protocol]") {
  PacketDecoder decoder;
  decoder.feed("$m4015bc,");
  CHECK_FALSE(decoder.next());
  decoder.feed("2#");
  CHECK_FALSE(decoder.next());  // the checksum is still to come
  decoder.feed("5");
  CHECK_FALSE(decoder.next());
  decoder.feed("a");
  auto item = decoder.next();
  REQUIRE(item);
  CHECK(item->kind == PacketDecoder::Item::Kind::kPacket);
  CHECK(item->payload == "m4015bc,2");
  CHECK(frame_packet("m4015bc,2") == "$m4015bc,2#5a");
}

TEST_CASE("PacketDecoder reports a bad checksum", "[gdb_protocol]") {
  PacketDecoder decoder;
  decoder.feed("$OK#00$OK#9a");
  auto items = decode_all(decoder);
  REQUIRE(items.size() == 2);
  CHECK(items[0].kind == PacketDecoder::Item::Kind::kBadChecksum);
  CHECK(items[1].kind == PacketDecoder::Item::Kind::kPacket);
  CHECK(items[1].payload == "OK");
}

TEST_CASE("PacketDecoder keeps a binary payload's escapes for its reader", "[gdb_protocol]") {
  PacketDecoder decoder;
  // As gdb sends it: the data escaped once, inside an unescaped packet.
  std::string body = "X10,2:}]}\x03";
  decoder.feed(fmt::format("${}#{:02x}", body, packet_checksum(body)));
  auto item = decoder.next();
  REQUIRE(item);
  CHECK(item->payload == body);
  CHECK(unescape_binary(item->payload.substr(6)) == "}#");
}

TEST_CASE("hex helpers", "[gdb_protocol]") {
  CHECK(to_hex(std::string("\x00\x7f\xff", 3)) == "007fff");
  CHECK(from_hex("007FfF") == std::string("\x00\x7f\xff", 3));
  CHECK_FALSE(from_hex("abc"));
  CHECK_FALSE(from_hex("zz"));
  CHECK(parse_hex_number("7ffff7fe4b70") == 0x7ffff7fe4b70);
  CHECK_FALSE(parse_hex_number(""));
  CHECK_FALSE(parse_hex_number("12345678901234567"));
  CHECK_FALSE(parse_hex_number("-1"));
}

TEST_CASE("gdb's register layout round-trips ptrace's registers", "[gdb_registers]") {
  GdbRegisterState state;
  state.general.rax = 0x1122334455667788;
  state.general.rip = 0x401000;
  state.general.eflags = 0x246;
  state.general.cs = 0x33;
  state.general.fs_base = 0x7ffff7d8a740;
  state.general.orig_rax = static_cast<unsigned long long>(-1);
  state.fpu.cwd = 0x37f;
  state.fpu.ftw = 0x01;  // st0 in use
  state.fpu.mxcsr = 0x1f80;
  state.fpu.xmm_space[4] = 0xdeadbeef;  // xmm1's low word
  std::string layout = to_gdb_layout(state);
  CHECK(layout.size() == 560);
  auto rip = gdb_register_slot(16);
  REQUIRE(rip);
  CHECK(rip->first == 128);
  CHECK(layout.substr(rip->first, rip->second) == std::string("\x00\x10\x40\x00\x00\x00\x00\x00", 8));
  auto ftag = gdb_register_slot(34);
  REQUIRE(ftag);
  CHECK(layout.substr(ftag->first, ftag->second) == std::string("\xfc\xff\x00\x00", 4));
  auto xmm1 = gdb_register_slot(41);
  REQUIRE(xmm1);
  CHECK(layout.substr(xmm1->first, 4) == "\xef\xbe\xad\xde");
  CHECK_FALSE(gdb_register_slot(kGdbRegisterCount));

  GdbRegisterState back;
  REQUIRE(from_gdb_layout(layout, &back));
  CHECK(back.general.rax == state.general.rax);
  CHECK(back.general.eflags == 0x246);
  CHECK(back.general.fs_base == state.general.fs_base);
  CHECK(back.general.orig_rax == state.general.orig_rax);
  CHECK(back.fpu.ftw == 0x01);
  CHECK(back.fpu.xmm_space[4] == 0xdeadbeef);
  CHECK(to_gdb_layout(back) == layout);
  CHECK_FALSE(from_gdb_layout(layout.substr(1), &back));
}

TEST_CASE("the target description names gdb's x86-64 features", "[gdb_registers]") {
  const std::string& xml = gdb_target_description();
  CHECK(xml.find("<architecture>i386:x86-64</architecture>") != std::string::npos);
  for (const char* feature : {"org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse",
                              "org.gnu.gdb.i386.linux", "org.gnu.gdb.i386.segments"}) {
    CHECK(xml.find(feature) != std::string::npos);
  }
  CHECK(xml.find("name=\"gs_base\" bitsize=\"64\" type=\"int\" regnum=\"59\"") != std::string::npos);
}

}  // namespace
}  // namespace repro::replayer
