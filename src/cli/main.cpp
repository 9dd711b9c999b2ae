// pmach: validate layers and machines against the laws of the reference
// semantics, evaluate them, and draw them. See `pmach --help`.
#include <iostream>

#include "check.hpp"
#include "dot.hpp"
#include "eval.hpp"
#include "make.hpp"

namespace {

const char *main_help =
    "usage: pmach <command> [arguments] [--help]\n"
    "\n"
    "commands:\n"
    "  check [MODEL.json]   run the laws: on the built-in catalogue (conformance\n"
    "                       table), or on a layer or machine file; compare it with\n"
    "                       another (--same-as) or with a framework's outputs\n"
    "                       (--against)\n"
    "  make WHAT            write the model file of a built-in layer or machine\n"
    "  probe LAYER.json     write probe inputs for a framework without bindings\n"
    "  eval MODEL.json      evaluate the reference semantics on .npy inputs\n"
    "  dot MODEL.json       write the span or machine as Graphviz DOT\n"
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
  const Command commands[] = {
      {"check",
       pmach::check_help,
       {"cases", "seed", "against", "same-as"},
       {"json", "help"},
       pmach::run_check},
      {"eval",
       pmach::eval_help,
       {"y0", "z0", "ybar", "zbar", "w", "out", "precision"},
       {"json", "help"},
       pmach::run_eval},
      {"dot", pmach::dot_help, {"out"}, {"help"}, pmach::run_dot},
      {"make", pmach::make_help, {}, {"help"}, nullptr},
      {"probe", pmach::probe_help, {"out", "seed"}, {"help"}, pmach::run_probe},
  };
  if (argc < 2) {
    std::cerr << "pmach: error: expected a command (check, eval, dot, make or probe), see pmach "
                 "--help\n";
    return 2;
  }
  if (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ||
      std::string(argv[1]) == "help") {
    std::cout << main_help;
    return 0;
  }
  const std::string name = argv[1];
  for (const Command &c : commands) {
    if (name != c.name) continue;
    try {
      // make takes lists of values (--kernel 3 3) and parses them itself.
      if (!c.run) {
        for (int i = 2; i < argc; ++i)
          if (std::string(argv[i]) == "--help") {
            std::cout << c.help;
            return 0;
          }
        return pmach::run_make(argc, argv);
      }
      const pmach::Args args = pmach::parse_args(argc, argv, 2, c.valued, c.flags);
      if (args.flag("help")) {
        std::cout << c.help;
        return 0;
      }
      return c.run(args);
    } catch (const std::exception &e) {
      // pm::Error and everything else (e.g. std::bad_alloc): one line, exit 2.
      std::string msg = e.what();
      for (char &ch : msg)
        if (ch == '\n') ch = ' ';
      std::cerr << "pmach " << name << ": error: " << msg << "\n";
      return 2;
    }
  }
  std::cerr << "pmach: error: unknown command '" << name
            << "', expected check, eval, dot, make or probe\n";
  return 2;
}
