// pmach dot (dot.hpp), compiled on its own (commands.hpp).
#include "dot.hpp"
#include "commands.hpp"

namespace pmach::command {

const char *dot_help() { return pmach::dot_help; }
int dot(const Args &args) { return pmach::run_dot(args); }

} // namespace pmach::command
