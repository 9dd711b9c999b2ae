#pragma once
// Gradings. A grading of the index set I = {0..n−1} into D levels is a map
// d : I → {1..D}; it stands for the chain of coordinate projections
// 0 = π_0, π_1, …, π_D = id, where π_k keeps the coordinates of grade ≤ k.
// A map f has depth ≤ D for the grading when π_k ∘ f = π_k ∘ f ∘ π_{k−1}
// for every k (see spec/machines.md, "Grading and depth").
#include <string>
#include <vector>

#include "pm/category/function.hpp"

namespace pm {

class Grading {
public:
  Grading() = default;

  // grades[i] = d(i), each in {1..levels}.
  Grading(Index levels, std::vector<Index> grades) : levels_(levels), grades_(std::move(grades)) {
    for (Index i = 0; i < grades_.size(); ++i)
      require(grades_[i] >= 1 && grades_[i] <= levels_, "Grading: grade of index ", i, " is ",
              grades_[i], ", expected in 1..", levels_);
  }

  // Consecutive blocks of sizes dims[0], dims[1], …; block k has grade k + 1.
  static Grading from_blocks(const std::vector<Index> &dims) {
    std::vector<Index> grades;
    for (Index k = 0; k < dims.size(); ++k) grades.insert(grades.end(), dims[k], k + 1);
    return Grading(dims.size(), std::move(grades));
  }

  Index size() const { return grades_.size(); }
  Index levels() const { return levels_; }
  Index operator()(Index i) const { return grades_[i]; }
  const std::vector<Index> &grades() const { return grades_; }

  // The reversed grading d'(i) = D + 1 − d(i): the grading of the backward pass.
  Grading reversed() const {
    std::vector<Index> g(grades_.size());
    for (Index i = 0; i < g.size(); ++i) g[i] = levels_ + 1 - grades_[i];
    return Grading(levels_, std::move(g));
  }

  // members()[k] lists, increasingly, the indices of grade k + 1.
  std::vector<std::vector<Index>> members() const {
    std::vector<std::vector<Index>> m(levels_);
    for (Index i = 0; i < grades_.size(); ++i) m[grades_[i] - 1].push_back(i);
    return m;
  }

  // A grading must cover exactly the index set of the object it grades.
  void require_covers(Index n, const std::string &what) const {
    require(grades_.size() == n, what, ": grading has length ", grades_.size(), ", expected ", n);
  }

  friend bool operator==(const Grading &, const Grading &) = default;

private:
  Index levels_ = 0;
  std::vector<Index> grades_;
};

} // namespace pm
