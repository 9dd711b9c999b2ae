#pragma once
// The benchmark problems: the paper's sizes (seeds.md §4: float32, tanh,
// Glorot-uniform weights) and large sizes, with their inputs.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "pm/kernels.hpp"
#include "pm/numeric/uniform.hpp"

namespace pm_bench {

using pm::Index;

// Dense: dims and batch; conv 1-D: also length and pad (3, 3); recurrent:
// length, max lag 6 and time block 5 (the paper's), except the large sizes.
struct Problem {
  std::string machine, size;
  std::vector<Index> dims;
  Index batch, length = 0, pad_lo = 0, pad_hi = 0, max_lag = 0, timeblock = 0;
};

inline const std::vector<Problem> &problems() {
  const std::vector<Index> small{2, 2, 2, 2, 2}, medium{32, 32, 32, 32, 32}, large{64, 64, 64, 64};
  static const std::vector<Problem> p{{"dense", "small", small, 2},
                                      {"dense", "medium", medium, 32},
                                      {"dense", "large", {256, 256, 256, 256}, 256},
                                      {"conv", "small", small, 2, 16, 3, 3},
                                      {"conv", "medium", medium, 32, 16, 3, 3},
                                      {"conv", "large", large, 16, 256, 3, 3},
                                      {"recur", "small", small, 2, 16, 0, 0, 6, 5},
                                      {"recur", "medium", medium, 32, 16, 0, 0, 6, 5},
                                      {"recur", "large", large, 16, 128, 0, 0, 6, 5}};
  return p;
}

// Inputs of a machine: W Glorot-uniform (bound √(6 / (2 fan-in))), states and
// cotangents uniform in [−1, 1].
template <class T> struct Inputs {
  std::vector<T> w, y0, z0, gy, gz;

  Inputs(Index states, Index weights, Index fan_in, unsigned seed = 1) {
    std::mt19937 g(seed);
    const T glorot = std::sqrt(T(6) / T(2 * std::max<Index>(fan_in, 1)));
    auto fill = [&](std::vector<T> &v, Index size, T scale) {
      pm::UniformReal<T> u(-scale, scale);
      v.resize(size);
      for (T &x : v) x = u(g);
    };
    fill(w, weights, glorot);
    for (auto *v : {&y0, &z0, &gy, &gz}) fill(*v, states, T(1));
  }
};

} // namespace pm_bench
