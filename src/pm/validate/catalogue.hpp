#pragma once
// The built-in catalogue that `pmach check` runs without arguments: every
// layer of src/pm/layers/ and every seed machine, at small sizes that reach
// the corners (padding, strides, dilation, groups, bias, self loops, several
// time blocks), and the machines also at the authors' test sizes, in double
// and, where σ allows, exactly over the rationals.
#include <functional>

#include "pm/layers.hpp"
#include "pm/layers/seed_machines.hpp"
#include "pm/validate/layer_laws.hpp"
#include "pm/validate/machine_laws.hpp"

namespace pm {

struct CatalogueEntry {
  std::string name;
  std::function<Report(const ValidateOptions &)> run;
};

namespace validation {

// A span without parameters as a parametric span over the one-point space.
template <class S> ParametricSpan<S> unparametrised(const Span<S> &a) {
  return ParametricSpan<S>{a, terminal_map(a.apex())};
}

template <class S, class Make> CatalogueEntry span_entry(const std::string &name, Make make) {
  return {name, [name, make](const ValidateOptions &o) { return validate(make(), name, o); }};
}

template <class S, class Make> CatalogueEntry machine_entry(const std::string &name, Make make) {
  return {name,
          [name, make](const ValidateOptions &o) { return validate(make().machine(), name, o); }};
}

template <class S> void add_layers(std::vector<CatalogueEntry> &c, const std::string &suffix) {
  c.push_back(span_entry<S>("dense" + suffix, [] { return dense<S>({3, 4, false}); }));
  c.push_back(span_entry<S>("dense+bias" + suffix, [] { return dense<S>({3, 2, true}); }));
  const ConvSpec conv1{{8}, 2, 3, {3}, {1}, {2}, {2}, {1}, 1};
  c.push_back(span_entry<S>("conv1d pad stride" + suffix, [=] { return conv<S>(conv1); }));
  const ConvSpec conv2{{5, 4}, 2, 2, {3, 2}, {1, 0}, {1, 1}, {1, 2}, {1, 1}, 1};
  c.push_back(span_entry<S>("conv2d" + suffix, [=] { return conv<S>(conv2); }));
  const ConvSpec grouped{{9}, 4, 2, {2}, {0}, {0}, {1}, {3}, 2};
  c.push_back(span_entry<S>("conv1d dilated grouped" + suffix, [=] { return conv<S>(grouped); }));
  c.push_back(span_entry<S>("conv1d transpose" + suffix, [=] { return conv_transpose<S>(conv1); }));
  c.push_back(span_entry<S>("time conv" + suffix, [] { return time_conv<S>({7, 2, 2, 3}); }));
  const GraphConvSpec graph{
      5, {{0, 1}, {1, 2}, {2, 0}, {3, 4}, {1, 3}}, 2, 2, true, GraphNorm::mean};
  c.push_back(span_entry<S>("graph conv mean" + suffix, [=] { return graph_conv<S>(graph); }));
  const PoolSpec pool{{4, 5}, 2, {2, 2}, {0, 1}, {0, 0}, {}};
  c.push_back(span_entry<S>("average pool 2d" + suffix,
                            [=] { return unparametrised(average_pool<S>(pool)); }));
}

} // namespace validation

inline std::vector<CatalogueEntry> catalogue() {
  using namespace validation;
  std::vector<CatalogueEntry> c;
  add_layers<double>(c, "");
  add_layers<Rational>(c, " (exact)");
  using D = double;
  using Q = Rational;
  c.push_back(machine_entry<D>("DenseMachine tanh", [] {
    return DenseMachine<D>({2, 4, 7, 1}, Sigma<D>::tanh());
  }));
  c.push_back(machine_entry<Q>("DenseMachine relu (exact)", [] {
    return DenseMachine<Q>({2, 3, 2}, Sigma<Q>::relu());
  }));
  c.push_back(machine_entry<D>("ConvMachine 1d sigmoid", [] {
    return ConvMachine<D>({1, 2, 2}, Sigma<D>::sigmoid(), {1, 3}, {12});
  }));
  c.push_back(machine_entry<D>("ConvMachine 2d tanh", [] {
    return ConvMachine<D>({2, 1, 1}, Sigma<D>::tanh(), {1, 1, 1, 0}, {4, 3});
  }));
  c.push_back(machine_entry<Q>("ConvMachine 1d identity (exact)", [] {
    return ConvMachine<Q>({1, 1, 2}, Sigma<Q>::identity(), {0, 2}, {5});
  }));
  // The authors' test sizes: conv 2-D (6, 9), dims [2, 1, 3, 1], pad
  // (1, 3, 2, 0); recurrent length 32, pad 6, time blocks of 5.
  c.push_back(machine_entry<D>("ConvMachine 2d authors' sizes", [] {
    return ConvMachine<D>({2, 1, 3, 1}, Sigma<D>::tanh(), {1, 3, 2, 0}, {6, 9});
  }));
  c.push_back(machine_entry<D>("RecurMachine tanh", [] {
    return RecurMachine<D>({1, 2, 2}, Sigma<D>::tanh(), 6, 5, 32);
  }));
  c.push_back(machine_entry<Q>("RecurMachine relu (exact)", [] {
    return RecurMachine<Q>({1, 1, 1}, Sigma<Q>::relu(), 2, 2, 5);
  }));
  return c;
}

} // namespace pm
