#pragma once
// The validator's verdicts, in the manner of oneDNN's benchdnn: each law run
// on a subject ends passed, failed, too weak (the cases were mostly vacuous,
// e.g. all compared values zero, so passing proves little) or not applicable
// (the law does not concern this subject); a lint of a model file (edges
// dropped by range checks, unused parameters, …) is a warning, which is
// printed with its count but fails nothing. A result keeps the number of
// cases, the largest error seen against its bound, the seed that reproduces
// the run and, on failure, a shrunk counterexample: named tensors with their
// shapes (and axis names where known) and scalars, printed sparsely in
// multi-index coordinates, written in full to JSON (docs/report.schema.json)
// and read as NumPy arrays by the Python package.
#include <chrono>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pm/version.hpp"

namespace pm {

enum class Status { passed, failed, too_weak, not_applicable, warning };

inline const char *status_name(Status s) {
  switch (s) {
  case Status::passed:
    return "passed";
  case Status::failed:
    return "failed";
  case Status::too_weak:
    return "too weak";
  case Status::not_applicable:
    return "not applicable";
  case Status::warning:
    return "warning";
  }
  return "?";
}

// The version of the JSON report's layout (docs/report.schema.json): raised
// whenever a field changes meaning or disappears.
inline constexpr int report_schema_version = 1;

// A tensor of a counterexample, kept sparse: the row-major indices of its
// non-zero entries, ascending, and their values as text, exact ("-3/4") or
// to 17 significant digits, so that nothing is lost on the way to JSON.
struct CounterexampleTensor {
  std::string name;
  std::vector<std::size_t> shape;   // extents; {n} for a flat vector
  std::vector<std::string> axes;    // one name per axis, or empty when unknown
  std::vector<std::size_t> indices; // of the non-zero entries
  std::vector<std::string> values;  // their values
  bool in_text = true;              // printed under the row (false: the detail lists it already)

  std::size_t size() const {
    std::size_t n = 1;
    for (std::size_t e : shape) n *= e;
    return n;
  }
};

struct Counterexample {
  std::vector<CounterexampleTensor> tensors;
  std::vector<std::pair<std::string, std::string>> scalars; // name, value as text

  bool empty() const { return tensors.empty() && scalars.empty(); }
};

template <class S> std::string value_text(const S &x) {
  std::ostringstream os;
  if constexpr (std::is_floating_point_v<S>) os << std::setprecision(17);
  os << x;
  return os.str();
}

// The tensor `name` of the given shape from its dense row-major values.
template <class S>
CounterexampleTensor sparse_tensor(std::string name, std::vector<std::size_t> shape,
                                   const std::vector<S> &dense,
                                   std::vector<std::string> axes = {}) {
  CounterexampleTensor t{std::move(name), std::move(shape), std::move(axes), {}, {}};
  if (t.axes.size() != t.shape.size()) t.axes.clear();
  for (std::size_t i = 0; i < dense.size(); ++i)
    if (!(dense[i] == S(0))) {
      t.indices.push_back(i);
      t.values.push_back(value_text(dense[i]));
    }
  return t;
}

struct LawResult {
  std::string law;     // the law ID of spec/ (e.g. PSPAN-ADJOINT)
  std::string subject; // the layer or machine
  Status status = Status::passed;
  std::size_t cases = 0; // cases run
  bool exact = true;     // compared with == (no bound)
  double max_error = 0;  // the largest |lhs − rhs| seen
  double bound = 0;      // its bound γ_n (M_lhs + M_rhs) (0 when exact)
  std::uint64_t seed = 0;
  std::string detail;                 // what went wrong, or why not applicable / too weak
  bool measured = true;               // false for counts and comparisons without an error to show
  Counterexample counterexample = {}; // of a failure, where the check produces one
  std::string repro = {};             // one command that runs this row again
  // Wall-clock seconds from the previous row of its report (or the report's
  // start) to this one: the row's own work and what it needed first
  // (Report::add). Not part of a report's meaning: two runs differ in it.
  double seconds = 0;
  // The cases asked for, when a value budget (ValidateOptions::value_budget)
  // ran fewer and the detail says so; 0 otherwise. Such a row's detail is
  // printed under the text table and in JUnit even when it passed. Not in
  // JSON, whose `cases` and `detail` say the same.
  std::size_t cases_requested = 0;
};

// Where each row goes as it is computed, besides its report, while a
// RowStream lives: a long check (`pmach check --progress`) names its rows as
// they finish instead of only at the end. One stream at a time; rows added
// from any thread reach it one by one. A row's status is the one it was
// computed with (a comparison row left "not applicable" may still become
// "too weak" in the final report).
class RowStream {
public:
  using Sink = std::function<void(const LawResult &)>;
  explicit RowStream(Sink sink) {
    const std::lock_guard<std::mutex> lock(mutex());
    current() = std::move(sink);
  }
  ~RowStream() {
    const std::lock_guard<std::mutex> lock(mutex());
    current() = nullptr;
  }
  RowStream(const RowStream &) = delete;
  RowStream &operator=(const RowStream &) = delete;
  static void emit(const LawResult &r) {
    const std::lock_guard<std::mutex> lock(mutex());
    if (current()) current()(r);
  }

private:
  static Sink &current() {
    static Sink sink;
    return sink;
  }
  static std::mutex &mutex() {
    static std::mutex m;
    return m;
  }
};

struct Report {
  std::vector<LawResult> results;
  // The rows that ValidateOptions::select left out, not computed, by law and
  // subject: what a selection of nothing can name instead.
  std::vector<std::pair<std::string, std::string>> left_out = {};

