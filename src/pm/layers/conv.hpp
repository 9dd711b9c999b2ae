#pragma once
// The convolution and its transpose (conv_spec.hpp) as rules (SpanRows):
// their rows generated from the ConvSpec alone, O(1) memory, and the edge
// lists conv(c) and conv_transpose(c) materialised from them.
#include "pm/layers/conv_spec.hpp"
#include "pm/layers/rows.hpp"

namespace pm {

class ConvRows final : public IntegerRule<ConvRows> {
public:
  explicit ConvRows(ConvSpec c)
      : c_(std::move(c)), in_((c_.validate(), c_.input_shape())), out_(c_.output_shape()),
        ker_(c_.kernel) {}
  const ConvSpec &spec() const { return c_; }
  Index source() const override { return in_.size(); }
  Index target() const override { return out_.size(); }
  Index parameters() const override { return c_.parameter_shape().size(); }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    conv_row(c_, in_, ker_, out_.multi(y), [&](Index x, Index p) { out.push_back({x, p, 1}); });
  }
  Index max_row() const override { return ker_.size() * (c_.in_channels / c_.groups); }
  // Zero padding: an input point meets each kernel offset at most once per
  // output channel of its group. The other modes read a border point from
  // several padded positions: at most once per output position and offset.
  Index max_column() const override {
    const Index per_output = (c_.out_channels / c_.groups) * ker_.size();
    return c_.padding_mode == PaddingMode::zeros ? per_output
                                                 : per_output * (out_.size() / c_.out_channels);
  }
  Index max_parameter_use() const override { return out_.size() / c_.out_channels; }

private:
  ConvSpec c_;
  Shape in_, out_, ker_;
};

// The transposed convolution (zero padding): the row of an input point x of
// c is the column of x in conv(c), found by solving o·s + k·d − lo = x for
// the output position o at each kernel offset k.
class ConvTransposeRows final : public IntegerRule<ConvTransposeRows> {
public:
  explicit ConvTransposeRows(ConvSpec c)
      : c_(std::move(c)), in_((c_.validate(), c_.input_shape())), out_(c_.output_shape()),
        ker_(c_.kernel) {
    require(c_.padding_mode == PaddingMode::zeros,
            "conv_transpose: padding_mode is not zeros, expected zero padding (PyTorch's "
            "ConvTransposeNd has no other)");
  }
  Index source() const override { return out_.size(); }
  Index target() const override { return in_.size(); }
  Index parameters() const override { return c_.parameter_shape().size(); }
  template <class Edge> void edges(Index y, std::vector<Edge> &out) const {
    const std::vector<Index> x = in_.multi(y);
    const Index cin_g = c_.in_channels / c_.groups, cout_g = c_.out_channels / c_.groups;
    const Index g = x.back() / cin_g, ci = x.back() % cin_g;
    std::vector<Index> o(c_.rank() + 1);
    const std::vector<Index> &ext = out_.extents();
    for (Index kf = 0; kf < ker_.size(); ++kf) {
      bool hit = true;
      Index rest = kf;
      for (Index j = c_.rank(); j-- > 0 && hit;) {
        const Index k = rest % c_.kernel[j];
        rest /= c_.kernel[j];
        const Index shifted = x[j] + c_.lo(j); // = o·s + k·d
        hit = shifted >= k * c_.dil(j) && (shifted - k * c_.dil(j)) % c_.step(j) == 0 &&
              (shifted - k * c_.dil(j)) / c_.step(j) < ext[j];
        if (hit) o[j] = (shifted - k * c_.dil(j)) / c_.step(j);
      }
      if (!hit) continue;
      for (Index co = g * cout_g; co < (g + 1) * cout_g; ++co) {
        o.back() = co;
        out.push_back({out_.flat(o), (kf * cin_g + ci) * c_.out_channels + co, 1});
      }
    }
  }
  Index max_row() const override { return ker_.size() * (c_.out_channels / c_.groups); }
  Index max_column() const override { return ker_.size() * (c_.in_channels / c_.groups); }
  Index max_parameter_use() const override { return out_.size() / c_.out_channels; }

private:
  ConvSpec c_;
  Shape in_, out_, ker_;
};

template <class S> ParametricSpan<S> conv(const ConvSpec &c) {
  return materialise_as<S>(ConvRows(c));
}

// The transposed convolution: the adjoint of conv(c), from the output space of
// c to its input space, with the same parameters; its edges in conv(c)'s
// order (ConvTransposeRows lists the same edges by their target).
template <class S> ParametricSpan<S> conv_transpose(const ConvSpec &c) {
  return transpose(conv<S>(c));
}

} // namespace pm
