#pragma once
// Eigen views over the kernels' raw buffers, and the two Eigen settings the
// kernels' determinism rests on:
// - the kernels parallelise over the batch themselves, in a partition fixed
//   independently of the thread count; Eigen's own matrix-product threading
//   would split the work by thread count, so it is switched off;
// - Eigen evaluates small products coefficient by coefficient, with sums
//   whose order follows the alignment of the operands' addresses; every
//   product goes through the packed matrix-product (or matrix-vector) code
//   instead, whose order depends only on the sizes.
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
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

namespace pm::kernels {

// A column-major matrix with an arbitrary column stride: a block of a batch
// (rows = channels, columns = samples) or of a weight matrix.
template <class T>
using MatrixView = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>, Eigen::Unaligned,
                              Eigen::OuterStride<>>;
template <class T>
using ConstMatrixView = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>,
                                   Eigen::Unaligned, Eigen::OuterStride<>>;

} // namespace pm::kernels
