#include "core/format/trace_header.h"

#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>

#include "core/format/trace_format.h"
#include "core/format/trace_trailer.h"

namespace repro::format {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above
// U+10FFFF. The same rule nlohmann applies when it serialises strings.
bool is_valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t length = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) {
        lo = 0xA0;
      } else if (c == 0xED) {
        hi = 0x9F;
      }
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) {
        lo = 0x90;
      } else if (c == 0xF4) {
        hi = 0x8F;
      }
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) < length) {
      return false;
    }
    if (p[1] < lo || p[1] > hi) {
      return false;
    }
    for (size_t i = 2; i < length; ++i) {
      if (p[i] < 0x80 || p[i] > 0xBF) {
        return false;
      }
    }
    p += length;
  }
  return true;
}

std::string to_hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

// Byte strings (argv, env, paths) need not be UTF-8, but JSON strings must
// be: valid UTF-8 is stored as a string, anything else as {"hex": "..."}.
OrderedJson bytes_to_json(const std::string& bytes) {
  if (is_valid_utf8(bytes)) {
    return bytes;
  }
  OrderedJson object = OrderedJson::object();
  object["hex"] = to_hex(bytes);
  return object;
}

Status field_error(const std::string& key, const char* what) {
  return Status::error(StatusCode::kCorruption, fmt::format("field '{}' {}", key, what));
}

Result<std::string> bytes_from_json(const Json& value, const std::string& key) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_object() && value.size() == 1 && value.contains("hex") && value["hex"].is_string()) {
    const std::string& hex = value["hex"].get_ref<const std::string&>();
    if (hex.size() % 2 != 0) {
      return field_error(key, "has an odd number of hex digits");
    }
    std::string bytes;
    bytes.reserve(hex.size() / 2);
    for (size_t i = 0; i < hex.size(); i += 2) {
      int high = hex_digit(hex[i]);
      int low = hex_digit(hex[i + 1]);
      if (high < 0 || low < 0) {
        return field_error(key, "has a character that is not a lowercase hex digit");
      }
      bytes.push_back(static_cast<char>(high * 16 + low));
    }
    return bytes;
  }
  return field_error(key, "is not a string or {\"hex\": ...} object");
}

