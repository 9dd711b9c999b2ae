#pragma once
// Running the pmach command as a user runs it, for the tests of tests/cli/:
// exit code, standard output and standard error. PMACH_EXECUTABLE is set by
// src/cli/CMakeLists.txt.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pm_test {

struct Run {
  int code;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs pmach with `args`, its output captured in files of `work`.
struct Pmach {
  std::filesystem::path work;
  Run operator()(const std::string &args) const {
    namespace fs = std::filesystem;
    fs::create_directories(work);
    const std::string cmd = std::string(PMACH_EXECUTABLE) + " " + args + " > " +
                            (work / "out.txt").string() + " 2> " + (work / "err.txt").string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(work / "out.txt"),
            slurp(work / "err.txt")};
  }
};

inline std::size_t count(const std::string &s, const std::string &part) {
  std::size_t n = 0;
  for (auto p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

// A usage or input error: exit 2, nothing on stdout, one line on stderr.
inline void expect_input_error(const Run &r, const std::string &part) {
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(count(r.err, "\n") == 1);
  CHECK(r.err.find(part) != std::string::npos);
}

} // namespace pm_test
