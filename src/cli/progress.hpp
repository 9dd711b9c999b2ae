#pragma once
// The step pmach is running, named on stderr as it starts, and each row of
// the report as it finishes (pm::RowStream), so that a long check (the
// catalogue at --cases 1000, --kernels) shows that it is alive and where. On a terminal one line
// rewritten in place and erased before the report prints; with --progress on any stream one line
// per step (a log keeps them). stdout holds the report alone either way.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace pmach {

class Progress {
public:
  // forced: --progress; otherwise only when stderr is a terminal.
  explicit Progress(bool forced)
      : terminal_(isatty(STDERR_FILENO) == 1), on_(forced || terminal_) {}
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;
  ~Progress() { clear(); }

  void show(const std::string &text) {
    if (!on_) return;
    if (!terminal_) {
      std::fprintf(stderr, "%s\n", text.c_str());
    } else {
      const std::size_t pad = width_ > text.size() ? width_ - text.size() : 0;
      std::fprintf(stderr, "\r%s%s", text.c_str(), std::string(pad, ' ').c_str());
      width_ = std::max(width_, text.size());
    }
    std::fflush(stderr);
  }

  // Erases the terminal's line, before the report is printed.
  void clear() {
    if (!terminal_ || width_ == 0) return;
    std::fprintf(stderr, "\r%s\r", std::string(width_, ' ').c_str());
    std::fflush(stderr);
    width_ = 0;
  }

private:
  bool terminal_, on_;
  std::size_t width_ = 0;
};

} // namespace pmach
