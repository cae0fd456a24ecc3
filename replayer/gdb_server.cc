#include "replayer/gdb_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/format/event.h"
#include "core/format/trace_reader.h"
#include "core/os/memory_hash.h"

namespace repro::replayer {

namespace {

// Largest packet gdb may send us (qSupported's PacketSize): room for a G
// packet (560 register bytes, 1120 hex digits) and big memory writes.
constexpr size_t kPacketSize = 0x4000;
// How many watched instructions pass between two looks for gdb's
// interrupt (Ctrl-C): rare enough to cost nothing next to the ptrace stop
// of each, often enough that gdb answers within a blink.
constexpr uint64_t kStepsPerInterruptPoll = 4096;
// Longest watchpoint: a page; gdb splits bigger regions itself.
constexpr uint64_t kMaxWatchBytes = 4096;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) {
    parts.push_back(part);
  }
  if (!text.empty() && text.back() == separator) {
    parts.emplace_back();
  }
  return parts;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// "ADDR,LENGTH" (both hex).
std::optional<std::pair<uint64_t, uint64_t>> address_and_length(const std::string& text) {
  size_t comma = text.find(',');
  if (comma == std::string::npos) {
    return std::nullopt;
  }
  auto address = parse_hex_number(text.substr(0, comma));
  auto length = parse_hex_number(text.substr(comma + 1));
  if (!address || !length) {
    return std::nullopt;
  }
  return std::make_pair(*address, *length);
}

// A gdb thread id: hex, or -1 (all).
std::optional<int64_t> parse_thread_id(const std::string& text) {
  if (text == "-1") {
    return -1;
  }
  auto id = parse_hex_number(text);
  if (!id) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*id);
}

std::string output_packet(const std::string& text) { return "O" + to_hex(text); }

}  // namespace

Result<std::unique_ptr<GdbServer>> GdbServer::listen(const GdbServerOptions& options) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(options.port);
  if (inet_pton(AF_INET, options.address.c_str(), &address.sin_addr) != 1) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("'{}' is not an IPv4 address to listen on", options.address));
  }
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return Status::from_errno(errno, "creating the gdb server's socket");
  }
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return Status::from_errno(
        errno, fmt::format("listening for gdb on {}:{}", options.address, options.port));
  }
  if (::listen(fd.get(), 1) != 0) {
    return Status::from_errno(errno, "listening for gdb");
  }
  socklen_t size = sizeof address;
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    return Status::from_errno(errno, "reading the gdb server's port");
  }
  return std::unique_ptr<GdbServer>(new GdbServer(std::move(fd), ntohs(address.sin_port)));
}

Result<std::string> GdbServer::program_file(const std::string& trace_dir) {
  REPRO_ASSIGN_OR_RETURN(auto reader, format::TraceReader::open(trace_dir));
  format::Event event;
  for (int i = 0; i < 2; ++i) {
    REPRO_ASSIGN_OR_RETURN(bool more, reader->next(&event));
    if (!more) {
      break;
    }
    if (event.kind == format::EventKind::kExec) {
      return reader->file_path(event.content_id);
    }
  }
  return Status::error(StatusCode::kCorruption,
                       fmt::format("trace '{}' does not start with a program start", trace_dir));
}

// ---------------------------------------------------------------------------
// Threads

int64_t GdbServer::gdb_id(const ReplayThread& t) const {
  return t.recorded_tid > 0 ? t.recorded_tid : static_cast<int64_t>(t.index) + 1;
}

bool GdbServer::watched_process(const ReplayThread& t) const {
  return session_ != nullptr && t.pid == session_->root_pid();
}

const ReplayThread* GdbServer::thread_by_gdb_id(int64_t id) const {
  const auto& threads = session_->threads();
  if (id <= 0) {
    auto it = threads.find(stop_.thread);
    return it == threads.end() || it->second.where == ReplayThread::Where::kGone ? nullptr
                                                                                  : &it->second;
  }
  for (const auto& [index, t] : threads) {
    if (t.where != ReplayThread::Where::kGone && watched_process(t) && gdb_id(t) == id) {
      return &t;
    }
  }
  return nullptr;
}