const Json* find_field(const Json& object, const std::string& key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

Status get_bytes(const Json& object, const std::string& key, std::string* out) {
  const Json* value = find_field(object, key);
  if (value == nullptr) {
    return field_error(key, "is missing");
  }
  REPRO_ASSIGN_OR_RETURN(*out, bytes_from_json(*value, key));
  return Status::ok();
}

Status get_u64(const Json& object, const std::string& key, uint64_t* out) {
  const Json* value = find_field(object, key);
  if (value == nullptr) {
    return field_error(key, "is missing");
  }
  if (!value->is_number_unsigned()) {
    return field_error(key, "is not an unsigned integer");
  }
  *out = value->get<uint64_t>();
  return Status::ok();
}

Status get_u32(const Json& object, const std::string& key, uint32_t* out) {
  uint64_t wide = 0;
  REPRO_RETURN_IF_ERROR(get_u64(object, key, &wide));
  if (wide > UINT32_MAX) {
    return field_error(key, "does not fit in 32 bits");
  }
  *out = static_cast<uint32_t>(wide);
  return Status::ok();
}

// An optional CPU number: -1 when absent.
Status get_optional_cpu(const Json& object, const std::string& key, int32_t* out) {
  const Json* value = find_field(object, key);
  *out = -1;
  if (value == nullptr) {
    return Status::ok();
  }
  if (!value->is_number_integer() || value->get<int64_t>() < -1 ||
      value->get<int64_t>() >= CPU_SETSIZE) {
    return field_error(key, "is not a CPU number");
  }
  *out = static_cast<int32_t>(value->get<int64_t>());
  return Status::ok();
}

Status get_bytes_list(const Json& object, const std::string& key, std::vector<std::string>* out) {
  const Json* value = find_field(object, key);
  if (value == nullptr) {
    return field_error(key, "is missing");
  }
  if (!value->is_array()) {
    return field_error(key, "is not an array");
  }
  out->clear();
  out->reserve(value->size());
  for (size_t i = 0; i < value->size(); ++i) {
    REPRO_ASSIGN_OR_RETURN(std::string item,
                           bytes_from_json((*value)[i], fmt::format("{}[{}]", key, i)));
    out->push_back(std::move(item));
  }
  return Status::ok();
}

// The array at `key`: nullptr when absent, an error when not an array.
Result<const Json*> find_optional_array(const Json& object, const std::string& key) {
  const Json* value = find_field(object, key);
  if (value != nullptr && !value->is_array()) {
    return field_error(key, "is not an array");
  }
  return value;
}

// An optional array of 32-bit numbers: empty when absent.
Status get_optional_u32_list(const Json& object, const std::string& key, std::vector<uint32_t>* out) {
  out->clear();
  REPRO_ASSIGN_OR_RETURN(const Json* value, find_optional_array(object, key));
  if (value == nullptr) {
    return Status::ok();
  }
  for (const Json& item : *value) {
    if (!item.is_number_unsigned() || item.get<uint64_t>() > UINT32_MAX) {
      return field_error(key, "holds something other than 32-bit numbers");
    }
    out->push_back(static_cast<uint32_t>(item.get<uint64_t>()));
  }
  return Status::ok();
}

// MAX_ARG_STRLEN of <linux/binfmts.h>: 32 pages of 4096 bytes.
constexpr uint64_t kMaxArgStringBytes = 32 * 4096;

// The optional list of redacted variables: empty when absent.
Status get_redacted_env(const Json& object, std::vector<RedactedVariable>* out) {
  const std::string key = "redacted_env";
  out->clear();
  REPRO_ASSIGN_OR_RETURN(const Json* value, find_optional_array(object, key));
  if (value == nullptr) {
    return Status::ok();
  }
  for (size_t i = 0; i < value->size(); ++i) {
    const Json& item = (*value)[i];
    const std::string item_key = fmt::format("{}[{}]", key, i);
    if (!item.is_object()) {
      return field_error(item_key, "is not an object");
    }
    RedactedVariable variable;
    REPRO_RETURN_IF_ERROR(get_bytes(item, "name", &variable.name).context(item_key));
    REPRO_RETURN_IF_ERROR(get_u64(item, "value_bytes", &variable.value_bytes).context(item_key));
    // The kernel takes no environment string longer than MAX_ARG_STRLEN
    // (32 pages), so a longer value is bad data, never allocated.
    if (variable.value_bytes > kMaxArgStringBytes) {
      return field_error(item_key + ".value_bytes", "is longer than an exec allows");
    }
    out->push_back(std::move(variable));
  }
  return Status::ok();
}

// Parses TEXT as a JSON object carrying our magic. `what` names the file.
Result<Json> parse_object(const std::string& text, const char* what) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const std::exception& e) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("{} is not valid JSON: {}", what, e.what()));
  }
  if (!root.is_object()) {
    return Status::error(StatusCode::kCorruption, fmt::format("{} is not a JSON object", what));
  }
  const Json* magic = find_field(root, "magic");
  if (magic == nullptr || !magic->is_string() || magic->get<std::string>() != kHeaderMagic) {
    return Status::error(
        StatusCode::kCorruption,
        fmt::format("{} lacks \"magic\": \"{}\": not a repro trace {}", what, kHeaderMagic, what));
  }
  return root;
}

Status version_mismatch(uint32_t version) {
  const bool too_new = version > kTraceFormatVersion;
  return Status::error(
      StatusCode::kVersionMismatch,
      fmt::format("trace format version {} is too {}: this repro reads version {} only{}", version,
                  too_new ? "new" : "old", kTraceFormatVersion,
                  too_new ? " (the trace was recorded by a newer repro; use that one)"
                          : " (the trace was recorded by an older repro; replay it with that one "
                            "or record it again)"));
}

