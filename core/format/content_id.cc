#include "core/format/content_id.h"

#include <xxhash.h>

#include "core/base/check.h"
#include "core/format/trace_format.h"

namespace repro::format {
namespace {

std::string hex_of(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  static const char kDigits[] = "0123456789abcdef";
  std::string id;
  id.reserve(kContentIdLength);
  for (unsigned char c : canonical.digest) {
    id.push_back(kDigits[c >> 4]);
    id.push_back(kDigits[c & 15]);
  }
  return id;
}

}  // namespace

struct ContentHasher::State {
  XXH3_state_t* xxh = nullptr;
};

std::string content_id_of_bytes(std::string_view bytes) {
  return hex_of(XXH3_128bits(bytes.data(), bytes.size()));
}

bool is_valid_content_id(std::string_view text) {
  if (text.size() != kContentIdLength) {
    return false;
  }
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) {
  state_->xxh = XXH3_createState();
  REPRO_CHECK(state_->xxh != nullptr) << "out of memory creating an XXH3 state";
  XXH3_128bits_reset(state_->xxh);
}

ContentHasher::~ContentHasher() { XXH3_freeState(state_->xxh); }

void ContentHasher::update(const void* bytes, size_t length) {
  XXH3_128bits_update(state_->xxh, bytes, length);
}

std::string ContentHasher::content_id() const { return hex_of(XXH3_128bits_digest(state_->xxh)); }

}  // namespace repro::format
