#pragma once
// Content ids of the copies in a trace's files/: XXH3-128 of the content as
// 32 lowercase hex digits, high 64 bits first (XXH128_canonical_t order).
// XXH3 is not cryptographic: it names copies made by our own recorder, it
// does not defend against a hostile file crafted to collide.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace repro::format {

/// The content id of `bytes`. Thread-safe.
std::string content_id_of_bytes(std::string_view bytes);

/// Whether TEXT has the shape of a content id (32 lowercase hex digits), so
/// it is safe to use as a file name. Thread-safe.
bool is_valid_content_id(std::string_view text);

/// Streaming content id for data that arrives in pieces (large files). Not
/// thread-safe.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;

  void update(const void* bytes, size_t length);
  /// The content id of everything passed to update() so far.
  std::string content_id() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace repro::format
