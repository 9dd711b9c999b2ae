// The geometry of the seed machines pinned on hand examples: the recurrent
// machine's (time block, channel block) grading and the convolution
// machine's asymmetric padding. The seed-machine laws check each machine
// against its own grading and padding, so a constructor that gets either
// wrong passes them; these values are worked out on paper in the comments.
#include <catch2/catch.hpp>

#include "pm/category/scalar.hpp"
#include "pm/layers.hpp"

using namespace pm;
using Q = Rational;

TEST_CASE("RecurMachine: the grading is (time block, channel block) lexicographic") {
  // dims [1, 2]: channel 0 is block 1, channels 1 and 2 block 2; timeblock 3
  // over length 7 gives the time blocks {0,1,2}, {3,4,5}, {6}, so
  // d(t, c) = ⌊t / 3⌋ · 2 + block(c), and 3 · 2 = 6 levels.
  const RecurMachine<Q> m({1, 2}, Sigma<Q>::identity(), 2, 3, 7);
  const std::vector<Index> expected{1, 2, 2, 1, 2, 2, 1, 2, 2, //
                                    3, 4, 4, 3, 4, 4, 3, 4, 4, //
                                    5, 6, 6};
  CHECK(m.machine().grading().grades() == expected);
  CHECK(m.machine().grading().levels() == 6);
}

TEST_CASE("ConvMachine: padding (lo, hi) = (0, 2) reads the positions o, o + 1, o + 2") {
  // dims [1, 1], one spatial axis of 4, pad (0, 2): kernel 3, and only the
  // weights from channel 0 (block 1) into channel 1 (block 2) survive
  // cleaning. W(k, 0, 1) = 10^k and σ = identity, so with y₀ = x on channel 0,
  //   y(o, 1) = Σ_{k, o + k < 4} 10^k x(o + k):
  //   x = (1, 2, 3, 4) gives 1 + 20 + 300, 2 + 30 + 400, 3 + 40, 4.
  // With the pads exchanged (lo 2) the first output would be 100 · x(0).
  const ConvMachine<Q> m({1, 1}, Sigma<Q>::identity(), {0, 2}, {4});
  Function<Q> w(m.parameters(), Q(0)); // (k, c_in, c_out), row-major
  for (Index k = 0; k < 3; ++k) w[(k * 2 + 0) * 2 + 1] = Q(k == 0 ? 1 : k == 1 ? 10 : 100);
  Batch<Q> y0(4, 1); // one channel: expanded to channel 0 of the state
  for (Index o = 0; o < 4; ++o) y0(o, 0) = Q(o + 1);
  const MachineState<Q> s = m.forward(w, y0);
  const std::vector<Q> expected{321, 432, 43, 4};
  for (Index o = 0; o < 4; ++o) {
    INFO("position " << o);
    CHECK(s.y(o * 2 + 0, 0) == Q(o + 1));
    CHECK(s.y(o * 2 + 1, 0) == expected[o]);
  }
}
