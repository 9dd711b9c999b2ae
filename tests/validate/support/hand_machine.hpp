#pragma once
// The implementation side of the validator's machine tests: the reference
// solver of a machine behind the MachineImplementation interface, with
// planted faults, and a dense machine's model.
#include <algorithm>
#include <vector>

#include "pm/io/machine_format.hpp"
#include "pm/machine.hpp"

namespace pm_test {

using pm::Index;
using pm::Rational;

// A machine implementation: the reference solver of a machine (possibly a
// different one than specified) behind the MachineImplementation interface;
// `forget_batch_sum` keeps only the last sample's weight gradient, and
// `nudge` scales every y of the floating forward pass by 1 + nudge of the floating forward pass.
template <class S> struct HandMachineOf {
  using scalar_type = S;
  pm::GradedSpanMachine<S> m;
  bool forget_batch_sum = false;
  double nudge = 0;

  std::pair<pm::Batch<S>, pm::Batch<S>> forward(const pm::Function<S> &w, const pm::Batch<S> &y0,
                                                const pm::Batch<S> &z0) const {
    auto x = pm::forward(m, w, y0, z0);
    for (S &v : x.y.data) v *= S(1 + nudge);
    return {x.y, x.z};
  }
  pm::Gradients<S> backward(const pm::Function<S> &w, const pm::Batch<S> &y0,
                            const pm::Batch<S> &z0, const pm::Batch<S> &gy,
                            const pm::Batch<S> &gz) const {
    const auto x = pm::forward(m, w, y0, z0);
    pm::Gradients<S> g = pm::backward(m, w, x, gy, gz);
    if (forget_batch_sum) { // only the last sample's weight gradient
      const Index b = y0.cols - 1;
      g.w = pm::clean(m.span(), m.grading(),
                      pm::parameter_gradient(m.span(), x.z.column(b), g.y0.column(b)));
    }
    return g;
  }
};
using HandMachine = HandMachineOf<Rational>;

inline pm::io::MachineDescription dense_machine_spec(std::vector<Index> grades) {
  pm::io::MachineDescription d;
  d.file = "dense machine";
  const Index n = grades.size();
  d.space = pm::Shape({n});
  d.grading = pm::Grading(*std::max_element(grades.begin(), grades.end()), grades);
  d.parameters = pm::Shape({n, n});
  // Every pair (s, t) is an edge with parameter (t, s); cleaning keeps those
  // raising the grade.
  for (Index t = 0; t < n; ++t)
    for (Index s = 0; s < n; ++s) {
      d.span.span.s.images.push_back(s);
      d.span.span.t.images.push_back(t);
      d.span.pi.images.push_back(t * n + s);
    }
  d.span.span.s.codomain = d.span.span.t.codomain = n;
  d.span.pi.codomain = n * n;
  d.span.span.mu.assign(n * n, Rational(1));
  d.sigma.name = "relu";
  return d;
}

inline HandMachine hand(const pm::io::MachineDescription &d, bool forget = false) {
  return {pm::io::make_machine<Rational>(d), forget};
}

} // namespace pm_test
