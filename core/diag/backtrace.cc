#include "core/diag/backtrace.h"

#include "core/diag/stopped_threads.h"
#include "core/diag/tracee_dwfl.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace repro::diag {
namespace {

// Why libdw unwinds as well as names: libunwind's ptrace unwinder finds
// unwind tables only through /proc/PID/maps, which names no file where
// replay mapped one as anonymous memory. libdw's unwinder reads them from
// whatever modules we report, so one Dwfl serves both jobs.

// "child_leaf()" for "_Z10child_leafv"; C names are left alone.
std::string demangle(const char* name) {
  if (name == nullptr) {
    return "";
  }
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && readable != nullptr ? readable.get() : name;
}

// Names `address` with libdw: function (from debug information or else
// the symbol table), source file and line where known, module path.
void symbolize(Dwfl* dwfl, uint64_t address, Frame* frame) {
  Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
  if (module == nullptr) {
    return;
  }
  frame->function = demangle(dwfl_module_addrname(module, address));
  if (Dwfl_Line* line = dwfl_module_getsrc(module, address); line != nullptr) {
    int line_number = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr)) {
      // Compilers name files relative to where they ran ("../src/a.c");
      // the compilation unit's directory makes that a path one can open.
      std::filesystem::path path(file);
      const char* comp_dir = dwfl_line_comp_dir(line);
      if (path.is_relative() && comp_dir != nullptr && comp_dir[0] == '/') {
        path = (std::filesystem::path(comp_dir) / path).lexically_normal();
      }
      frame->file = path.string();
      frame->line = line_number;
    }
  }
  const char* module_name =
      dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (module_name != nullptr) {
    frame->module = module_name;
  }
}

struct Walk {
  Dwfl* dwfl = nullptr;
  int max_frames = 0;
  std::vector<Frame>* frames = nullptr;
  // The walk starts one frame out (stopped_threads.h): at a return address.
  bool from_return_address = false;
};

int on_frame(Dwfl_Frame* dwfl_frame, void* arg) {
  auto* walk = static_cast<Walk*>(arg);
  Dwarf_Addr pc = 0;
  bool is_activation = false;
  if (!dwfl_frame_pc(dwfl_frame, &pc, &is_activation)) {
    return DWARF_CB_ABORT;
  }
  if (walk->from_return_address && walk->frames->size() == 1) {
    is_activation = false;  // frames[0] is the leaf the walk stepped over
  }
  Frame frame;
  frame.pc = pc;
  // A return address points after the call; name the call itself.
  symbolize(walk->dwfl, is_activation || pc == 0 ? pc : pc - 1, &frame);
  walk->frames->push_back(std::move(frame));
  return static_cast<int>(walk->frames->size()) < walk->max_frames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

// "main at prog.c:12 (/path/prog)", or "" for an address in no module.
std::string describe(const Frame& frame) {
  if (frame.module.empty() && frame.function.empty()) {
    return "";
  }
  std::string text = frame.function.empty() ? "??" : frame.function;
  if (!frame.file.empty()) {
    text += fmt::format(" at {}:{}", frame.file, frame.line);
  }
  if (!frame.module.empty()) {
    text += fmt::format(" ({})", frame.module);
  }
  return text;
}

}  // namespace

std::vector<Unwound> unwind_threads(pid_t pid, const std::vector<pid_t>& tids,
                                    const std::vector<MappedModule>& modules, int max_frames) {
  std::vector<Unwound> unwound(tids.size());
  auto note_all = [&](const std::string& note) {
    for (Unwound& thread : unwound) {
      thread.note = note;
    }
    return unwound;
  };
  std::string dwfl_error;
  std::string maps_error;
  TraceeDwfl dwfl = report_tracee_modules(pid, modules, &dwfl_error, &maps_error);
  if (dwfl == nullptr) {
    return note_all(fmt::format("no backtrace: {}", dwfl_error));
  }
  std::string maps_note;
  if (!maps_error.empty()) {
    // Frames in the executable or ld.so will be missing or unnamed.
    maps_note = fmt::format("reading /proc/{}/maps: {}", pid, maps_error);
  }
  StoppedThreads threads;
  threads.pid = pid;
  threads.tids = tids;
  if (!attach_stopped_threads(dwfl.get(), &threads)) {
    return note_all(fmt::format("no backtrace: libdw cannot attach to pid {}: {}", pid, dwfl_errmsg(-1)));
  }
  for (size_t i = 0; i < tids.size(); ++i) {
    Unwound& thread = unwound[i];
    Walk walk;
    walk.dwfl = dwfl.get();
    walk.max_frames = max_frames;
    walk.frames = &thread.frames;
    int result = dwfl_getthread_frames(dwfl.get(), tids[i], on_frame, &walk);
    if (result == -1 && thread.frames.size() == 1 && max_frames > 1) {
      // Stopped at once: the thread may stand in a leaf without unwind
      // tables. Walk again from the return address on top of its stack.
      std::vector<Frame> frames = {thread.frames.front()};
      Walk outer = walk;
      outer.frames = &frames;
      outer.from_return_address = true;
      threads.from_return_address.insert(tids[i]);
      int outer_result = dwfl_getthread_frames(dwfl.get(), tids[i], on_frame, &outer);
      threads.from_return_address.erase(tids[i]);
      if (frames.size() > 1) {
        thread.frames = std::move(frames);
        result = outer_result;
      }
    }
    // On x86-64 Linux the outermost frame (_start, whose return address the
    // unwind tables mark undefined) ends the walk with 0; -1 means libdw
    // could go no further (no unwind table for a frame, unreadable stack).
    if (result == -1) {
      thread.note = fmt::format("{}: {}", thread.frames.empty() ? "no backtrace" : "unwinding stopped",
                                dwfl_errmsg(-1));
    } else if (static_cast<int>(thread.frames.size()) == max_frames) {
      thread.note = fmt::format("stopped after {} frames", max_frames);
    }
    if (!maps_note.empty()) {
      thread.note = thread.note.empty() ? maps_note : maps_note + "; " + thread.note;
    }
  }
  return unwound;
}

Unwound unwind(pid_t pid, pid_t tid, const std::vector<MappedModule>& modules, int max_frames) {
  return std::move(unwind_threads(pid, {tid}, modules, max_frames).front());
}

std::string backtrace(pid_t pid, pid_t tid, const std::vector<MappedModule>& modules,
                      int max_frames) {
  Unwound unwound = unwind(pid, tid, modules, max_frames);
  std::string text;
  for (size_t i = 0; i < unwound.frames.size(); ++i) {
    std::string name = describe(unwound.frames[i]);
    text += fmt::format("  #{} {:#x}{}{}\n", i, unwound.frames[i].pc, name.empty() ? "" : " ", name);
  }
  if (!unwound.note.empty()) {
    text += fmt::format("  ({})\n", unwound.note);
  }
  return text;
}

}  // namespace repro::diag
