// libFuzzer target: the CSV reader and the number syntax of edge lists.
#include <cstdint>

#include "pm/io/csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    const pm::io::CsvTable t = pm::io::parse_csv(std::string(text), "fuzz.csv");
    for (std::size_t r = 0; r < t.size(); ++r)
      for (const std::string_view cell : t.row(r)) (void)pm::io::rational_from_text(cell);
  } catch (const pm::Error &) {
  }
  return 0;
}
