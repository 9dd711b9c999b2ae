#pragma once
// The validator's verdicts, in the manner of oneDNN's benchdnn: each law run
// on a subject ends passed, failed, too weak (the cases were mostly vacuous,
// e.g. all compared values zero, so passing proves little) or not applicable
// (the law does not concern this subject); a lint of a model file (edges
// dropped by range checks, unused parameters, …) is a warning, which is
// printed with its count but fails nothing. A result keeps the number of
// cases, the largest error seen against its bound, the seed that reproduces
// the run and, on failure, a shrunk counterexample.
#include <cstdint>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

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

struct LawResult {
  std::string law;     // the law ID of spec/ (e.g. PSPAN-ADJOINT)
  std::string subject; // the layer or machine
  Status status = Status::passed;
  std::size_t cases = 0; // cases run
  bool exact = true;     // compared with == (no bound)
  double max_error = 0;  // the largest |lhs − rhs| seen
  double bound = 0;      // its bound γ_n (M_lhs + M_rhs) (0 when exact)
  std::uint64_t seed = 0;
  std::string detail;   // counterexample, or why not applicable / too weak
  bool measured = true; // false for counts and comparisons without an error to show
};

struct Report {
  std::vector<LawResult> results;

  bool passed() const {
    for (const auto &r : results)
      if (r.status == Status::failed || r.status == Status::too_weak) return false;
    return true;
  }
  void append(const Report &other) {
    results.insert(results.end(), other.results.begin(), other.results.end());
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

// A plain-text table: one line per result, then the details of failures.
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
    if (!r.detail.empty() && r.status != Status::passed)
      os << r.law << " on " << r.subject << " (" << status_name(r.status) << "): " << r.detail
         << "\n";
  std::size_t counts[5] = {0, 0, 0, 0, 0};
  for (const auto &r : report.results) ++counts[int(r.status)];
  os << counts[0] << " passed, " << counts[1] << " failed, " << counts[2] << " too weak, "
     << counts[3] << " not applicable";
  if (counts[4]) os << ", " << counts[4] << (counts[4] == 1 ? " warning" : " warnings");
  os << "\n";
  return os.str();
}

inline nlohmann::json to_json(const Report &report) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto &r : report.results)
    out.push_back({{"law", r.law},
                   {"subject", r.subject},
                   {"status", status_name(r.status)},
                   {"cases", r.cases},
                   {"exact", r.exact},
                   {"max_error", r.max_error},
                   {"bound", r.bound},
                   {"seed", r.seed},
                   {"detail", r.detail}});
  return {{"passed", report.passed()}, {"results", out}};
}

} // namespace pm
