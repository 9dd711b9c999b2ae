// pmach check (check.hpp), compiled on its own (commands.hpp).
#include "check.hpp"
#include "commands.hpp"

namespace pmach::command {

const char *check_help() { return pmach::check_help; }
int check(const Args &args) { return pmach::run_check(args); }

} // namespace pmach::command
