#pragma once
// Pointwise nonlinearities σ of a graded span machine, with their derivative
// σ'. The transcendental ones (tanh, sigmoid, softplus) exist only for
// inexact scalars; identity, relu, a polynomial and an array σ are exact over
// rationals. An array σ multiplies entrywise by fixed slopes s, z = z₀ + s ⊙ y:
// it makes the machine linear, and it is how σ'(y) enters the backward pass.
#include <cmath>
#include <limits>
#include <string>

#include "pm/category/batch.hpp"

namespace pm {

// Scalars for which tanh, exp and log1p are meaningful.
template <class S>
constexpr bool has_transcendentals =
    std::numeric_limits<S>::is_specialized && !std::numeric_limits<S>::is_exact;

template <class S> class Sigma {
public:
  enum class Kind { identity, tanh, sigmoid, relu, softplus, polynomial, array };

  static Sigma identity() { return Sigma(Kind::identity); }
  static Sigma tanh() { return Sigma(Kind::tanh); }
  static Sigma sigmoid() { return Sigma(Kind::sigmoid); }
  // relu(y) = max(y, 0); its derivative is taken to be 0 at y = 0.
  static Sigma relu() { return Sigma(Kind::relu); }
  static Sigma softplus() { return Sigma(Kind::softplus); }
  // σ(y) = Σ_k c_k y^k with c = coefficients.
  static Sigma polynomial(std::vector<S> coefficients) {
    Sigma s(Kind::polynomial);
    s.coefficients_ = std::move(coefficients);
    return s;
  }
  // σ(y)(i, b) = s(i, b) · y(i, b); a slope batch with one column applies to
  // every sample.
  static Sigma array(Batch<S> slopes) {
    Sigma s(Kind::array);
    s.slopes_ = std::move(slopes);
    return s;
  }

  Kind kind() const { return kind_; }
  const std::vector<S> &coefficients() const { return coefficients_; }
  const Batch<S> &slopes() const { return slopes_; }

  std::string name() const {
    switch (kind_) {
    case Kind::identity:
      return "identity";
    case Kind::tanh:
      return "tanh";
    case Kind::sigmoid:
      return "sigmoid";
    case Kind::relu:
      return "relu";
    case Kind::softplus:
      return "softplus";
    case Kind::polynomial:
      return "polynomial";
    case Kind::array:
      return "array";
    }
    return "unknown";
  }

  // An array σ must match the machine's index set and batch; other kinds fit
  // every shape. `cols` = 0 checks the rows only.
  void require_shape(Index rows, Index cols, const std::string &what) const {
    if (kind_ != Kind::array) return;
    require(slopes_.rows == rows, what, ": array sigma has ", slopes_.rows, " rows, expected ",
            rows);
    require(cols == 0 || slopes_.cols == 1 || slopes_.cols == cols, what, ": array sigma has ",
            slopes_.cols, " columns, expected 1 or the batch size ", cols);
  }

  // σ at entry (i, b) of a batch, whose pre-activation is y.
  S value(const S &y, Index i, Index b) const {
    switch (kind_) {
    case Kind::identity:
      return y;
    case Kind::relu:
      return y > S(0) ? y : S(0);
    case Kind::polynomial:
      return horner(coefficients_, y);
    case Kind::array:
      return slope(i, b) * y;
    default:
      return transcendental(y, false);
    }
  }

  // σ' at entry (i, b).
  S derivative(const S &y, Index i, Index b) const {
    switch (kind_) {
    case Kind::identity:
      return S(1);
    case Kind::relu:
      return y > S(0) ? S(1) : S(0);
    case Kind::polynomial:
      return horner(derivative_coefficients(), y);
    case Kind::array:
      return slope(i, b);
    default:
      return transcendental(y, true);
    }
  }

private:
  explicit Sigma(Kind k) : kind_(k) {}

  const S &slope(Index i, Index b) const { return slopes_(i, slopes_.cols == 1 ? 0 : b); }

  static S horner(const std::vector<S> &c, const S &y) {
    S acc = S(0);
    for (Index k = c.size(); k-- > 0;) acc = acc * y + c[k];
    return acc;
  }

  std::vector<S> derivative_coefficients() const {
    std::vector<S> d;
    for (Index k = 1; k < coefficients_.size(); ++k) d.push_back(S(int(k)) * coefficients_[k]);
    return d;
  }

  S transcendental(const S &y, bool derivative) const {
    if constexpr (has_transcendentals<S>) {
      using std::exp;
      using std::log1p;
      using std::tanh;
      if (kind_ == Kind::tanh) {
        const S t = tanh(y);
        return derivative ? S(1) - t * t : t;
      }
      // sigmoid(y) = 1 / (1 + e^{−y}) is also the derivative of softplus.
      const S sg = S(1) / (S(1) + exp(-y));
      if (kind_ == Kind::sigmoid) return derivative ? sg * (S(1) - sg) : sg;
      if (derivative) return sg;
      // softplus(y) = log(1 + e^y), written so that e^y cannot overflow.
      return y > S(0) ? S(y + log1p(exp(-y))) : S(log1p(exp(y)));
    } else {
      detail::fail("Sigma ", name(), ": not available for exact scalars (use identity, relu, ",
                   "polynomial or array)");
    }
  }

  Kind kind_ = Kind::identity;
  std::vector<S> coefficients_;
  Batch<S> slopes_;
};

} // namespace pm
