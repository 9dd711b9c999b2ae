// pmach make for the layers PyTorch users write: each file is read back and
// evaluated by `pmach eval` on a hand-worked input, and the options fixed in
// the torch layout (bias, transposed channels, size bound) say what they do.
#include <catch2/catch.hpp>

#include "cli/support/pmach_run.hpp"
#include "pm/io/batch_npy.hpp"
#include "pm/io/layer_format.hpp"
#include "tests/support/scratch.hpp"

namespace fs = std::filesystem;
using pm_test::Run;

namespace {
const pm_test::ScratchDir scratch("pm_cli_make_layers");
const fs::path &work = scratch.path;
const pm_test::Pmach pmach{work};

pm::io::LayerDescription made(const std::string &args) {
  const std::string file = (work / "made.json").string();
  const Run r = pmach(args + " --file " + file);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
  return pm::io::read_layer(file);
}

// y = L x for a parameterless layer, exactly.
std::vector<pm::Rational> apply(const pm::io::LayerDescription &d, std::vector<int> x) {
  std::vector<pm::Rational> y(d.target.size(), 0);
  for (pm::Index e = 0; e < d.span.apex(); ++e)
    y[d.span.span.t(e)] += d.span.span.mu[e] * x[d.span.span.s(e)];
  return y;
}
using Q = pm::Rational;
} // namespace

TEST_CASE("pmach make: the new parameterless layers have their textbook values") {
  // F.interpolate 4 → 7 linear, half pixels: x_d = (8d − 3)/14 (cut at 0).
  CHECK(
      apply(made("make interpolate --channels 1 --size 4 --to 7 --mode linear"), {0, 7, 14, 28}) ==
      std::vector<Q>{Q(0), Q(5, 2), Q(13, 2), Q(21, 2), Q(15), Q(23), Q(28)});
  // torch.roll by −2 on 5 points: [2 3 4 0 1].
  CHECK(apply(made("make roll --shape 5 --shifts -2"), {0, 1, 2, 3, 4}) ==
        std::vector<Q>{Q(2), Q(3), Q(4), Q(0), Q(1)});
  // ceil_mode, count_include_pad=False: n = 6, window 3, stride 2: windows
  // [0, 3), [2, 5), [4, 6): means 1, 3, 9/2 of 0 1 2 3 4 5.
  CHECK(apply(made("make pool --channels 1 --size 6 --kernel 3 --stride 2 --ceil --exclude-pad"),
              {0, 1, 2, 3, 4, 5}) == std::vector<Q>{Q(1), Q(3), Q(9, 2)});
  // pixel shuffle r = 2, torch layout: channels (0 1 2 3) → the 2×2 block.
  const auto s = made("make pixel-shuffle --channels 1 --size 1 1 --factor 2 --layout torch");
  CHECK(s.source.extents() == std::vector<pm::Index>{4, 1, 1});
  CHECK(s.target.extents() == std::vector<pm::Index>{1, 2, 2});
  CHECK(apply(s, {5, 6, 7, 8}) == std::vector<Q>{Q(5), Q(6), Q(7), Q(8)});
  // F.unfold, 2 channels of 3 pixels, kernel 2, torch layout: columns
  // (c·2 + k, block l) read x[c, l + k]: rows (0 1 | 1 2 | 3 4 | 4 5) of
  // x = (0 1 2 | 3 4 5), listed column-major as (C·K, L) = (4, 2).
  const auto u = made("make unfold --channels 2 --size 3 --kernel 2 --layout torch");
  CHECK(u.source.extents() == std::vector<pm::Index>{2, 3});
  CHECK(u.target.extents() == std::vector<pm::Index>{4, 2});
  CHECK(apply(u, {0, 1, 2, 3, 4, 5}) ==
        std::vector<Q>{Q(0), Q(1), Q(1), Q(2), Q(3), Q(4), Q(4), Q(5)});
  // F.fold sums them back: the middle pixel of each channel is read twice.
  CHECK(apply(made("make unfold --channels 2 --size 3 --kernel 2 --layout torch --fold"),
              {0, 1, 1, 2, 3, 4, 4, 5}) == std::vector<Q>{Q(0), Q(2), Q(2), Q(3), Q(8), Q(5)});
}

TEST_CASE("pmach make conv: bias, padding modes, transposed channels and the size bound") {
  // --bias in the torch layout: parameters flat, weight (4, 2, 3, 3) then
  // the bias (4,); the source stays (2, 5, 5).
  const auto c = made("make conv --in 2 --out 4 --size 5 5 --kernel 3 3 --padding 1 1 --bias "
                      "--padding-mode circular --layout torch");
  CHECK(c.bias);
  CHECK(c.source.extents() == std::vector<pm::Index>{2, 5, 5});
  CHECK(c.parameters.extents() == std::vector<pm::Index>{4 * 2 * 9 + 4});
  // Circular padding reads every tap inside: 25 outputs · 4 channels · 18
  // taps, plus one bias edge per output.
  CHECK(c.span.apex() == 100 * 18 + 100);
  // --transpose takes the transposed layer's own channels: 2 → 4.
  const auto t = made("make conv --in 2 --out 4 --size 6 --kernel 3 --stride 2 --transpose");
  CHECK(t.source.extents() == std::vector<pm::Index>{2, 2});
  CHECK(t.target.extents() == std::vector<pm::Index>{6, 4});
  // Past 2^22 edges a conv is written by name (held by its rule when read),
  // with its layout and bias; a layer without a named form is refused.
  const Run big = pmach("make conv --in 64 --out 64 --size 56 56 --kernel 3 3 --padding 1 1 "
                        "--layout torch --bias");
  REQUIRE(big.code == 0);
  const auto j = pm::io::Json::parse(big.out);
  CHECK(j["layer"] == "conv");
  CHECK(j["layout"] == "torch");
  CHECK(j["bias"] == pm::io::Json{{"axes", {0}}});
  const auto named = pm::io::parse_layer(j, "big.json");
  CHECK_FALSE(named.span_held);
  CHECK(named.bias);
  CHECK(named.source.extents() == std::vector<pm::Index>{64, 56, 56});
  CHECK(named.parameters.size() == 64 * 64 * 9 + 64);
  const Run pool = pmach("make pool --channels 256 --size 128 128 --kernel 3 3 --stride 1 1");
  CHECK(pool.code == 2);
  CHECK(pool.err.find("expected at most 4194304 to list them in a file (dense, conv and graph "
                      "layers of any size are written by name)") != std::string::npos);
}
