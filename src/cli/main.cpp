// pmach: validate layers and machines against the laws of the reference
// semantics, evaluate them, and draw them. See `pmach --help`.
#include <csignal>
#include <iostream>
#include <set>
#include <string>

#include "commands.hpp"
#include "pm/io/output.hpp"
#include "pm/io/printable.hpp"
#include "pm/version.hpp"

namespace {

const char *main_help =
    "usage: pmach <command> [arguments] [--help]\n"
    "       pmach --version\n"
    "\n"
    "commands:\n"
    "  check [MODEL.json]   run the laws: on the built-in catalogue (conformance\n"
    "                       table), or on a layer or machine file; compare it with\n"
    "                       another (--same-as) or with a framework's outputs\n"
    "                       (--against)\n"
    "  make WHAT            write the model file of a built-in layer or machine\n"
    "  probe MODEL.json     write probe inputs for a framework without bindings\n"
    "  eval MODEL.json      evaluate the reference semantics on .npy inputs\n"
    "  dot MODEL.json       write the span or machine as Graphviz DOT (docs/dot.md)\n"
    "\n"
    "File formats: docs/formats.md. Exit status: 0 success, 1 a law failed,\n"
    "2 bad input or usage.\n";

struct Command {
  const char *name;
  const char *help;
  std::set<std::string> valued, flags;
  int (*run)(const pmach::Args &);
};

} // namespace

int main(int argc, char **argv) {
  // Past a file-size limit, writes must fail (and be reported) rather than
  // kill the process before it can say so.
  std::signal(SIGXFSZ, SIG_IGN);
  const Command commands[] = {
      {"check",
       pmach::command::check_help(),
       {"cases", "seed", "against", "same-as", "law", "subject", "junit"},
       {"json", "kernels", "progress"},
       pmach::command::check},
      {"eval",
       pmach::command::eval_help(),
       {"y0", "z0", "ybar", "zbar", "w", "out", "precision"},
       {"json", "kernels"},
       pmach::command::eval},
      {"dot", pmach::command::dot_help(), {"out"}, {"summary", "full"}, pmach::command::dot},
      {"make", pmach::command::make_help(), {}, {}, nullptr},
      {"probe", pmach::command::probe_help(), {"out", "seed", "cases"}, {}, pmach::command::probe},
  };
  if (argc < 2) {
    std::cerr << "pmach: error: expected a command (check, eval, dot, make or probe), see pmach "
                 "--help\n";
    return 2;
  }
  if (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ||
      std::string(argv[1]) == "help") {
    std::cout << main_help << std::flush;
    if (std::cout) return 0;
    std::cerr << "pmach: error: standard output: write error\n";
    return 2;
  }
  if (std::string(argv[1]) == "--version") {
    std::cout << "pmach " << pm::version << "\n";
    return 0;
  }
  const std::string name = argv[1];
  for (const Command &c : commands) {
    if (name != c.name) continue;
    try {
      // -h or --help anywhere after the command: its usage, and nothing run.
      for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
          std::cout << c.help;
          pm::io::flush_standard_output();
          return 0;
        }
      // make takes lists of values (--kernel 3 3) and parses them itself.
      if (!c.run) {
        const int code = pmach::command::make(argc, argv);
        pm::io::flush_standard_output();
        return code;
      }
      const pmach::Args args = pmach::parse_args(argc, argv, 2, c.valued, c.flags);
      const int code = c.run(args);
      pm::io::flush_standard_output(); // exit 0 only when the output was written
      return code;
    } catch (const std::exception &e) {
      // pm::Error and everything else (e.g. std::bad_alloc): one line, exit 2,
      // with control characters of file names escaped.
      std::cerr << "pmach " << name << ": error: " << pm::io::message_line(e.what()) << "\n";
      return 2;
    }
  }
  std::cerr << "pmach: error: unknown command '" << name
            << "', expected check, eval, dot, make or probe\n";
  return 2;
}