Result<TraceHeader> parse_header(const std::string& text, bool check_version) {
  REPRO_ASSIGN_OR_RETURN(Json root, parse_object(text, "header"));
  TraceHeader header;
  REPRO_RETURN_IF_ERROR(get_u32(root, "format_version", &header.format_version));
  if (check_version && header.format_version != kTraceFormatVersion) {
    return version_mismatch(header.format_version);
  }
  REPRO_RETURN_IF_ERROR(get_bytes(root, "arch", &header.arch));
  const Json* cpu = find_field(root, "cpu");
  if (cpu == nullptr || !cpu->is_object()) {
    return field_error("cpu", "is missing or not an object");
  }
  REPRO_RETURN_IF_ERROR(get_bytes(*cpu, "vendor", &header.cpu.vendor).context("cpu"));
  REPRO_RETURN_IF_ERROR(get_u32(*cpu, "family", &header.cpu.family).context("cpu"));
  REPRO_RETURN_IF_ERROR(get_u32(*cpu, "model", &header.cpu.model).context("cpu"));
  REPRO_RETURN_IF_ERROR(get_u32(*cpu, "stepping", &header.cpu.stepping).context("cpu"));
  REPRO_RETURN_IF_ERROR(get_bytes(*cpu, "features", &header.cpu.features).context("cpu"));
  REPRO_RETURN_IF_ERROR(get_bytes(root, "kernel_release", &header.kernel_release));
  REPRO_RETURN_IF_ERROR(get_optional_cpu(root, "pinned_cpu", &header.pinned_cpu));
  std::string tsc_mode;
  REPRO_RETURN_IF_ERROR(get_bytes(root, "tsc_mode", &tsc_mode));
  if (tsc_mode == tsc_mode_name(TscMode::kTrap)) {
    header.tsc_mode = TscMode::kTrap;
  } else if (tsc_mode == tsc_mode_name(TscMode::kPatch)) {
    header.tsc_mode = TscMode::kPatch;
  } else {
    return field_error("tsc_mode", "is neither \"trap\" nor \"patch\"");
  }
  REPRO_RETURN_IF_ERROR(get_bytes_list(root, "argv", &header.argv));
  REPRO_RETURN_IF_ERROR(get_bytes_list(root, "env", &header.env));
  REPRO_RETURN_IF_ERROR(get_redacted_env(root, &header.redacted_env));
  REPRO_RETURN_IF_ERROR(get_bytes(root, "cwd", &header.cwd));
  REPRO_RETURN_IF_ERROR(get_bytes(root, "exe_path", &header.exe_path));
  REPRO_RETURN_IF_ERROR(get_u64(root, "seed", &header.seed));
  if (const Json* scheduler = find_field(root, "scheduler"); scheduler != nullptr) {
    if (!scheduler->is_object()) {
      return field_error("scheduler", "is not an object");
    }
    SchedulerSettings& s = header.scheduler;
    REPRO_RETURN_IF_ERROR(get_bytes(*scheduler, "policy", &s.policy).context("scheduler"));
    REPRO_RETURN_IF_ERROR(get_u32(*scheduler, "depth", &s.depth).context("scheduler"));
    REPRO_RETURN_IF_ERROR(
        get_u32(*scheduler, "expected_points", &s.expected_points).context("scheduler"));
    REPRO_RETURN_IF_ERROR(
        get_u32(*scheduler, "base_slice_ms", &s.base_slice_ms).context("scheduler"));
    REPRO_RETURN_IF_ERROR(get_optional_u32_list(*scheduler, "skipped_changes", &s.skipped_changes)
                              .context("scheduler"));
    REPRO_RETURN_IF_ERROR(
        get_optional_u32_list(*scheduler, "skipped_starvations", &s.skipped_starvations)
            .context("scheduler"));
  }
  REPRO_RETURN_IF_ERROR(get_u64(root, "start_time_ns", &header.start_time_ns));
  REPRO_RETURN_IF_ERROR(get_bytes(root, "repro_version", &header.repro_version));
  return header;
}

}  // namespace

const char* tsc_mode_name(TscMode mode) { return mode == TscMode::kPatch ? "patch" : "trap"; }

