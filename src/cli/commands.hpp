#pragma once
// The subcommands of pmach as main.cpp sees them: each is compiled in a
// translation unit of its own (check.cpp, eval.cpp, dot.cpp, make.cpp), so
// that the heavy ones build in parallel and a change to one rebuilds only it.
#include "args.hpp"

namespace pmach::command {

const char *check_help();
int check(const Args &args);

const char *eval_help();
int eval(const Args &args);

const char *dot_help();
int dot(const Args &args);

const char *make_help();
int make(int argc, char **argv);

const char *probe_help();
int probe(const Args &args);

} // namespace pmach::command
