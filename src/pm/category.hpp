#pragma once
// The category-theoretic core: finite spaces, maps, measures, spans and
// parametric spans (see spec/spans.md).
#include "pm/category/batch.hpp"
#include "pm/category/fibre_product.hpp"
#include "pm/category/finite_set.hpp"
#include "pm/category/map.hpp"
#include "pm/category/parametric_span.hpp"
#include "pm/category/pullback.hpp"
#include "pm/category/pushforward.hpp"
#include "pm/category/scalar.hpp"
#include "pm/category/span.hpp"
#include "pm/category/span_iso.hpp"
