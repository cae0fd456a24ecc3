#pragma once
// Environment variables whose values stay out of a trace (record
// --redact-env), and what replay gives the program in their place.
//
// Why values are replaced by filler of the same length rather than by
// nothing: the kernel copies the environment onto the new program's stack,
// so the length of every value decides the address of everything below it,
// and every stack address the program later passes to a syscall. A shorter
// value would make replay diverge at the program's first such syscall (the
// dynamic loader's, within the first dozen events). With filler of the
// recorded length the stack keeps its recorded layout, and only a program
// whose run depended on a redacted value diverges. The header keeps each
// value's length, never its bytes.
//
// Stateless functions; thread-safe.

#include <regex>
#include <string>
#include <vector>

#include "core/format/trace_header.h"

namespace repro::format {

/// What replay puts in each byte of a redacted value.
inline constexpr char kRedactedValueFiller = '*';

/// The environment as a trace's header stores it: `env` ("NAME=VALUE"
/// entries) with the value of each variable whose NAME one of `patterns`
/// matches (std::regex_search: anywhere in the name unless anchored) made
/// empty, and *redacted set to those variables, in env's order. An entry
/// without '=' has no value and is kept as it is.
std::vector<std::string> redact_environment(const std::vector<std::string>& env,
                                            const std::vector<std::regex>& patterns,
                                            std::vector<RedactedVariable>* redacted);

/// The environment replay gives the program: `stored_env` (a header's env)
/// with each variable of `redacted`, in order, given kRedactedValueFiller
/// bytes as long as its recorded value. Entries that do not match are left
/// as they are.
std::vector<std::string> environment_for_replay(const std::vector<std::string>& stored_env,
                                                const std::vector<RedactedVariable>& redacted);

}  // namespace repro::format
