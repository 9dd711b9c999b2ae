// pmach make and pmach probe (make.hpp), compiled on their own (commands.hpp).
#include "make.hpp"
#include "commands.hpp"

namespace pmach::command {

const char *make_help() { return pmach::make_help; }
int make(int argc, char **argv) { return pmach::run_make(argc, argv); }

const char *probe_help() { return pmach::probe_help; }
int probe(const Args &args) { return pmach::run_probe(args); }

} // namespace pmach::command
