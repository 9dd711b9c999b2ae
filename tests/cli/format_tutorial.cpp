// docs/tutorials/your-first-layer-as-a-span.md runs as written: its shell
// and Python blocks in order against the built pmach, each line the page
// shows printed by the block before it (tests/cli/support/run_tutorial.py).
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli/support/pmach_run.hpp"
#include "tests/support/scratch.hpp"

TEST_CASE("the tutorial 'your first layer as a span' runs and shows its output") {
  namespace fs = std::filesystem;
  const pm_test::ScratchDir scratch("pm_first_layer");
  const fs::path source = PM_SOURCE_DIR, &work = scratch.path;
  const fs::path page = source / "docs" / "tutorials" / "your-first-layer-as-a-span.md";
  fs::create_directories(work);
  const std::string cmd =
      "/usr/bin/python3 " + (source / "tests/cli/support/run_tutorial.py").string() + " " +
      page.string() + " " + fs::path(PMACH_EXECUTABLE).parent_path().string() + " " +
      (work / "run").string() + " > " + (work / "out.txt").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string out = pm_test::slurp(work / "out.txt");
  INFO(out);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.find("blocks ran") != std::string::npos);
}
