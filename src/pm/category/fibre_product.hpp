#pragma once
// The fibre product (pullback in FinSet) of f : A → Y and g : B → Y:
//   A ×_Y B = {(a, b) : f(a) = g(b)},
// enumerated in lexicographic order of (a, b): a major, b minor. Its two
// projections p : A ×_Y B → A and q : A ×_Y B → B satisfy f∘p = g∘q.
#include "pm/category/map.hpp"

namespace pm {

struct FibreProduct {
  FinMap p; // first projection, to A
  FinMap q; // second projection, to B
  Index size() const { return p.domain(); }
};

inline FibreProduct fibre_product(const FinMap &f, const FinMap &g) {
  require(f.codomain == g.codomain, "fibre_product(f, g): f has codomain size ", f.codomain,
          ", expected the codomain size of g, ", g.codomain);
  // Bucket B by image so that the enumeration costs |A ×_Y B| + |A| + |B|.
  std::vector<std::vector<Index>> fibre(g.codomain);
  for (Index b = 0; b < g.domain(); ++b) fibre[g.images[b]].push_back(b);
  FibreProduct fp;
  fp.p.codomain = f.domain();
  fp.q.codomain = g.domain();
  for (Index a = 0; a < f.domain(); ++a)
    for (Index b : fibre[f.images[a]]) {
      fp.p.images.push_back(a);
      fp.q.images.push_back(b);
    }
  return fp;
}

} // namespace pm
