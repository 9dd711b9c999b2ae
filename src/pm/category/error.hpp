#pragma once
// Errors of the category core. Every message names the object, the index (or
// field) at fault and what was expected, so that a user can find the bad datum
// without a debugger.
#include <sstream>
#include <stdexcept>
#include <string>

namespace pm {

class Error : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {
template <class... Parts> [[noreturn]] void fail(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}
} // namespace detail

// Throws pm::Error with the concatenated message unless `condition` holds.
template <class... Parts> void require(bool condition, const Parts &...parts) {
  if (!condition) detail::fail(parts...);
}

} // namespace pm
