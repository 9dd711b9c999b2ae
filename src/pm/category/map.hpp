#pragma once
// Maps between finite sets: f : {0..m−1} → {0..n−1} stored as its table of
// images. These are the morphisms of FinSet; they compose like functions.
#include <string>
#include <vector>

#include "pm/category/finite_set.hpp"

namespace pm {

struct FinMap {
  Index codomain = 0;
  std::vector<Index> images; // images[i] = f(i); the domain is images.size()

  FinMap() = default;
  FinMap(Index codomain_size, std::vector<Index> table, const std::string &name = "map")
      : codomain(codomain_size), images(std::move(table)) {
    validate(name);
  }

  Index domain() const { return images.size(); }
  Index operator()(Index i) const { return images[i]; }

  // Every image must lie in the codomain; the message names the map and index.
  void validate(const std::string &name = "map") const {
    for (Index i = 0; i < images.size(); ++i)
      require(images[i] < codomain, name, ": image of ", i, " is ", images[i],
              ", expected < codomain size ", codomain);
  }

  friend bool operator==(const FinMap &, const FinMap &) = default;
};

inline FinMap identity_map(Index n) {
  FinMap f;
  f.codomain = n;
  f.images.resize(n);
  for (Index i = 0; i < n; ++i) f.images[i] = i;
  return f;
}

// compose(g, f) = g ∘ f : first f, then g.
inline FinMap compose(const FinMap &g, const FinMap &f) {
  require(f.codomain == g.domain(), "compose(g, f): codomain of f has size ", f.codomain,
          ", expected the domain size of g, ", g.domain());
  FinMap h;
  h.codomain = g.codomain;
  h.images.resize(f.domain());
  for (Index i = 0; i < f.domain(); ++i) h.images[i] = g.images[f.images[i]];
  return h;
}

// The unique map from the empty set, and the unique map to a one-point set.
inline FinMap empty_map(Index codomain) { return FinMap(codomain, {}); }
inline FinMap terminal_map(Index domain) { return FinMap(1, std::vector<Index>(domain, 0)); }

} // namespace pm