  bool passed() const {
    for (const auto &r : results)
      if (r.status == Status::failed || r.status == Status::too_weak) return false;
    return true;
  }
  // The rows' clock: Report::add times each row from the one before.
  std::chrono::steady_clock::time_point lap = std::chrono::steady_clock::now();

  // A row just computed, timed (LawResult::seconds).
  void add(LawResult r) {
    const auto now = std::chrono::steady_clock::now();
    r.seconds = std::chrono::duration<double>(now - lap).count();
    lap = now;
    results.push_back(std::move(r));
    RowStream::emit(results.back());
  }
  double seconds() const {
    double total = 0;
    for (const auto &r : results) total += r.seconds;
    return total;
  }
  // Rows timed by their own report: the next row added here is timed from
  // now, not from before them (which counted their time twice).
  void append(const Report &other) {
    lap = std::chrono::steady_clock::now();
    results.insert(results.end(), other.results.begin(), other.results.end());
    left_out.insert(left_out.end(), other.left_out.begin(), other.left_out.end());
  }
};

// "0 (exact)" or "1.2e-17 ≤ 3.4e-16".
inline std::string error_text(const LawResult &r) {
  std::ostringstream os;
  os << std::setprecision(3);
  if (r.status == Status::not_applicable || r.status == Status::warning || !r.measured) return "-";
  if (r.exact)
    os << r.max_error << " (exact)";
  else
    os << r.max_error << " / " << r.bound;
  return os.str();
}

// Entries printed per tensor; the rest are counted.
inline constexpr std::size_t max_printed_entries = 8;

// "(3, 2)" of a shape, or of a multi-index.
inline std::string tuple_text(const std::vector<std::size_t> &v,
                              const std::vector<std::string> &names = {}) {
  std::string s;
  for (std::size_t j = 0; j < v.size(); ++j)
    s += (j ? ", " : "") + (names.size() == v.size() ? names[j] + "=" : std::string()) +
         std::to_string(v[j]);
  return s;
}

// A tensor, sparsely: its shape, then its first non-zero entries in
// multi-index coordinates, one a line (`w[k=1, c=0, o=2] = 1/6`).
inline std::string to_text(const CounterexampleTensor &t, const std::string &indent = "  ") {
  std::ostringstream os;
  os << indent << t.name << ", shape (" << tuple_text(t.shape) << ")";
  if (!t.axes.empty()) {
    os << ", axes (";
    for (std::size_t j = 0; j < t.axes.size(); ++j) os << (j ? ", " : "") << t.axes[j];
    os << ")";
  }
  if (t.indices.empty()) return os.str() + ": all " + std::to_string(t.size()) + " entries 0\n";
  os << ": " << t.indices.size() << " of " << t.size() << " entries non-zero\n";
  for (std::size_t k = 0; k < t.indices.size() && k < max_printed_entries; ++k) {
    std::vector<std::size_t> m(t.shape.size());
    for (std::size_t j = t.shape.size(), f = t.indices[k]; j-- > 0; f /= t.shape[j])
      m[j] = f % t.shape[j];
    os << indent << "  " << t.name << "[" << tuple_text(m, t.axes) << "] = " << t.values[k] << "\n";
  }
  if (t.indices.size() > max_printed_entries)
    os << indent << "  ... and " << t.indices.size() - max_printed_entries << " more\n";
  return os.str();
}

// What a failing (or too weak, not applicable, warning) row says under the
// table: its detail, its counterexample's tensors and its repro command.
inline std::string details_text(const LawResult &r) {
  std::ostringstream os;
  os << r.law << " on " << r.subject << " (" << status_name(r.status) << "): " << r.detail << "\n";
  for (const auto &t : r.counterexample.tensors)
    if (t.in_text) os << to_text(t);
  if (!r.repro.empty()) os << "  repro: " << r.repro << "\n";
  return os.str();
}

inline std::string summary_text(const Report &report) {
  std::size_t counts[5] = {0, 0, 0, 0, 0};
  for (const auto &r : report.results) ++counts[int(r.status)];
  std::ostringstream os;
  os << counts[0] << " passed, " << counts[1] << " failed, " << counts[2] << " too weak, "
     << counts[3] << " not applicable";
  if (counts[4]) os << ", " << counts[4] << (counts[4] == 1 ? " warning" : " warnings");
  return os.str();
}

// A plain-text table: one line per result, then the details of the rows that
// did not pass and of those that ran fewer cases than asked for.
inline std::string to_text(const Report &report) {
  std::size_t wl = 3, ws = 7;
  for (const auto &r : report.results) {
    wl = std::max(wl, r.law.size());
    ws = std::max(ws, r.subject.size());
  }
  std::ostringstream os;
  auto row = [&](const std::string &law, const std::string &subject, const std::string &status,
                 const std::string &cases, const std::string &error, const std::string &seed) {
    os << std::left << std::setw(int(wl)) << law << "  " << std::setw(int(ws)) << subject << "  "
       << std::setw(14) << status << "  " << std::right << std::setw(6) << cases << "  "
       << std::left << std::setw(22) << error << "  " << seed << "\n";
  };
  row("law", "subject", "status", "cases", "error / bound", "seed");
  for (const auto &r : report.results)
    row(r.law, r.subject, status_name(r.status), std::to_string(r.cases), error_text(r),
        std::to_string(r.seed));
  for (const auto &r : report.results)
    if (!r.detail.empty() && (r.status != Status::passed || r.cases_requested > 0))
      os << details_text(r);
  os << summary_text(report) << "\n";
  return os.str();
}

inline nlohmann::json to_json(const Counterexample &c) {
  nlohmann::json tensors = nlohmann::json::array(), scalars = nlohmann::json::object();
  for (const auto &t : c.tensors)
    tensors.push_back({{"name", t.name},
                       {"shape", t.shape},
                       {"axes", t.axes},
                       {"indices", t.indices},
                       {"values", t.values}});
  for (const auto &[name, value] : c.scalars) scalars[name] = value;
  return {{"tensors", tensors}, {"scalars", scalars}};
}

inline nlohmann::json to_json(const Report &report) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto &r : report.results) {
    nlohmann::json row = {
        {"law", r.law},     {"subject", r.subject}, {"status", status_name(r.status)},
        {"cases", r.cases}, {"exact", r.exact},     {"max_error", r.max_error},
        {"bound", r.bound}, {"seed", r.seed},       {"detail", r.detail}};
    if (!r.counterexample.empty()) row["counterexample"] = to_json(r.counterexample);
    if (!r.repro.empty()) row["repro"] = r.repro;
    row["seconds"] = r.seconds;
    out.push_back(std::move(row));
  }
  return {{"schema_version", report_schema_version},
          {"version", pm::version},
          {"passed", report.passed()},
          {"seconds", report.seconds()},
          {"results", out}};
}

