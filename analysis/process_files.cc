#include "analysis/process_files.h"

#include <fcntl.h>
#include <sched.h>

#include <vector>

namespace repro::analysis {

std::string normalize_path(const std::string& absolute) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= absolute.size()) {
    size_t end = absolute.find('/', start);
    if (end == std::string::npos) {
      end = absolute.size();
    }
    std::string part = absolute.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) {
        parts.pop_back();
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    start = end + 1;
  }
  std::string path;
  for (const std::string& part : parts) {
    path += "/" + part;
  }
  return path.empty() ? "/" : path;
}

void ProcessFiles::start_root(uint32_t thread, int32_t tid, const std::string& cwd) {
  Thread root;
  root.pid = tid;
  root.table = std::make_shared<Table>();
  root.cwd = std::make_shared<std::optional<std::string>>();
  if (!cwd.empty() && cwd[0] == '/') {
    *root.cwd = normalize_path(cwd);
  }
  const char* names[] = {"stdin", "stdout", "stderr"};
  for (int fd = 0; fd < 3; ++fd) {
    auto file = std::make_shared<OpenFile>();
    file->kind = OpenFile::Kind::kInherited;
    file->path = names[fd];
    (*root.table)[fd] = Descriptor{std::move(file), false};
  }
  threads_[thread] = std::move(root);
}

void ProcessFiles::start_thread(uint32_t thread, uint32_t parent, int32_t tid,
                                uint64_t clone_flags) {
  Thread child;
  const Thread* creator = find(parent);
  if (creator == nullptr) {
    child.pid = tid;
    child.table = std::make_shared<Table>();
    child.cwd = std::make_shared<std::optional<std::string>>();
    threads_[thread] = std::move(child);
    return;
  }
  child.pid = (clone_flags & CLONE_THREAD) ? creator->pid : tid;
  child.table =
      (clone_flags & CLONE_FILES) ? creator->table : std::make_shared<Table>(*creator->table);
  child.cwd = (clone_flags & CLONE_FS)
                  ? creator->cwd
                  : std::make_shared<std::optional<std::string>>(*creator->cwd);
  threads_[thread] = std::move(child);
}

void ProcessFiles::exec(uint32_t thread) {
  Thread* t = find(thread);
  if (t == nullptr) {
    return;
  }
  auto table = std::make_shared<Table>();
  for (const auto& [fd, descriptor] : *t->table) {
    if (!descriptor.cloexec) {
      (*table)[fd] = descriptor;
    }
  }
  t->table = std::move(table);
}

void ProcessFiles::install(uint32_t thread, int fd, std::shared_ptr<OpenFile> file, bool cloexec) {
  if (Thread* t = find(thread)) {
    (*t->table)[fd] = Descriptor{std::move(file), cloexec};
  }
}

void ProcessFiles::close(uint32_t thread, int fd) {
  if (Thread* t = find(thread)) {
    t->table->erase(fd);
  }
}

void ProcessFiles::close_range(uint32_t thread, uint64_t first, uint64_t last, bool cloexec_only) {
  Thread* t = find(thread);
  if (t == nullptr) {
    return;
  }
  for (auto it = t->table->begin(); it != t->table->end();) {
    uint64_t fd = static_cast<uint64_t>(it->first);
    if (fd < first || fd > last) {
      ++it;
    } else if (cloexec_only) {
      it->second.cloexec = true;
      ++it;
    } else {
      it = t->table->erase(it);
    }
  }
}

bool ProcessFiles::duplicate(uint32_t thread, int old_fd, int new_fd, bool cloexec) {
  std::shared_ptr<OpenFile> file = lookup(thread, old_fd);
  if (file == nullptr) {
    close(thread, new_fd);
    return false;
  }
  install(thread, new_fd, std::move(file), cloexec);
  return true;
}

void ProcessFiles::set_cloexec(uint32_t thread, int fd, bool cloexec) {
  if (Thread* t = find(thread)) {
    if (auto it = t->table->find(fd); it != t->table->end()) {
      it->second.cloexec = cloexec;
    }
  }
}

std::shared_ptr<OpenFile> ProcessFiles::lookup(uint32_t thread, int fd) const {
  const Thread* t = find(thread);
  if (t == nullptr) {
    return nullptr;
  }
  auto it = t->table->find(fd);
  return it == t->table->end() ? nullptr : it->second.file;
}

ResolvedPath ProcessFiles::resolve(uint32_t thread, int dirfd, const std::string& path) const {
  if (!path.empty() && path[0] == '/') {
    return {normalize_path(path), true};
  }
  std::optional<std::string> base;
  if (dirfd == AT_FDCWD) {
    if (const Thread* t = find(thread)) {
      base = *t->cwd;
    }
  } else if (auto file = lookup(thread, dirfd);
             file && file->kind == OpenFile::Kind::kFile && file->path_resolved) {
    base = file->path;
  }
  if (!base) {
    return {"?/" + path, false};
  }
  return {normalize_path(path.empty() ? *base : *base + "/" + path), true};
}

void ProcessFiles::change_directory(uint32_t thread, const ResolvedPath& directory) {
  if (Thread* t = find(thread)) {
    // Assigning through the shared pointer: CLONE_FS threads see it too.
    if (directory.resolved) {
      *t->cwd = directory.path;
    } else {
      t->cwd->reset();
    }
  }
}

int32_t ProcessFiles::pid(uint32_t thread) const {
  const Thread* t = find(thread);
  return t ? t->pid : 0;
}

ProcessFiles::Thread* ProcessFiles::find(uint32_t thread) {
  auto it = threads_.find(thread);
  return it == threads_.end() ? nullptr : &it->second;
}

const ProcessFiles::Thread* ProcessFiles::find(uint32_t thread) const {
  auto it = threads_.find(thread);
  return it == threads_.end() ? nullptr : &it->second;
}

}  // namespace repro::analysis
