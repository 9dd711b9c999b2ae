#pragma once
// Writing results so that nothing is lost (docs/formats.md §5.1). Every
// write, flush, close and rename is checked, and a failure is one line
// naming the file and the system's reason. Three rules:
//  - a file is written into a temporary file in its own directory (so on the
//    same file system), flushed to disk, closed and renamed over its name:
//    the name holds the old bytes or the new ones, never a part;
//  - the files of one run (pmach eval --out DIR) are replaced as one set:
//    written with a manifest into a fresh folder next to DIR, which is then
//    exchanged with DIR in one rename, so DIR holds the whole old run or the
//    whole new one. DIR must be absent, empty, or an earlier run (a manifest
//    listing exactly its files); anything else is refused, never deleted;
//  - links are not followed: a target, or anything in DIR, that is a
//    symbolic link (or not a regular file) is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pm/category/error.hpp"

namespace pm::io {

// The manifest of a run folder: {"pmach-run": 1, "files": [names]}.
inline constexpr const char *run_manifest = "pmach-run.json";

namespace detail {

inline std::string system_reason() { return std::strerror(errno); }

// The directory holding `path`, and its last component.
inline std::pair<std::filesystem::path, std::string> split_path(const std::string &path) {
  const std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  const std::string name = p.filename().string();
  require(!name.empty() && name != "." && name != "..", path,
          ": expected a path ending in a file or folder name");
  return {p.has_parent_path() ? p.parent_path() : std::filesystem::path("."), name};
}

// What is at `path`, without following a final link: 0 when nothing.
inline mode_t kind_at(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    require(errno == ENOENT, path, ": cannot inspect: ", system_reason());
    return 0;
  }
  return st.st_mode & S_IFMT;
}

inline void require_directory(const std::filesystem::path &dir, const std::string &for_what) {
  struct stat st;
  require(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), dir.string(),
          ": expected an existing directory to hold ", for_what);
}

// Permissions for new files and folders as the umask allows.
inline mode_t allowed_mode(mode_t wanted) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return wanted & ~mask;
}

// Writes all of `bytes` to the open file `fd`, named `path`, flushes it to
// disk and closes it, checking each step; on failure the file is removed.
inline void write_and_close(int fd, const std::string &path, std::string_view bytes) {
  std::string error;
  for (std::size_t done = 0; done < bytes.size() && error.empty();) {
    const ::ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      error = "write error after " + std::to_string(done) + " of " + std::to_string(bytes.size()) +
              " bytes: " + (n < 0 ? system_reason() : std::string("no progress"));
    else
      done += std::size_t(n);
  }
  if (error.empty() && ::fsync(fd) != 0) error = "cannot flush to disk: " + system_reason();
  if (::close(fd) != 0 && error.empty()) error = "close error: " + system_reason();
  if (!error.empty()) {
    ::unlink(path.c_str());
    pm::detail::fail(path, ": ", error);
  }
}

// The same into a new file `path`, which must not exist yet.
inline void write_new_file(const std::string &path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        allowed_mode(0666));
  require(fd >= 0, path, ": cannot create the file: ", system_reason());
  write_and_close(fd, path, bytes);
}

// Flushes a directory's entries (the renames into it) to disk.
inline void sync_directory(const std::filesystem::path &dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return; // some file systems do not open directories; the rename stands
  ::fsync(fd);
  ::close(fd);
}

// The names in a run folder, checking that replacing it loses nothing: it
// holds only regular files, all listed by its manifest (or nothing at all).
inline void require_replaceable_run(const std::string &dir) {
  std::set<std::string> present;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    require(kind_at(entry.path().string()) == S_IFREG, dir, ": holds '", name,
            "', which is not a regular file (a link, folder or device): refusing to replace the "
            "folder");
    present.insert(name);
  }
  if (present.empty()) return;
  const std::string manifest = (std::filesystem::path(dir) / run_manifest).string();
  require(present.count(run_manifest) == 1, dir,
          ": expected an empty folder or the output of an "
          "earlier run (with ",
          run_manifest, "); refusing to replace a folder of other files");
  std::set<std::string> listed{run_manifest};
  try {
    std::ifstream in(manifest);
    const nlohmann::json m = nlohmann::json::parse(in);
    for (const auto &f : m.at("files")) listed.insert(f.get<std::string>());
  } catch (const nlohmann::json::exception &) {
    pm::detail::fail(manifest, ": expected a run manifest {\"pmach-run\": 1, \"files\": [...]}");
  }
  for (const std::string &name : present)
    require(listed.count(name) == 1, dir, ": holds '", name, "', which ", run_manifest,
            " does not list: refusing to replace the folder");
}

} // namespace detail

