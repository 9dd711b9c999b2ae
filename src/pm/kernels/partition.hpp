#pragma once
// Deterministic parallel loops. Work is cut into pieces of a fixed size that
// depends only on the problem, never on the number of threads; each piece is
// computed entirely by one thread and pieces write disjoint outputs, so there
// is no reduction across threads and the result has the same bits for any
// thread count.
#include <cstddef>

#include "pm/category/finite_set.hpp"

namespace pm::kernels {

// The number of pieces of at most `piece` items covering `count` items.
constexpr Index pieces(Index count, Index piece) { return (count + piece - 1) / piece; }

// Below this many floating-point operations a call runs in the calling
// thread: a parallel region costs microseconds when the other threads are
// idle and a whole time slice when their cores are busy with other work,
// more than such a call takes on one core. Which thread runs a piece does not
// change a result, so this only moves time; the thread tests set it to 0 to
// run every call of more than one piece in parallel.
inline double parallel_work = double(1 << 22);

// Calls f(begin, end) for every piece [begin, end) of [0, count), in
// parallel over the pieces, handed out one at a time (pieces may differ in
// cost; which thread runs a piece does not change its result), unless the
// whole call costs fewer than parallel_work operations (`work`; negative:
// unknown). f must not throw.
template <class F> void for_each_piece(Index count, Index piece, F &&f, double work = -1) {
  const auto n = static_cast<std::ptrdiff_t>(pieces(count, piece));
  if (n == 1) return f(Index(0), count);
#pragma omp parallel for schedule(dynamic, 1) if (work < 0 || work >= parallel_work)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const Index begin = Index(k) * piece;
    f(begin, begin + piece < count ? begin + piece : count);
  }
}

} // namespace pm::kernels
