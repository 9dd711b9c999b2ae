#pragma once
// The scratch directory of a test process: a new one under
// temp_directory_path(), named by mkdtemp, so that two runs of the suite at
// once (a sanitizer and a release build, or two checkouts) never share it;
// removed with everything in it when the process ends.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace pm_test {

struct ScratchDir {
  std::filesystem::path path;

  explicit ScratchDir(const std::string &prefix) {
    std::string name = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (!mkdtemp(name.data()))
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + name);
    path = name;
  }
  ~ScratchDir() {
    std::error_code ignored; // nothing to do about a directory that cannot be removed
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
};

} // namespace pm_test
