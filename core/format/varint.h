#pragma once
// Byte-level coding helpers for the event encoding: LEB128 varints, zigzag
// for signed values, little-endian fixed-width integers. Header-only so the
// encoder's hot loop inlines them.
//
// Writers take a raw pointer into a buffer the caller has already sized
// (Requires: room for kMaxVarint64Bytes per varint) and return the pointer
// past what they wrote. Readers take [p, end) and return the pointer past
// what they read, or nullptr when the bytes run out or the value is
// malformed; they never read at or beyond `end`. Thread-safe (no state).

#include <cstdint>
#include <cstring>

namespace repro::format {

/// The longest LEB128 encoding of a 64-bit value.
inline constexpr size_t kMaxVarint64Bytes = 10;

inline uint64_t zigzag_encode(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

inline int64_t zigzag_decode(uint64_t value) {
  return static_cast<int64_t>((value >> 1) ^ (~(value & 1) + 1));
}

/// Requires: kMaxVarint64Bytes writable bytes at p.
inline uint8_t* put_varint64(uint8_t* p, uint64_t value) {
  while (value >= 0x80) {
    *p++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<uint8_t>(value);
  return p;
}

/// Number of bytes put_varint64 writes for `value`.
inline size_t varint64_length(uint64_t value) {
  size_t length = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++length;
  }
  return length;
}

/// Reads one varint. Returns nullptr if [p, end) ends inside it or it does
/// not fit in 64 bits (an 11th byte, or a 10th byte above 1).
inline const uint8_t* get_varint64(const uint8_t* p, const uint8_t* end, uint64_t* value) {
  if (p < end && *p < 0x80) {
    *value = *p;
    return p + 1;
  }
  uint64_t result = 0;
  for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
    uint64_t byte = *p++;
    if (shift == 63 && byte > 1) {
      return nullptr;
    }
    result |= (byte & 0x7F) << shift;
    if (byte < 0x80) {
      *value = result;
      return p;
    }
  }
  return nullptr;
}

/// Requires: 4 writable bytes at p.
inline uint8_t* put_fixed32(uint8_t* p, uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    p[i] = static_cast<uint8_t>(value >> (8 * i));
  }
  return p + 4;
}

/// Requires: 8 writable bytes at p.
inline uint8_t* put_fixed64(uint8_t* p, uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    p[i] = static_cast<uint8_t>(value >> (8 * i));
  }
  return p + 8;
}

/// Requires: 4 readable bytes at p.
inline uint32_t load_fixed32(const uint8_t* p) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) {
    value = (value << 8) | p[i];
  }
  return value;
}

/// Requires: 8 readable bytes at p.
inline uint64_t load_fixed64(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | p[i];
  }
  return value;
}

}  // namespace repro::format