std::optional<uint32_t> GdbServer::thread_between_events() const {
  const auto& threads = session_->threads();
  auto last = threads.find(session_->last_event_thread());
  if (last != threads.end() && last->second.where != ReplayThread::Where::kGone &&
      watched_process(last->second)) {
    return last->first;
  }
  for (const auto& [index, t] : threads) {
    if (t.where != ReplayThread::Where::kGone && watched_process(t)) {
      return index;
    }
  }
  return std::nullopt;
}

pid_t GdbServer::memory_tid() const {
  if (const ReplayThread* t = thread_by_gdb_id(general_thread_)) {
    return t->tid;
  }
  for (const auto& [index, t] : session_->threads()) {
    if (t.where != ReplayThread::Where::kGone && watched_process(t)) {
      return t.tid;
    }
  }
  return session_->root_pid();
}

std::string GdbServer::thread_list() const {
  std::string list;
  for (const auto& [index, t] : session_->threads()) {
    if (t.where != ReplayThread::Where::kGone && watched_process(t)) {
      list += fmt::format("{}{:x}", list.empty() ? "m" : ",", gdb_id(t));
    }
  }
  return list.empty() ? "l" : list;
}

// ---------------------------------------------------------------------------
// Watching the replay

bool GdbServer::wants_instruction_steps(const ReplayThread& t) {
  return !detached_ && watched_process(t) &&
         (step_pending_ || !breakpoints_.empty() || !watchpoints_.empty());
}

std::optional<uint64_t> GdbServer::changed_watchpoint(pid_t tid) {
  std::optional<uint64_t> changed;
  for (auto& [address, value] : watchpoints_) {
    std::string now(value.size(), '\0');
    if (!os::read_memory(tid, address, now.data(), now.size()).is_ok()) {
      continue;  // unmapped now: nothing was written there
    }
    if (now != value) {
      value = now;
      if (!changed) {
        changed = address;
      }
    }
  }
  return changed;
}

Result<bool> GdbServer::at_instruction(const ReplayThread& t, const os::Registers& regs,
                                       Arrival arrival) {
  if (detached_ || !watched_process(t)) {
    return false;
  }
  Stop stop;
  stop.thread = t.index;
  bool stops = false;
  if (step_pending_ && arrival != Arrival::kParked &&
      (step_thread_ <= 0 || step_thread_ == gdb_id(t))) {
    stops = true;
  }
  if (breakpoints_.count(regs.rip) != 0) {
    stops = true;
    stop.reason = "swbreak:;";
  }
  if (!watchpoints_.empty()) {
    if (std::optional<uint64_t> address = changed_watchpoint(t.tid)) {
      stops = true;
      stop.reason = fmt::format("watch:{:x};", *address);
    }
  }
  if (!stops && ++steps_since_poll_ >= kStepsPerInterruptPoll) {
    steps_since_poll_ = 0;
    if (connection_->take_interrupt()) {
      stops = true;
      stop.signal = SIGINT;
    }
  }
  if (!stops) {
    return false;
  }
  REPRO_RETURN_IF_ERROR(stop_here(stop));
  return true;
}

Status GdbServer::stop_here(const Stop& stop) {
  step_pending_ = false;
  stop_ = stop;
  general_thread_ = 0;
  Status sent = connection_->send_packet(stop_reply());
  Resume resume = Resume::kDisconnected;
  if (sent.is_ok()) {
    REPRO_ASSIGN_OR_RETURN(resume, serve_packets());
  } else if (!connection_->closed()) {
    return sent;
  }
  switch (resume) {
    case Resume::kContinue:
      return Status::ok();
    case Resume::kDetach:
      detached_ = true;
      breakpoints_.clear();
      watchpoints_.clear();
      return Status::ok();
    case Resume::kKill:
    case Resume::kDisconnected:
      killed_ = true;
      // Unwinds the replay from wherever it stopped; serve() turns it
      // into an outcome.
      return Status::error(StatusCode::kUnsupported, "the replay was ended from gdb");
  }
  return Status::ok();
}

std::string GdbServer::stop_reply() const {
  std::string reply = fmt::format("T{:02x}", stop_.signal);
  auto it = session_->threads().find(stop_.thread);
  if (it != session_->threads().end()) {
    reply += fmt::format("thread:{:x};", gdb_id(it->second));
  }
  return reply + stop_.reason;
}

// ---------------------------------------------------------------------------
// The replay under gdb