namespace detail {
// Text as XML character data or attribute value: the five special
// characters escaped, and the characters XML 1.0 forbids (controls other
// than tab, newline and carriage return) replaced by '?'.
inline std::string xml_escaped(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ? '?' : char(c);
    }
  }
  return out;
}
// Seconds as JUnit writes them: fixed, to the millisecond.
inline std::string seconds_text(double s) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << s;
  return os.str();
}
} // namespace detail

// The report as JUnit XML, the format CI systems read: one testcase per row
// (classname the subject, name the law); failed and too weak rows carry a
// <failure> with the first line of the detail as message and the details
// with counterexample and repro as text; not applicable rows are skipped;
// warnings, and passed rows that ran fewer cases than asked for, pass with
// their text as system-out.
inline std::string to_junit(const Report &report, const std::string &suite) {
  std::size_t failures = 0, skipped = 0;
  for (const auto &r : report.results) {
    failures += r.status == Status::failed || r.status == Status::too_weak;
    skipped += r.status == Status::not_applicable;
  }
  using detail::seconds_text;
  using detail::xml_escaped;
  std::ostringstream os;
  const std::string counts = " tests=\"" + std::to_string(report.results.size()) +
                             "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\" time=\"" +
                             seconds_text(report.seconds()) + "\"";
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<testsuites name=\"pmach check\"" << counts << ">\n"
     << "  <testsuite name=\"" << xml_escaped(suite) << "\"" << counts << ">\n"
     << "    <properties><property name=\"version\" value=\"" << xml_escaped(pm::version)
     << "\"/></properties>\n";
  for (const auto &r : report.results) {
    os << "    <testcase classname=\"" << xml_escaped(r.subject) << "\" name=\""
       << xml_escaped(r.law) << "\" time=\"" << seconds_text(r.seconds) << "\"";
    const std::string first_line = r.detail.substr(0, r.detail.find('\n'));
    switch (r.status) {
    case Status::passed:
      if (r.cases_requested == 0) {
        os << "/>\n";
        break;
      }
      [[fallthrough]]; // its note, as a warning's text
    case Status::warning:
      os << ">\n      <system-out>" << xml_escaped(details_text(r))
         << "</system-out>\n    </testcase>\n";
      break;
    case Status::failed:
    case Status::too_weak:
      os << ">\n      <failure type=\"" << status_name(r.status) << "\" message=\""
         << xml_escaped(first_line) << "\">" << xml_escaped(details_text(r))
         << "</failure>\n    </testcase>\n";
      break;
    case Status::not_applicable:
      os << ">\n      <skipped message=\"" << xml_escaped(first_line) << "\"/>\n    </testcase>\n";
      break;
    }
  }
  os << "  </testsuite>\n</testsuites>\n";
  return os.str();
}

} // namespace pm
