#include "core/base/env_switch.h"

#include <cstdlib>
#include <cstring>

namespace repro {

bool switched_off(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "off") == 0;
}

}  // namespace repro
