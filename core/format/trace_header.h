#pragma once
// TraceHeader: what a trace says about the run as a whole. Stored as JSON in
// the trace directory's `header` file (see docs/trace-format.md).

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace repro::format {

/// The processor the trace was recorded on. cpuid cannot be trapped on the
/// machines we target, so replay compares this with its own CPU.
struct CpuIdentity {
  std::string vendor;       // "GenuineIntel"
  uint32_t family = 0;
  uint32_t model = 0;
  uint32_t stepping = 0;
  std::string features;     // hex of cpuid leaf 1 ecx:edx and leaf 7 ebx:ecx:edx
  bool operator==(const CpuIdentity&) const = default;
};

/// How rdtsc and rdtscp were recorded (docs/recording.md, "rdtsc"):
/// kTrap: they faulted (prctl PR_SET_TSC) and the recorder emulated them;
/// kPatch: the host would not make them fault, so the recorder replaced
/// each one in the code the program loaded by a trap (kRdtscPatch events).
enum class TscMode : uint8_t { kTrap, kPatch };
/// "trap" or "patch".
const char* tsc_mode_name(TscMode mode);

/// How the recorder chose which thread runs (tracer/scheduling_policy.h).
/// Replay needs none of it: it is for the record, and for running the
/// same schedule again (record --chaos --seed).
struct SchedulerSettings {
  std::string policy = "round-robin";  // or "chaos"
  uint32_t depth = 0;                  // chaos: d, for d - 1 change points
  uint32_t expected_points = 0;        // chaos: spread of the change points
  uint32_t base_slice_ms = 0;          // the time slice (chaos: slices in [1, 2 * base))
  /// chaos: the change points and starvation windows left out (numbered in
  /// the order they come; a hunt's shrinking leaves out what the failure
  /// does not need).
  std::vector<uint32_t> skipped_changes;
  std::vector<uint32_t> skipped_starvations;
  bool operator==(const SchedulerSettings&) const = default;
};

/// An environment variable whose value `record --redact-env` left out of
/// the trace (env_redaction.h). The header's `env` holds it as "NAME=".
struct RedactedVariable {
  std::string name;
  uint64_t value_bytes = 0;  // the length of the value the program had
  bool operator==(const RedactedVariable&) const = default;
};

struct TraceHeader {
  uint32_t format_version = 0;  // filled by the writer
  std::string arch = "x86_64";
  CpuIdentity cpu;
  std::string kernel_release;
  /// The CPU the program was pinned to while recorded, or -1 (--no-pin).
  /// cpuid tells a program which core it runs on (its APIC id), and that
  /// cannot be trapped: replay pins itself to the same CPU number.
  int32_t pinned_cpu = -1;
  TscMode tsc_mode = TscMode::kTrap;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  /// The variables of `env` stored without their values, in env's order.
  std::vector<RedactedVariable> redacted_env;
  std::string cwd;
  std::string exe_path;          // the program as resolved at record time
  uint64_t seed = 0;
  SchedulerSettings scheduler;
  uint64_t start_time_ns = 0;    // CLOCK_REALTIME at start
  std::string repro_version;
  bool operator==(const TraceHeader&) const = default;
};

/// Serialises to JSON text.
std::string header_to_json(const TraceHeader& header);
/// Parses JSON text; corruption on malformed input, never throws.
Result<TraceHeader> header_from_json(const std::string& text);
/// Reads only the format_version of a header's JSON text, so a reader can
/// report a version mismatch even when a header of another version has
/// different fields. Corruption if the text is not a repro header.
Result<uint32_t> header_format_version(const std::string& text);

/// The CPU this process runs on (via cpuid).
CpuIdentity current_cpu_identity();

}  // namespace repro::format
