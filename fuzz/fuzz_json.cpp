// libFuzzer target: the JSON reader of layers and machines must answer every
// text with a description or a one-line pm::Error. Files named by the input
// are resolved against a directory that does not exist, so the target reads
// nothing but its input (absolute paths end at the regular-file check).
#include <cstdint>
#include <cstdlib>

#include "pm/io/machine_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    const auto model = pm::io::parse_model(pm::io::parse_json(text, "/nonexistent-pm-fuzz/m.json"),
                                           "/nonexistent-pm-fuzz/m.json");
    // What was accepted must also build and validate as a span or machine.
    if (const auto *layer = std::get_if<pm::io::LayerDescription>(&model))
      layer->span.validate("fuzzed layer");
    else
      pm::io::make_machine<double>(std::get<pm::io::MachineDescription>(model));
  } catch (const pm::Error &e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) std::abort();
  }
  return 0;
}
