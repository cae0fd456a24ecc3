#pragma once
// A capstone handle for x86-64, for the decoders of core/patch.

#include <capstone/capstone.h>

namespace repro::patch {

// A capstone handle for x86-64 with instruction details, opened once per
// thread: cs_open costs far more than decoding an instruction, and the
// recorder decodes a few at every asynchronous signal.
class Capstone {
 public:
  explicit Capstone(bool skip_data, bool detail = true) {
    ok_ = cs_open(CS_ARCH_X86, CS_MODE_64, &handle_) == CS_ERR_OK;
    if (ok_) {
      cs_option(handle_, CS_OPT_DETAIL, detail ? CS_OPT_ON : CS_OPT_OFF);
      if (skip_data) {  // a linear sweep goes on over undecodable bytes
        cs_option(handle_, CS_OPT_SKIPDATA, CS_OPT_ON);
      }
    }
  }
  ~Capstone() {
    if (ok_) {
      cs_close(&handle_);
    }
  }
  Capstone(const Capstone&) = delete;
  Capstone& operator=(const Capstone&) = delete;

  bool ok() const { return ok_; }
  csh handle() const { return handle_; }

 private:
  csh handle_ = 0;
  bool ok_ = false;
};

}  // namespace repro::patch
