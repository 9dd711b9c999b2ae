// libFuzzer target: the span difference and the full-size comparison of a
// layer read from any text must answer with a report or a one-line
// pm::Error, never a crash — parameterless layers (a rank-0 parameter
// space) included. The layer read is compared with itself with one edge
// moved (span_diff and its pattern search) and, as an implementation, with
// its description (CONF-EQUAL and its localisation).
#include <cstdint>
#include <cstdlib>

#include "pm/io/machine_format.hpp"
#include "pm/validate/conformance.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    const auto model = pm::io::parse_model(pm::io::parse_json(text, "/nonexistent-pm-fuzz/m.json"),
                                           "/nonexistent-pm-fuzz/m.json");
    const auto *layer = std::get_if<pm::io::LayerDescription>(&model);
    // Small layers only: the comparison's cost is the span's size times the
    // localisation's calls.
    if (!layer || layer->span.apex() > 256 || layer->span.source() > 256 ||
        layer->span.target() > 256 || layer->span.parameters() > 256)
      return 0;
    pm::ParametricSpan<pm::Rational> moved = layer->span;
    if (moved.apex() > 0 && moved.source() > 0) {
      pm::Index &s = moved.span.s.images.back();
      s = (s + 1) % moved.source();
    }
    const pm::SpanDiff d = pm::span_diff(layer->span, moved, pm::validation::shapes_of(*layer));
    if (pm::to_text(d).empty()) std::abort();
    if (!layer->bias) {
      const pm::SpanLayer<double> impl{pm::io::with_scalar<double>(moved)};
      if (pm::check_equal(*layer, impl, 1).results.empty()) std::abort();
    }
  } catch (const pm::Error &e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) std::abort();
  }
  return 0;
}
