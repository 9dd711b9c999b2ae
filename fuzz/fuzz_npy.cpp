// libFuzzer target: the .npy reader must answer every byte string with an
// array or a pm::Error, never a crash, a hang or a huge allocation; and what
// it accepts must survive a write/read round trip unchanged.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "pm/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char *>(data), size);
  pm::io::NpyArray a;
  try {
    a = pm::io::parse_npy(bytes, "fuzz.npy", pm::io::Finite::allow);
  } catch (const pm::Error &) {
    return 0;
  }
  const pm::io::NpyArray b = pm::io::parse_npy(pm::io::format_npy(a.shape, a.data, a.dtype),
                                               "again.npy", pm::io::Finite::allow);
  if (b.shape != a.shape || b.dtype != a.dtype || b.data.size() != a.data.size() ||
      (!a.data.empty() &&
       std::memcmp(b.data.data(), a.data.data(), a.data.size() * sizeof(double)) != 0))
    std::abort();
  return 0;
}