// Replaces the file `path` by `bytes` all-or-nothing (see the file comment).
inline void write_file_atomically(const std::string &path, std::string_view bytes) {
  const auto [dir, name] = detail::split_path(path);
  detail::require_directory(dir, "'" + name + "'");
  const mode_t kind = detail::kind_at(path);
  require(kind == 0 || kind == S_IFREG, path,
          ": exists and is not a regular file (a link, folder or device): refusing to replace it");
  std::string tmp = (dir / ("." + name + ".pmach-XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  require(fd >= 0, tmp, ": cannot create a temporary file: ", detail::system_reason());
  ::fchmod(fd, detail::allowed_mode(0666)); // mkstemp makes it private
  detail::write_and_close(fd, tmp, bytes);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = detail::system_reason();
    ::unlink(tmp.c_str());
    pm::detail::fail(path, ": cannot rename the new file into place: ", reason);
  }
  detail::sync_directory(dir);
}

// The set of files of one run, held in memory until commit() replaces the
// folder with them as a whole; nothing on disk changes before commit(), so a
// run that fails on bad input leaves the folder as it was.
class RunOutput {
public:
  // "out/" names the folder "out".
  explicit RunOutput(std::string dir) : dir_(std::move(dir)) {
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  }

  const std::string &dir() const { return dir_; }
  std::string path(const std::string &name) const {
    return (std::filesystem::path(dir_) / name).string();
  }

  void add(const std::string &name, std::string bytes) {
    require(name != run_manifest && name.find('/') == std::string::npos,
            "RunOutput: invalid file name ", name);
    files_.emplace_back(name, std::move(bytes));
  }
  // The paths of the files added, in order.
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const auto &f : files_) out.push_back(path(f.first));
    return out;
  }

  void commit() {
    check_place();
    const auto [parent, name] = detail::split_path(dir_);
    std::string staging = (parent / ("." + name + ".pmach-XXXXXX")).string();
    require(::mkdtemp(staging.data()) != nullptr, staging,
            ": cannot create the staging folder: ", detail::system_reason());
    try {
      ::chmod(staging.c_str(), detail::allowed_mode(0777));
      nlohmann::json manifest{{"pmach-run", 1}, {"files", nlohmann::json::array()}};
      for (const auto &[file, bytes] : files_) {
        detail::write_new_file((std::filesystem::path(staging) / file).string(), bytes);
        manifest["files"].push_back(file);
      }
      // The manifest last: a folder with a manifest is a complete run.
      detail::write_new_file((std::filesystem::path(staging) / run_manifest).string(),
                             manifest.dump(1) + "\n");
      detail::sync_directory(staging);
      swap_into_place(staging);
    } catch (...) {
      std::error_code ec;
      std::filesystem::remove_all(staging, ec);
      throw;
    }
    std::error_code ec;
    std::filesystem::remove_all(staging, ec); // the previous run, now at the staging name
    detail::sync_directory(parent);
  }

private:
  void check_place() const {
    const auto [parent, name] = detail::split_path(dir_);
    detail::require_directory(parent, "the output folder '" + name + "'");
    const mode_t kind = detail::kind_at(dir_);
    require(kind == 0 || kind == S_IFDIR, dir_,
            ": exists and is not a folder (a link, file or device): refusing to replace it");
    if (kind == S_IFDIR) detail::require_replaceable_run(dir_);
  }

  // Puts the staging folder at dir_ in one step; the old run (if any) ends
  // up at the staging name.
  void swap_into_place(const std::string &staging) const {
    if (detail::kind_at(dir_) == 0) {
      require(std::rename(staging.c_str(), dir_.c_str()) == 0, dir_,
              ": cannot rename the new run into place: ", detail::system_reason());
      return;
    }
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0)
      return;
    require(errno == EINVAL || errno == ENOSYS, dir_,
            ": cannot exchange the new run with the old one: ", detail::system_reason());
    // A file system without atomic exchange: two renames, with a moment in
    // between where DIR is absent (the old run is then at DIR.pmach-old).
    const std::string old = dir_ + ".pmach-old";
    require(std::rename(dir_.c_str(), old.c_str()) == 0, dir_,
            ": cannot move the old run aside: ", detail::system_reason());
    require(std::rename(staging.c_str(), dir_.c_str()) == 0, dir_,
            ": cannot rename the new run into place (the old run is at ", old,
            "): ", detail::system_reason());
    require(std::rename(old.c_str(), staging.c_str()) == 0, old,
            ": cannot remove the old run: ", detail::system_reason());
  }

  std::string dir_;
  std::vector<std::pair<std::string, std::string>> files_;
};

// Checks that everything printed to standard output reached it (a full disk
// or a closed pipe must not end in exit code 0).
inline void flush_standard_output() {
  std::cout.flush();
  errno = 0;
  const bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout) && bool(std::cout);
  require(ok, "standard output: write error",
          errno ? ": " + detail::system_reason() : std::string());
}

} // namespace pm::io
