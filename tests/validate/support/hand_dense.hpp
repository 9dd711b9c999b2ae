#pragma once
// A dense layer as the validator's tests check it: its model as pm::dense
// builds it, and an implementation written by hand with its transpose and
// gradient, summing in Acc (double, or float for an implementation that
// computes in float32 behind double arguments, as a float32 PyTorch module
// does in pmach.check).
#include "pm/io/layer_format.hpp"
#include "pm/layers/dense.hpp"

namespace pm_test {

// Dense in → out as pm::dense builds it: w of shape (in, out).
inline pm::io::LayerDescription dense_description(pm::Index in, pm::Index out) {
  pm::io::LayerDescription d;
  d.file = "dense (pm::dense)";
  d.source = pm::Shape({in});
  d.target = pm::Shape({out});
  d.parameters = pm::Shape({in, out});
  d.has_parameters = true;
  d.span = pm::dense<pm::Rational>({in, out, false});
  return d;
}

// wrong_transpose: the transpose reads w(0, 1) where w(0, 0) belongs, one
// coefficient of in · out; transpose_scale multiplies every coefficient of
// the transpose.
template <class Acc> struct HandDense {
  using scalar_type = double;
  using F = pm::Function<double>;
  pm::Index in, out;
  bool wrong_transpose = false;
  double transpose_scale = 1;
  pm::Index source_size() const { return in; }
  pm::Index target_size() const { return out; }
  pm::Index parameter_size() const { return in * out; }
  F apply(const F &w, const F &x) const {
    std::vector<Acc> y(out, Acc(0));
    for (pm::Index i = 0; i < in; ++i)
      for (pm::Index o = 0; o < out; ++o) y[o] += Acc(w[i * out + o]) * Acc(x[i]);
    return F(y.begin(), y.end());
  }
  F apply_transpose(const F &w, const F &g) const {
    std::vector<Acc> x(in, Acc(0));
    for (pm::Index i = 0; i < in; ++i)
      for (pm::Index o = 0; o < out; ++o)
        x[i] += Acc(transpose_scale * w[wrong_transpose && i == 0 && o == 0 ? 1 : i * out + o]) *
                Acc(g[o]);
    return F(x.begin(), x.end());
  }
  F parameter_gradient(const F &x, const F &g) const {
    F w(in * out);
    for (pm::Index i = 0; i < in; ++i)
      for (pm::Index o = 0; o < out; ++o) w[i * out + o] = double(Acc(x[i]) * Acc(g[o]));
    return w;
  }
};

} // namespace pm_test