Result<ReplayOutcome> GdbServer::serve(ReplaySession& session) {
  session_ = &session;
  int fd = -1;
  while (fd < 0) {
    fd = accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0 && errno != EINTR) {
      return Status::from_errno(errno, "waiting for gdb to connect");
    }
  }
  listener_.reset();  // one connection
  connection_ = std::make_unique<GdbConnection>(fd);
  session.set_watcher(this);
  auto ended_by_gdb = [&]() {
    ReplayOutcome outcome;
    outcome.event_count = session.next_event_index();
    outcome.stopped_at = fmt::format("gdb ended the replay before event #{}\n",
                                     session.next_event_index());
    session.set_watcher(nullptr);
    return outcome;
  };
  auto failed = [&](Status status) -> Status {
    session.set_watcher(nullptr);
    if (killed_) {
      return status;
    }
    if (!detached_) {
      // gdb sees the program die; the report follows on repro's stderr.
      (void)connection_->send_packet(output_packet("repro: the replay stopped: " +
                                                   status.message() + "\n"));
      (void)connection_->send_packet(fmt::format("X{:02x}", SIGKILL));
    }
    return status;
  };

  if (Status begun = session.begin(); !begun.is_ok()) {
    return failed(begun);
  }
  // Before the first instruction: gdb asks where with '?'.
  stop_ = Stop{session.last_event_thread(), 5, ""};
  REPRO_ASSIGN_OR_RETURN(Resume first, serve_packets());
  if (first == Resume::kKill || first == Resume::kDisconnected) {
    return ended_by_gdb();
  }
  detached_ = first == Resume::kDetach;
  while (true) {
    std::optional<uint32_t> between = thread_between_events();
    if (run_to_event_ && !detached_ && between &&
        session.next_event_index() >= *run_to_event_) {
      run_to_event_.reset();
      // Signal 0: gdb says the thread "stopped", no signal to explain.
      Status stopped = stop_here(Stop{*between, 0, ""});
      if (killed_) {
        return ended_by_gdb();
      }
      if (!stopped.is_ok()) {
        return failed(stopped);
      }
    }
    Result<bool> more = session.replay_next();
    if (killed_) {
      return ended_by_gdb();
    }
    if (!more.is_ok()) {
      return failed(more.status());
    }
    if (!*more) {
      break;
    }
    if (detached_) {
      continue;
    }
    // Memory the replay itself wrote (a syscall's results) may be watched;
    // and gdb may have sent Ctrl-C while no instruction was watched.
    std::optional<uint32_t> here = thread_between_events();
    std::optional<Stop> stop;
    if (here) {
      pid_t tid = session.threads().at(*here).tid;
      if (std::optional<uint64_t> address = changed_watchpoint(tid)) {
        stop = Stop{*here, 5, fmt::format("watch:{:x};", *address)};
      } else if (connection_->take_interrupt()) {
        stop = Stop{*here, SIGINT, ""};
      }
    }
    if (stop) {
      Status stopped = stop_here(*stop);
      if (killed_) {
        return ended_by_gdb();
      }
      if (!stopped.is_ok()) {
        return failed(stopped);
      }
    }
  }
  Result<ReplayOutcome> outcome = session.finish();
  session.set_watcher(nullptr);
  if (!outcome.is_ok()) {
    return failed(outcome.status());
  }
  if (!detached_) {
    int status = outcome->wait_status;
    std::string exit = WIFSIGNALED(status) ? fmt::format("X{:02x}", WTERMSIG(status))
                                           : fmt::format("W{:02x}", WEXITSTATUS(status));
    // gdb closes the connection once it has seen the end; answer what it
    // asks until then.
    while (connection_->send_packet(exit).is_ok()) {
      Result<std::optional<std::string>> packet = connection_->read_packet();
      if (!packet.is_ok() || !*packet || **packet == "k") {
        break;  // the replay is over either way
      }
      exit = starts_with(**packet, "vKill") ? "OK" : "E01";
    }
  }
  return outcome;
}

// ---------------------------------------------------------------------------
// Packets

