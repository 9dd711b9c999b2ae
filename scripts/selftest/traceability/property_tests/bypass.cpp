// A tree whose tests go around scripts/traceability.py in every way it must
// see: compiled into an executable (proofs/CMakeLists.txt), listed by Catch
// and read back; `expect` is what the check must report. Only FIX-GOOD has
// tests that count.
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

namespace {
void law_good(int x) { RC_ASSERT(x + 0 == x); }
void law_silent(int x) { static_cast<void>(x + 0 == x); }
} // namespace

TEST_CASE("FIX-GOOD: a property that asserts") {
  rc::prop("FIX-GOOD", [](int x) { law_good(x); });
}
TEST_CASE("FIX-GOOD mutant: a unit test that asserts") { REQUIRE(1 + 1 == 2); }

#if 0
TEST_CASE("FIX-IF-ZERO: a test inside #if 0") { REQUIRE(true); }
#endif
TEST_CASE("FIX-IF-ZERO mutant: kept") { REQUIRE(true); }

#ifdef FIX_NEVER_DEFINED
TEST_CASE("FIX-IFDEF: a test behind an undefined macro") { REQUIRE(true); }
#endif
TEST_CASE("FIX-IFDEF mutant: kept") { REQUIRE(true); }

TEST_CASE("FIX-HIDDEN: a test tagged [.]", "[.]") { REQUIRE(true); }
TEST_CASE("FIX-HIDDEN mutant: kept") { REQUIRE(true); }

TEST_CASE("FIX-HIDDEN-NAMED: a test tagged [.integration]", "[.integration]") { REQUIRE(true); }
TEST_CASE("FIX-HIDDEN-NAMED mutant: kept") { REQUIRE(true); }

TEST_CASE("FIX-HIDE: a test tagged [!hide]", "[!hide]") { REQUIRE(true); }
TEST_CASE("FIX-HIDE mutant: kept") { REQUIRE(true); }

TEST_CASE("FIX-NO-ASSERT: a test that asserts nothing") {
  const int x = 1;
  static_cast<void>(x);
}
TEST_CASE("FIX-NO-ASSERT mutant: kept") { REQUIRE(true); }

TEST_CASE("FIX-SILENT-PROPERTY: a property that asserts nothing, beside a REQUIRE") {
  rc::prop("FIX-SILENT-PROPERTY", [](int x) { law_silent(x); });
  REQUIRE(true);
}
TEST_CASE("FIX-SILENT-PROPERTY mutant: kept") { REQUIRE(true); }

TEST_CASE("FIX-SILENT-MUTANT: kept") { REQUIRE(true); }
TEST_CASE("FIX-SILENT-MUTANT mutant: a mutant test that asserts nothing") { law_silent(3); }