std::string header_to_json(const TraceHeader& header) {
  OrderedJson root = OrderedJson::object();
  root["magic"] = kHeaderMagic;
  root["format_version"] = header.format_version;
  root["arch"] = bytes_to_json(header.arch);
  OrderedJson cpu = OrderedJson::object();
  cpu["vendor"] = bytes_to_json(header.cpu.vendor);
  cpu["family"] = header.cpu.family;
  cpu["model"] = header.cpu.model;
  cpu["stepping"] = header.cpu.stepping;
  cpu["features"] = bytes_to_json(header.cpu.features);
  root["cpu"] = std::move(cpu);
  root["kernel_release"] = bytes_to_json(header.kernel_release);
  root["pinned_cpu"] = header.pinned_cpu;
  root["tsc_mode"] = tsc_mode_name(header.tsc_mode);
  OrderedJson argv = OrderedJson::array();
  for (const std::string& arg : header.argv) {
    argv.push_back(bytes_to_json(arg));
  }
  root["argv"] = std::move(argv);
  OrderedJson env = OrderedJson::array();
  for (const std::string& var : header.env) {
    env.push_back(bytes_to_json(var));
  }
  root["env"] = std::move(env);
  if (!header.redacted_env.empty()) {
    OrderedJson redacted = OrderedJson::array();
    for (const RedactedVariable& variable : header.redacted_env) {
      OrderedJson item = OrderedJson::object();
      item["name"] = bytes_to_json(variable.name);
      item["value_bytes"] = variable.value_bytes;
      redacted.push_back(std::move(item));
    }
    root["redacted_env"] = std::move(redacted);
  }
  root["cwd"] = bytes_to_json(header.cwd);
  root["exe_path"] = bytes_to_json(header.exe_path);
  root["seed"] = header.seed;
  OrderedJson scheduler = OrderedJson::object();
  scheduler["policy"] = bytes_to_json(header.scheduler.policy);
  scheduler["depth"] = header.scheduler.depth;
  scheduler["expected_points"] = header.scheduler.expected_points;
  scheduler["base_slice_ms"] = header.scheduler.base_slice_ms;
  if (!header.scheduler.skipped_changes.empty()) {
    scheduler["skipped_changes"] = header.scheduler.skipped_changes;
  }
  if (!header.scheduler.skipped_starvations.empty()) {
    scheduler["skipped_starvations"] = header.scheduler.skipped_starvations;
  }
  root["scheduler"] = std::move(scheduler);
  root["start_time_ns"] = header.start_time_ns;
  root["repro_version"] = bytes_to_json(header.repro_version);
  // Every string is valid UTF-8 by construction (bytes_to_json), so the
  // replace handler never fires; it only guarantees dump() cannot throw.
  return root.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

Result<TraceHeader> header_from_json(const std::string& text) {
  try {
    return parse_header(text, /*check_version=*/false);
  } catch (const std::exception& e) {
    return Status::error(StatusCode::kCorruption, fmt::format("header: {}", e.what()));
  }
}

Result<TraceHeader> header_from_json_checked(const std::string& text) {
  try {
    return parse_header(text, /*check_version=*/true);
  } catch (const std::exception& e) {
    return Status::error(StatusCode::kCorruption, fmt::format("header: {}", e.what()));
  }
}

Result<uint32_t> header_format_version(const std::string& text) {
  try {
    REPRO_ASSIGN_OR_RETURN(Json root, parse_object(text, "header"));
    uint32_t version = 0;
    REPRO_RETURN_IF_ERROR(get_u32(root, "format_version", &version).context("header"));
    return version;
  } catch (const std::exception& e) {
    return Status::error(StatusCode::kCorruption, fmt::format("header: {}", e.what()));
  }
}

std::string trailer_to_json(const TraceTrailer& trailer) {
  OrderedJson root = OrderedJson::object();
  root["magic"] = kHeaderMagic;
  root["format_version"] = kTraceFormatVersion;
  root["event_count"] = trailer.event_count;
  root["events_bytes"] = trailer.events_bytes;
  return root.dump(2) + "\n";
}

Result<TraceTrailer> trailer_from_json(const std::string& text) {
  try {
    REPRO_ASSIGN_OR_RETURN(Json root, parse_object(text, "trailer"));
    uint32_t version = 0;
    REPRO_RETURN_IF_ERROR(get_u32(root, "format_version", &version).context("trailer"));
    if (version != kTraceFormatVersion) {
      return Status::error(
          StatusCode::kCorruption,
          fmt::format("trailer has format version {}, expected {}", version, kTraceFormatVersion));
    }
    TraceTrailer trailer;
    REPRO_RETURN_IF_ERROR(get_u64(root, "event_count", &trailer.event_count).context("trailer"));
    REPRO_RETURN_IF_ERROR(get_u64(root, "events_bytes", &trailer.events_bytes).context("trailer"));
    return trailer;
  } catch (const std::exception& e) {
    return Status::error(StatusCode::kCorruption, fmt::format("trailer: {}", e.what()));
  }
}

CpuIdentity current_cpu_identity() {
  CpuIdentity identity;
#if defined(__x86_64__) || defined(__i386__)
  unsigned int eax = 0;
  unsigned int ebx = 0;
  unsigned int ecx = 0;
  unsigned int edx = 0;
  unsigned int max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf == 0 || !__get_cpuid(0, &eax, &ebx, &ecx, &edx)) {
    return identity;
  }
  char vendor[13];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  vendor[12] = '\0';
  identity.vendor.assign(vendor, 12);
  unsigned int leaf1_ecx = 0;
  unsigned int leaf1_edx = 0;
  if (max_leaf >= 1 && __get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    uint32_t base_family = (eax >> 8) & 0xF;
    uint32_t base_model = (eax >> 4) & 0xF;
    identity.stepping = eax & 0xF;
    identity.family = base_family;
    identity.model = base_model;
    if (base_family == 0xF) {
      identity.family += (eax >> 20) & 0xFF;
    }
    if (base_family == 0x6 || base_family == 0xF) {
      identity.model += ((eax >> 16) & 0xF) << 4;
    }
    leaf1_ecx = ecx;
    leaf1_edx = edx;
  }
  unsigned int leaf7_ebx = 0;
  unsigned int leaf7_ecx = 0;
  unsigned int leaf7_edx = 0;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, eax, leaf7_ebx, leaf7_ecx, leaf7_edx);
  }
  // Leaf 1 ebx (APIC id, CLFLUSH size) is left out: it differs per core.
  identity.features = fmt::format("{:08x}:{:08x}:{:08x}:{:08x}:{:08x}", leaf1_ecx, leaf1_edx,
                                  leaf7_ebx, leaf7_ecx, leaf7_edx);
#endif
  return identity;
}

}  // namespace repro::format
