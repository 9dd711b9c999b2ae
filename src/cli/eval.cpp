// pmach eval (eval.hpp), compiled on its own (commands.hpp).
#include "eval.hpp"
#include "commands.hpp"

namespace pmach::command {

const char *eval_help() { return pmach::eval_help; }
int eval(const Args &args) { return pmach::run_eval(args); }

} // namespace pmach::command
