#pragma once
// The look of pmach dot, shared by the full and the summary form: short
// decimal labels, one colour per parameter with a legend (or parameter
// labels when the colours run out), and the three kinds of edge of a span on
// graded spaces: kept, dropped by cleaning, and not raising the grading.
#include <charconv>
#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "pm/category/parametric_span.hpp"
#include "pm/category/scalar.hpp"
#include "pm/machine/clean.hpp"

namespace pmach::dot {

// A scalar as a short decimal (0.333, 0.5, -2, 1e-300): a picture shows
// three significant digits, never 6004799503160661/18014398509481984.
inline std::string decimal(const pm::Rational &q) {
  if (boost::multiprecision::denominator(q) == 1 && abs(q) < 1000000) {
    std::ostringstream os;
    os << q;
    return os.str();
  }
  const double x = q.convert_to<double>();
  char buf[32];
  if (std::isfinite(x) && (x != 0 || q == 0)) {
    const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 3);
    return std::string(buf, r.ptr);
  }
  // Beyond the range of double (a measure 1e400 or 1e-400, read exactly):
  // |q| = m · 10^e with 1 ≤ m < 10, found on the rational itself.
  using boost::multiprecision::cpp_int;
  const cpp_int n = abs(boost::multiprecision::numerator(q)),
                d = boost::multiprecision::denominator(q);
  long e = long((long(msb(n)) - long(msb(d))) * 0.3010299956639812); // log10(2)
  const pm::Rational ten_e =
      pm::Rational(boost::multiprecision::pow(cpp_int(10), unsigned(std::abs(e))));
  pm::Rational m = abs(q);
  if (e >= 0)
    m /= ten_e;
  else
    m *= ten_e;
  for (; m >= 10; ++e) m /= 10;
  for (; m < 1; --e) m *= 10;
  const auto r =
      std::to_chars(buf, buf + sizeof buf, m.convert_to<double>(), std::chars_format::general, 3);
  return std::string(q < 0 ? "-" : "") + std::string(buf, r.ptr) + "e" + std::to_string(e);
}

// name followed by the number n ("x12", "level 3"), appended rather than
// prepended (GCC 12 warns, wrongly, on "literal" + std::string temporaries).
inline std::string numbered(std::string name, pm::Index n) {
  name += std::to_string(n);
  return name;
}

// (i, j, k): the multi-index of point i of the shape.
inline std::string multi_index(const pm::Shape &shape, pm::Index i) {
  std::string s = "(";
  const auto m = shape.multi(i);
  for (std::size_t k = 0; k < m.size(); ++k) {
    if (k) s += ",";
    s += std::to_string(m[k]);
  }
  return s + ")";
}

// 3×9×9, or "one point" for rank 0.
inline std::string extents(const pm::Shape &shape) {
  if (shape.rank() == 0) return "one point";
  std::string s;
  for (pm::Index k = 0; k < shape.rank(); ++k) {
    if (k) s += "×";
    s += std::to_string(shape.extents()[k]);
  }
  return s;
}

// A DOT string; a line break becomes Graphviz's centred \n.
inline std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out + "\"";
}

// What happens to an edge of a span on graded spaces (cleaning, clean.hpp):
// kept, dropped because its parameter has an offending edge, or itself an
// offender (d(s(e)) ≥ d(t(e))). Without a grading every edge is kept.
enum class Fate { kept, cleaned, offender };

inline std::vector<Fate> fates(const pm::ParametricSpan<pm::Rational> &a, const pm::Grading *source,
                               const pm::Grading *target) {
  std::vector<Fate> f(a.apex(), Fate::kept);
  if (!source || !target) return f;
  std::vector<bool> valid(a.parameters(), true);
  for (pm::Index e = 0; e < a.apex(); ++e)
    if ((*source)(a.span.s(e)) >= (*target)(a.span.t(e))) {
      f[e] = Fate::offender;
      valid[a.pi(e)] = false;
    }
  for (pm::Index e = 0; e < a.apex(); ++e)
    if (f[e] == Fate::kept && !valid[a.pi(e)]) f[e] = Fate::cleaned;
  return f;
}

inline constexpr const char *offender_colour = "#d62728";

// Edges are coloured by parameter while the palette lasts (red is kept for
// the offenders); beyond it they are black and labelled by their parameter.
class Parameters {
public:
  Parameters(pm::Shape shape, bool given) : shape_(std::move(shape)), given_(given) {}

  bool coloured() const { return given_ && shape_.size() <= std::size(palette_); }

  // The colour of the edges of parameter p (black when not coloured).
  const char *colour(pm::Index p) const { return coloured() ? palette_[p] : "#000000"; }

  // The edge's own label: its parameter when colours ran out, and its weight
  // when it is not 1.
  std::string edge_label(pm::Index p, const pm::Rational &mu) const {
    std::string s = given_ && !coloured() ? "w" + multi_index(shape_, p) : "";
    if (mu == 1) return s;
    if (!s.empty()) s += " · ";
    s += decimal(mu);
    return s;
  }

  // A table node: the parameters' shape, each parameter's colour when the
  // edges are coloured (not in a summary, whose edges are bundles), and the
  // meaning of the labels and of the edge styles that occur.
  void legend(std::ostream &os, bool summary, bool cleaned, bool offenders) const {
    os << "  legend [shape=plaintext, fontsize=9, label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" "
          "CELLSPACING=\"0\" CELLPADDING=\"2\">\n";
    const std::string size = numbered(" (", shape_.size()) + ")";
    row(os, "", given_ ? "parameters " + extents(shape_) + size : "no parameters (fixed weights)");
    if (summary)
      row(os, "", "edge label: how many edges (dropped, not raising the grading)");
    else if (coloured())
      for (pm::Index p = 0; p < shape_.size(); ++p)
        row(os, palette_[p], "w" + multi_index(shape_, p));
    else if (given_)
      row(os, "", "edge label w(index): its parameter");
    if (!summary) row(os, "", "edge label: its weight when not 1");
    if (cleaned) row(os, "", "dashed: dropped by cleaning");
    if (offenders) row(os, offender_colour, "red dashed: does not raise the grading");
    os << "  </TABLE>>];\n";
  }

private:
  static void row(std::ostream &os, const std::string &colour, const std::string &text) {
    os << "    <TR>";
    if (!colour.empty())
      os << "<TD BGCOLOR=\"" << colour << "\">   </TD><TD>" << text << "</TD>";
    else
      os << "<TD COLSPAN=\"2\">" << text << "</TD>";
    os << "</TR>\n";
  }

  // Tableau 10 without its red: nine colours told apart by most readers.
  static constexpr const char *palette_[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                             "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  pm::Shape shape_;
  bool given_;
};

} // namespace pmach::dot