Result<GdbServer::Resume> GdbServer::serve_packets() {
  while (true) {
    REPRO_ASSIGN_OR_RETURN(std::optional<std::string> packet, connection_->read_packet());
    if (!packet) {
      return Resume::kDisconnected;
    }
    std::optional<Resume> resume;
    REPRO_ASSIGN_OR_RETURN(std::string reply, answer(*packet, &resume));
    if (*packet == "k") {
      return Resume::kKill;  // no reply
    }
    if (resume && *resume == Resume::kContinue) {
      return *resume;  // the reply is the next stop
    }
    Status sent = connection_->send_packet(reply);
    if (!sent.is_ok()) {
      if (connection_->closed()) {
        return Resume::kDisconnected;
      }
      return sent;
    }
    if (*packet == "QStartNoAckMode") {
      connection_->stop_acks();
    }
    if (resume) {
      return *resume;
    }
  }
}

Result<std::string> GdbServer::read_registers_of(const ReplayThread& t, GdbRegisterState* state) {
  if (t.where == ReplayThread::Where::kStarting) {
    REPRO_RETURN_IF_ERROR(session_->settle_thread(t.index));
  }
  Result<GdbRegisterState> read = read_gdb_registers(t.tid);
  if (!read.is_ok()) {
    return std::string("E03");  // running a syscall for real: no registers to show
  }
  *state = *read;
  return std::string();
}

