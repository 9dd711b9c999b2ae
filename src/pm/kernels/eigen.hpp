#pragma once
// Eigen views over the kernels' raw buffers, and the two Eigen settings the
// kernels' determinism rests on:
// - the kernels parallelise over the batch themselves, in a partition fixed
//   independently of the thread count; Eigen's own matrix-product threading
//   would split the work by thread count, so it is switched off;
// - Eigen evaluates small products coefficient by coefficient, with sums
//   whose order follows the alignment of the operands' addresses; every
//   product goes through the packed matrix-product (or matrix-vector) code
//   instead, whose order depends only on the sizes (the kernels' own
//   products call the packed product directly: multiply_add below).
#if defined(EIGEN_CORE_H) &&                                                                       \
    (!defined(EIGEN_DONT_PARALLELIZE) || !defined(EIGEN_GEMM_TO_COEFFBASED_THRESHOLD))
#error "include pm/kernels.hpp before Eigen"
#endif
#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE
#endif
#ifndef EIGEN_GEMM_TO_COEFFBASED_THRESHOLD
#define EIGEN_GEMM_TO_COEFFBASED_THRESHOLD 0
#endif
// GCC 12 reports the deliberately undefined lanes of _mm512_undefined_ps
// (in Eigen's AVX-512 transposes, min and max) as uninitialized: a false
// positive.
// (Clang, which has no -Wmaybe-uninitialized, does not report them.)
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop
#include <type_traits>

namespace pm::kernels {

// A column-major matrix with an arbitrary column stride: a block of a batch
// (rows = channels, columns = samples) or of a weight matrix.
template <class T>
using MatrixView = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>, Eigen::Unaligned,
                              Eigen::OuterStride<>>;
template <class T>
using ConstMatrixView = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>,
                                   Eigen::Unaligned, Eigen::OuterStride<>>;

namespace detail {

// Eigen's blocking of a product C += A · B (its own sizes for the shape,
// as Eigen's product computes them), with packing buffers kept by the
// calling thread from call to call. Eigen's product allocates them for
// every product, on the heap above 128 KiB, and the allocator returns and
// re-faults those pages: about a tenth of the time of the large passes.
template <class T> class KeptBlocking : public Eigen::internal::level3_blocking<T, T> {
public:
  KeptBlocking(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth) {
    this->m_mc = rows;
    this->m_nc = cols;
    this->m_kc = depth;
    Eigen::internal::computeProductBlockingSizes<T, T, 1>(this->m_kc, this->m_mc, this->m_nc,
                                                          Eigen::Index(1));
    this->m_blockA = buffer(0, this->m_mc * this->m_kc);
    this->m_blockB = buffer(1, this->m_kc * this->m_nc);
  }

private:
  static T *buffer(int slot, Eigen::Index size) {
    thread_local Eigen::Matrix<T, Eigen::Dynamic, 1> kept[2]; // aligned for the packet stores
    if (kept[slot].size() < size) kept[slot].resize(size);
    return kept[slot].data();
  }
};

template <class X> struct IsTranspose : std::false_type {};
template <class X> struct IsTranspose<Eigen::Transpose<X>> : std::true_type {};

// The buffer of a view, or of the view a transpose reads, and its storage
// order as an operand.
template <class X> auto operand(const X &x) {
  if constexpr (IsTranspose<X>::value) {
    const auto &m = x.nestedExpression();
    return std::pair{m.data(), Eigen::Index(m.outerStride())};
  } else {
    return std::pair{x.data(), Eigen::Index(x.outerStride())};
  }
}

} // namespace detail

// C += A · B for column-major views with unit inner stride (A and B may be
// transposes of such views), through Eigen's packed matrix product with the
// calling thread's kept packing buffers. The summation order depends on the
// sizes only.
template <class C, class A, class B> void multiply_add(C &&c, const A &a, const B &b) {
  using T = typename std::decay_t<C>::Scalar;
  const Eigen::Index m = c.rows(), n = c.cols(), k = a.cols();
  eigen_assert(a.rows() == m && b.rows() == k && b.cols() == n && c.innerStride() == 1);
  if (m == 0 || n == 0 || k == 0) return;
  constexpr int lhs = detail::IsTranspose<A>::value ? Eigen::RowMajor : Eigen::ColMajor;
  constexpr int rhs = detail::IsTranspose<B>::value ? Eigen::RowMajor : Eigen::ColMajor;
  const auto [pa, lda] = detail::operand(a);
  const auto [pb, ldb] = detail::operand(b);
  detail::KeptBlocking<T> blocking(m, n, k);
  Eigen::internal::general_matrix_matrix_product<Eigen::Index, T, lhs, false, T, rhs, false,
                                                 Eigen::ColMajor, 1>::run(m, n, k, pa, lda, pb, ldb,
                                                                          c.data(), 1,
                                                                          c.outerStride(), T(1),
                                                                          blocking);
}

// The share of the packed product's micro-kernel rows that a product of m
// rows fills: the micro-kernel computes mr rows at once (for float, 48 with
// AVX-512, 24 with AVX2), the last block of a product partly empty.
template <class T> double row_fill(Eigen::Index m) {
  constexpr Eigen::Index mr = Eigen::internal::gebp_traits<T, T>::mr;
  return double(m) / double((m + mr - 1) / mr * mr);
}

} // namespace pm::kernels