Result<std::string> GdbServer::answer(const std::string& packet, std::optional<Resume>* resume) {
  if (packet.empty()) {
    return std::string();
  }
  const char kind = packet[0];
  const std::string rest = packet.substr(1);
  if (starts_with(packet, "qSupported")) {
    return fmt::format(
        "PacketSize={:x};qXfer:features:read+;qXfer:auxv:read+;QStartNoAckMode+;swbreak+;"
        "vContSupported+",
        kPacketSize);
  }
  if (packet == "QStartNoAckMode") {
    return std::string("OK");
  }
  if (packet == "?") {
    return stop_reply();
  }
  if (packet == "qAttached" || starts_with(packet, "qAttached:")) {
    return std::string("0");  // started for gdb: quitting gdb ends it
  }
  if (packet == "qC") {
    auto it = session_->threads().find(stop_.thread);
    return it == session_->threads().end() ? std::string("QC0")
                                           : fmt::format("QC{:x}", gdb_id(it->second));
  }
  if (packet == "qfThreadInfo") {
    return thread_list();
  }
  if (packet == "qsThreadInfo") {
    return std::string("l");
  }
  if (starts_with(packet, "qThreadExtraInfo,")) {
    auto id = parse_thread_id(packet.substr(17));
    const ReplayThread* t = id ? thread_by_gdb_id(*id) : nullptr;
    return t ? to_hex(fmt::format("replay thread t{}", t->index)) : std::string("E01");
  }
  if (starts_with(packet, "qSymbol")) {
    return std::string("OK");
  }
  if (starts_with(packet, "qXfer:")) {
    // qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH
    std::vector<std::string> parts = split(packet, ':');
    if (parts.size() != 5 || parts[2] != "read") {
      return std::string();
    }
    auto range = address_and_length(parts[4]);
    if (!range) {
      return std::string("E01");
    }
    return xfer(parts[1] + ":" + parts[3], range->first, range->second);
  }
  if (starts_with(packet, "qRcmd,")) {
    auto command = from_hex(packet.substr(6));
    if (!command) {
      return std::string("E01");
    }
    std::string text = monitor(*command);
    Status sent = connection_->send_packet(output_packet(text));
    if (!sent.is_ok() && !connection_->closed()) {
      return sent;
    }
    return std::string("OK");
  }
  if (kind == 'H' && packet.size() >= 2) {
    auto id = parse_thread_id(packet.substr(2));
    if (!id) {
      return std::string("E01");
    }
    if (packet[1] == 'g') {
      general_thread_ = *id;
    }
    return std::string("OK");
  }
  if (kind == 'T') {
    auto id = parse_thread_id(rest);
    return id && *id > 0 && thread_by_gdb_id(*id) ? std::string("OK") : std::string("E01");
  }
  if (kind == 'g' || kind == 'G' || kind == 'p' || kind == 'P') {
    const ReplayThread* t = thread_by_gdb_id(general_thread_);
    if (t == nullptr) {
      return std::string("E02");
    }
    GdbRegisterState state;
    REPRO_ASSIGN_OR_RETURN(std::string error, read_registers_of(*t, &state));
    if (!error.empty()) {
      return error;
    }
    std::string layout = to_gdb_layout(state);
    if (kind == 'g') {
      return to_hex(layout);
    }
    if (kind == 'p') {
      auto regnum = parse_hex_number(rest);
      auto slot = regnum ? gdb_register_slot(static_cast<int>(*regnum)) : std::nullopt;
      return slot ? to_hex(layout.substr(slot->first, slot->second)) : std::string("E01");
    }
    if (kind == 'G') {
      auto bytes = from_hex(rest);
      if (!bytes || bytes->size() != layout.size()) {
        return std::string("E01");
      }
      layout = *bytes;
    } else {
      size_t equals = rest.find('=');
      if (equals == std::string::npos) {
        return std::string("E01");
      }
      std::optional<uint64_t> regnum = parse_hex_number(rest.substr(0, equals));
      std::optional<std::string> bytes = from_hex(rest.substr(equals + 1));
      if (!regnum || !bytes) {
        return std::string("E01");
      }
      std::optional<std::pair<size_t, size_t>> slot = gdb_register_slot(static_cast<int>(*regnum));
      if (!slot || bytes->size() != slot->second) {
        return std::string("E01");
      }
      layout.replace(slot->first, slot->second, *bytes);
    }
    from_gdb_layout(layout, &state);
    return write_gdb_registers(t->tid, state).is_ok() ? std::string("OK") : std::string("E03");
  }
  if (kind == 'm') {
    auto range = address_and_length(rest);
    return range ? read_memory_reply(range->first, range->second) : std::string("E01");
  }
  if (kind == 'M' || kind == 'X') {
    size_t colon = rest.find(':');
    auto range = address_and_length(rest.substr(0, colon));
    if (!range || colon == std::string::npos) {
      return std::string("E01");
    }
    std::optional<std::string> bytes =
        kind == 'M' ? from_hex(rest.substr(colon + 1)) : unescape_binary(rest.substr(colon + 1));
    if (!bytes || bytes->size() != range->second) {
      return std::string("E01");
    }
    return write_memory_reply(range->first, *bytes);
  }
  if ((kind == 'Z' || kind == 'z') && packet.size() > 3) {
    // Z/z TYPE,ADDR,KIND: 0 software and 1 hardware breakpoints alike
    // (both compare rip), 2 write watchpoints; read and access
    // watchpoints (3, 4) are not offered.
    char type = packet[1];
    auto range = address_and_length(packet.substr(3, packet.find(';') - 3));
    if (!range) {
      return std::string("E01");
    }
    bool insert = kind == 'Z';
    if (type == '0' || type == '1') {
      if (insert) {
        breakpoints_.insert(range->first);
      } else {
        breakpoints_.erase(range->first);
      }
      return std::string("OK");
    }
    if (type == '2') {
      if (!insert) {
        watchpoints_.erase(range->first);
        return std::string("OK");
      }
      if (range->second == 0 || range->second > kMaxWatchBytes) {
        return std::string("E01");
      }
      Result<std::string> value = os::read_memory(memory_tid(), range->first, range->second);
      if (!value.is_ok()) {
        return std::string("E01");
      }
      watchpoints_[range->first] = *value;
      return std::string("OK");
    }
    return std::string();
  }
  if (packet == "vCont?") {
    return std::string("vCont;c;C;s;S");
  }
  if (starts_with(packet, "vCont;")) {
    return resume_with(packet.substr(6), resume);
  }
  if (kind == 'c' || kind == 'C') {
    return resume_with("c", resume);
  }
  if (kind == 's' || kind == 'S') {
    return resume_with("s", resume);
  }
  if (kind == 'D') {
    *resume = Resume::kDetach;
    return std::string("OK");
  }
  if (kind == 'k') {
    *resume = Resume::kKill;
    return std::string();
  }
  if (starts_with(packet, "vKill")) {
    *resume = Resume::kKill;
    return std::string("OK");
  }
  return std::string();  // not supported: gdb does without
}

std::string GdbServer::resume_with(const std::string& actions, std::optional<Resume>* resume) {
  // vCont;ACTION[:THREAD];...: a step for one thread means a stop after
  // that thread's next instruction; the replay decides which threads run
  // meanwhile, as it must. Signals gdb would pass (C, S) are not sent:
  // the trace says which signals arrive.
  step_pending_ = false;
  step_thread_ = 0;
  for (const std::string& action : split(actions, ';')) {
    if (action.empty()) {
      continue;
    }
    if (action[0] == 's' || action[0] == 'S') {
      step_pending_ = true;
      size_t colon = action.find(':');
      if (colon != std::string::npos) {
        step_thread_ = parse_thread_id(action.substr(colon + 1)).value_or(0);
      }
    }
  }
  *resume = Resume::kContinue;
  return std::string();
}

std::string GdbServer::xfer(const std::string& object_annex, uint64_t offset, uint64_t length) {
  std::string data;
  if (object_annex == "features:target.xml") {
    data = gdb_target_description();
  } else if (object_annex == "auxv:") {
    std::ifstream file(fmt::format("/proc/{}/auxv", session_->root_pid()), std::ios::binary);
    if (!file) {
      return "E01";
    }
    data.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  } else {
    return "E00";
  }
  if (offset >= data.size()) {
    return "l";
  }
  std::string chunk = data.substr(offset, length);
  bool last = offset + chunk.size() >= data.size();
  return (last ? "l" : "m") + escape_binary(chunk);
}

std::string GdbServer::read_memory_reply(uint64_t address, uint64_t length) {
  length = std::min<uint64_t>(length, kPacketSize / 2 - 16);
  pid_t tid = memory_tid();
  Result<std::string> bytes = os::read_memory(tid, address, length);
  if (bytes.is_ok()) {
    return to_hex(*bytes);
  }
  // What is readable from the start, page by page: gdb takes a short read.
  std::string readable;
  uint64_t at = address;
  while (at < address + length) {
    uint64_t page_end = (at | (os::kPageBytes - 1)) + 1;
    uint64_t chunk = std::min(page_end, address + length) - at;
    Result<std::string> part = os::read_memory(tid, at, chunk);
    if (!part.is_ok()) {
      break;
    }
    readable += *part;
    at += chunk;
  }
  return readable.empty() ? "E14" : to_hex(readable);
}

std::string GdbServer::write_memory_reply(uint64_t address, const std::string& bytes) {
  if (bytes.empty()) {
    return "OK";
  }
  Status written = os::write_memory(memory_tid(), address, bytes.data(), bytes.size());
  if (!written.is_ok()) {
    return "E14";
  }
  // A watched value gdb changed itself is not a write to report.
  for (auto& [watched, value] : watchpoints_) {
    if (watched < address + bytes.size() && address < watched + value.size()) {
      Result<std::string> now = os::read_memory(memory_tid(), watched, value.size());
      if (now.is_ok()) {
        value = *now;
      }
    }
  }
  return "OK";
}

// ---------------------------------------------------------------------------
// monitor

std::string GdbServer::describe_position() {
  uint64_t next = session_->next_event_index();
  Result<const format::Event*> event = session_->peek_next_event();
  if (!event.is_ok()) {
    return fmt::format("event #{} cannot be read: {}\n", next, event.status().message());
  }
  if (*event == nullptr) {
    return fmt::format("the replay is past its last event (#{})\n", next == 0 ? 0 : next - 1);
  }
  return fmt::format("the replay stands before event #{} ({} of thread t{}); {} events replayed\n",
                     next, format::event_kind_name((*event)->kind), (*event)->thread, next);
}

std::string GdbServer::monitor(const std::string& command) {
  std::istringstream words(command);
  std::string verb;
  words >> verb;
  if (verb == "event") {
    return describe_position();
  }
  if (verb == "run-to") {
    std::string number;
    words >> number;
    uint64_t target = 0;
    auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), target);
    if (number.empty() || error != std::errc() || end != number.data() + number.size()) {
      return "usage: monitor run-to EVENT (an event number, as `repro dump` numbers them)\n";
    }
    if (target < session_->next_event_index()) {
      return fmt::format("event #{} is behind: replay goes forward only; {}", target,
                         describe_position());
    }
    run_to_event_ = target;
    return fmt::format("the replay stops before event #{} at the next continue\n", target);
  }
  return "repro's gdb server knows these commands:\n"
         "  monitor event          which event the replay stands at\n"
         "  monitor run-to EVENT   stop before event EVENT at the next continue\n";
}

}  // namespace repro::replayer
