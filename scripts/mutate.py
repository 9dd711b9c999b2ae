#!/usr/bin/python3
"""Mutation testing of the library, and kill rates of the law mutants.

  mutate.py [--only ID,...] [--jobs 2] [--deadline HH:MM] [--work DIR]
      Applies each source mutation of MUTANTS (below) in turn to a snapshot of
      the committed tree (`git archive HEAD`, so the working tree is never
      touched), rebuilds only the test executables listed for that mutation,
      runs their tests (the law properties and unit tests, not the law mutant
      tests, at the suite's default case count and a fixed seed), records
      each result in docs/mutation.tsv and renders docs/mutation.md: one row
      per mutation (killed by which executable, or survived), the survivors
      with their explanation (EXPLAINED) and the closing line
      `N mutants, K killed, S survived` of the full run.
      A mutation that does not compile is listed as such and not counted.
      With --only the listed mutants are re-run against the current commit
      (after a test is added for a survivor) and recorded as re-runs; the
      full run's rows and closing line stay. With --deadline HH:MM (UTC) no
      mutant is started after that time, and the document says the run
      stopped early; --resume continues that run with the mutants it has not
      run (same seed; the document names the sittings). The mutation build compiles at -O1 (its tests at -Og, as
      in every build): faster to build, and the tests are small.

  mutate.py --render
      Renders docs/mutation.md again from docs/mutation.tsv (after EXPLAINED
      changes).

  mutate.py --kill-rates BUILD_DIR [--seeds 100]
      Runs every law mutant test of the property-test executables in BUILD_DIR
      with PM_KILL_SEEDS=N (property_tests/support/law.hpp): each mutant is
      searched for at the default case count from each of the seeds 1..N. The
      law tests are run once too, for their distribution of non-trivial cases.
      Writes both to property_tests/measured.tsv, which
      scripts/traceability.py puts into docs/traceability.md.

Not part of the default suite: a full mutation run rebuilds about fifty test
executables from source. docs/mutation.md gives the command and the run time.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Test executables and the Catch test specs to run in each (separate arguments
# are and-ed; law mutant tests excluded: under a library mutation only the
# properties and unit tests count).
NOT_MUTANT_TESTS = ("~*mutant*",)
SPANS = ("law_spans", NOT_MUTANT_TESTS)
MACHINES = ("law_machines", NOT_MUTANT_TESTS)
SOLVER = ("law_machines_solver", NOT_MUTANT_TESTS)
MFLOAT = ("law_machines_float", NOT_MUTANT_TESTS)
LAYERS = ("law_layers", NOT_MUTANT_TESTS)
SEEDS = ("law_layers_machines", ("~*mutant*", "~*authors*"))
UNIT_SPANS = ("test_category_spans", ())
UNIT_ISO_WEIGHTS = ("test_category_span_iso_weights", ())
UNIT_LAYERS = ("test_layers_layers", ())
UNIT_ROWS = ("test_layers_rows", ())
UNIT_SEED_GEOMETRY = ("test_layers_seed_geometry", ())
UNIT_EQUAL = ("test_validate_equal", ())
UNIT_IO_ROWS = ("test_io_layer_rows", ())


def kernels(spec):
    return ("law_kernels", (spec, "~*mutant*"))


# (id, file under src/pm, text to replace (must occur exactly once), replacement,
#  what the mistake is, executables to run)
MUTANTS = [
    # ---- category ---------------------------------------------------------
    ("identity-reversed", "category/map.hpp", "for (Index i = 0; i < n; ++i) f.images[i] = i;",
     "for (Index i = 0; i < n; ++i) f.images[i] = n - 1 - i;",
     "identity map is the reversal", [SPANS]),
    ("compose-first-image", "category/map.hpp",
     "h.images[i] = g.images[f.images[i]];", "h.images[i] = g.images[f.images[0]];",
     "composition reads f at index 0 only", [SPANS]),
    ("pullback-skip-last", "category/pullback.hpp",
     "for (Index a = 0; a < f.domain(); ++a) out[a] = phi[f.images[a]];",
     "for (Index a = 0; a + 1 < f.domain(); ++a) out[a] = phi[f.images[a]];",
     "pullback off by one: last entry left at zero", [SPANS]),
    ("integrate-dropped-measure", "category/pushforward.hpp",
     "out[f.images[a]] += mu[a] * psi[a];", "out[f.images[a]] += psi[a];",
     "integration drops the measure", [SPANS]),
    ("pushforward-overwrites", "category/pushforward.hpp",
     "for (Index a = 0; a < f.domain(); ++a) out[f.images[a]] += mu[a];",
     "for (Index a = 0; a < f.domain(); ++a) out[f.images[a]] = mu[a];",
     "pushforward overwrites instead of summing a fibre", [SPANS]),
    ("fibre-skips-first", "category/fibre_product.hpp",
     "for (Index b = 0; b < g.domain(); ++b) fibre[g.images[b]].push_back(b);",
     "for (Index b = 1; b < g.domain(); ++b) fibre[g.images[b]].push_back(b);",
     "fibre product off by one: pairs with b = 0 missing", [SPANS]),
    ("transpose-legs-kept", "category/span.hpp",
     "return Span<S>{a.t, a.s, a.mu}; }", "return Span<S>{a.s, a.t, a.mu}; }",
     "transpose does not swap the legs", [SPANS, UNIT_SPANS]),
    ("act-legs-swapped", "category/span.hpp",
     "return integrate(a.t, a.mu, pullback(a.s, phi));",
     "return integrate(a.s, a.mu, pullback(a.t, phi));",
     "a span acts with its legs swapped", [SPANS]),
    ("compose-measure-sum", "category/span.hpp",
     "c.mu[e] = a.mu[fp.p.images[e]] * b.mu[fp.q.images[e]];",
     "c.mu[e] = a.mu[fp.p.images[e]] + b.mu[fp.q.images[e]];",
     "composite weights added instead of multiplied", [SPANS]),
    ("compose-target-leg", "category/span.hpp",
     "Span<S> c{pm::compose(a.s, fp.p), pm::compose(b.t, fp.q), Measure<S>(fp.size())};",
     "Span<S> c{pm::compose(a.s, fp.p), pm::compose(b.t, fp.q), Measure<S>(fp.size(), S(1))};\n"
     "  if (fp.size() > 1) std::swap(c.t.images.front(), c.t.images.back());",
     "composite target leg of the first and last edge exchanged", [SPANS]),
    ("pcompose-flattening", "category/parametric_span.hpp",
     "c.pi.images[e] = a.pi.images[fp.p.images[e]] * b.parameters() + b.pi.images[fp.q.images[e]];",
     "c.pi.images[e] = b.pi.images[fp.q.images[e]] * a.parameters() + a.pi.images[fp.p.images[e]];",
     "composite parameters flattened in the other order", [SPANS]),
    ("tensor-order", "category/parametric_span.hpp",
     "for (const S &x : wa)\n    for (const S &y : wb) w.push_back(x * y);",
     "for (const S &y : wb)\n    for (const S &x : wa) w.push_back(x * y);",
     "tensor of parameters in the wrong loop order", [SPANS]),
    ("pact-ignores-parameters", "category/parametric_span.hpp",
     "return integrate(a.span.t, a.span.mu, hadamard(pullback(a.pi, w), pullback(a.span.s, phi)));",
     "return integrate(a.span.t, a.span.mu, pullback(a.span.s, phi));",
     "a layer ignores its parameters", [SPANS]),
    ("pgradient-dropped-measure", "category/parametric_span.hpp",
     "return integrate(a.pi, a.span.mu, hadamard(pullback(a.span.s, phi), pullback(a.span.t, g)));",
     "return integrate(a.pi, Measure<S>(a.apex(), S(1)),\n"
     "                   hadamard(pullback(a.span.s, phi), pullback(a.span.t, g)));",
     "parameter gradient drops the measure", [SPANS]),
    ("ptranspose-identity", "category/parametric_span.hpp",
     "return ParametricSpan<S>{transpose(a.span), a.pi};", "return ParametricSpan<S>{a.span, a.pi};",
     "parametric transpose does nothing", [SPANS]),
    ("iso-ignores-measure", "category/span_iso.hpp",
     "return std::tie(x.s.images[e], x.t.images[e], p.images[e], x.mu[e]);",
     "return std::tie(x.s.images[e], x.t.images[e], p.images[e]);",
     "isomorphism search ignores the weights", [SPANS, UNIT_SPANS]),
    ("iso-witness-weights", "category/span_iso.hpp",
     "b.t.images[f] != a.t.images[e] || !(b.mu[f] == a.mu[e]))",
     "b.t.images[f] != a.t.images[e])",
     "isomorphism check ignores the weights", [SPANS, UNIT_SPANS, UNIT_ISO_WEIGHTS]),
    ("batch-first-column", "category/batch.hpp",
     "for (Index b = 0; b < in.cols; ++b) out.set_column(b, op(in.column(b)));",
     "for (Index b = 0; b < in.cols; ++b) out.set_column(b, op(in.column(0)));",
     "a batch is acted on column 0 only", [SPANS]),
    # ---- machine ------------------------------------------------------------
    ("clean-over-strict", "machine/clean.hpp",
     "if (d(a.span.s(e)) >= d(a.span.t(e))) valid[a.pi(e)] = false;",
     "if (d(a.span.s(e)) + 1 >= d(a.span.t(e))) valid[a.pi(e)] = false;",
     "over-strict clean: drops the parameters of adjacent-level edges", [MACHINES]),
    ("clean-too-lax", "machine/clean.hpp",
     "if (d(a.span.s(e)) >= d(a.span.t(e))) valid[a.pi(e)] = false;",
     "if (d(a.span.s(e)) > d(a.span.t(e))) valid[a.pi(e)] = false;",
     "clean keeps edges within a level", [MACHINES]),
    ("clean-inverted", "machine/clean.hpp", "if (!valid[p]) out[p] = S(0);",
     "if (valid[p]) out[p] = S(0);", "clean zeroes the valid parameters", [MACHINES]),
    ("reversed-grading-identity", "machine/grading.hpp",
     "for (Index i = 0; i < g.size(); ++i) g[i] = levels_ + 1 - grades_[i];",
     "for (Index i = 0; i < g.size(); ++i) g[i] = grades_[i];",
     "the reversed grading is not reversed", [SOLVER]),
    ("plan-by-source", "machine/graded_span_machine.hpp",
     "if (valid[span_.pi(e)]) edges_into_[grading_(span_.span.t(e)) - 1].push_back(e);",
     "if (valid[span_.pi(e)]) edges_into_[grading_(span_.span.s(e)) - 1].push_back(e);",
     "level plan files an edge under its source's level", [SOLVER]),
    ("plan-keeps-invalid", "machine/graded_span_machine.hpp",
     "if (valid[span_.pi(e)]) edges_into_[grading_(span_.span.t(e)) - 1].push_back(e);",
     "edges_into_[grading_(span_.span.t(e)) - 1].push_back(e);",
     "level plan keeps edges of invalid parameters", [SOLVER]),
    ("solver-level-order", "machine/solver.hpp", "for (Index k = 0; k < m.levels(); ++k) {",
     "for (Index k = m.levels(); k-- > 0;) {", "the sweep visits the levels in reverse",
     [SOLVER]),
    ("solver-reads-y", "machine/solver.hpp",
     "acc[sp.t(e)] += sp.mu[e] * (w[m.span().pi(e)] * x.z(sp.s(e), b));",
     "acc[sp.t(e)] += sp.mu[e] * (w[m.span().pi(e)] * x.y(sp.s(e), b));",
     "the layer reads the wrong buffer (y instead of z)", [SOLVER]),
    ("solver-no-reset", "machine/solver.hpp",
     "    std::fill(acc.begin(), acc.end(), S(0));\n", "",
     "the accumulator is not reset between samples", [SOLVER]),
    ("solver-sigma-column", "machine/solver.hpp",
     "x.z(i, b) = z0(i, b) + m.sigma().value(x.y(i, b), i, b);",
     "x.z(i, b) = z0(i, b) + m.sigma().value(x.y(i, b), i, 0);",
     "array σ read at sample 0 for every sample", [SOLVER]),
    ("state-grading-swapped", "machine/graded_span_machine.hpp",
     "g[i] = 2 * d(i) - 1;\n    g[d.size() + i] = 2 * d(i);",
     "g[i] = 2 * d(i);\n    g[d.size() + i] = 2 * d(i) - 1;",
     "the state grading puts z before y", [SOLVER, MACHINES]),
    ("dual-unreversed", "machine/backward.hpp",
     "return GradedSpanMachine<S>(m.grading().reversed(), transpose(m.span()),",
     "return GradedSpanMachine<S>(m.grading(), transpose(m.span()),",
     "the dual machine runs over the forward grading", [SOLVER]),
    ("dual-untransposed", "machine/backward.hpp",
     "return GradedSpanMachine<S>(m.grading().reversed(), transpose(m.span()),",
     "return GradedSpanMachine<S>(m.grading().reversed(), m.span(),",
     "the dual machine keeps the forward span", [SOLVER]),
    ("dual-inputs-swapped", "machine/backward.hpp",
     "const MachineState<S> u = forward(dual(m, x.y), w, gz, gy);",
     "const MachineState<S> u = forward(dual(m, x.y), w, gy, gz);",
     "the dual machine's inputs g_y and g_z exchanged", [SOLVER]),
    ("gradient-no-batch-sum", "machine/backward.hpp",
     "g.w = add(g.w, parameter_gradient(m.span(), x.z.column(b), g.y0.column(b)));",
     "g.w = parameter_gradient(m.span(), x.z.column(b), g.y0.column(b));",
     "parameter gradient keeps the last sample only (dropped batch sum)", [SOLVER]),
    ("gradient-uncleaned", "machine/backward.hpp",
     "  g.w = clean(m.span(), m.grading(), g.w);\n", "",
     "parameter gradient not cleaned", [SOLVER]),
    ("gradient-reads-y", "machine/backward.hpp",
     "g.w = add(g.w, parameter_gradient(m.span(), x.z.column(b), g.y0.column(b)));",
     "g.w = add(g.w, parameter_gradient(m.span(), x.y.column(b), g.y0.column(b)));",
     "parameter gradient pairs ȳ with y instead of z", [SOLVER]),
    ("slope-gradient-reads-z", "machine/backward.hpp",
     "g.sigma(i, s.cols == 1 ? 0 : b) += x.y(i, b) * g.z0(i, b);",
     "g.sigma(i, s.cols == 1 ? 0 : b) += x.z(i, b) * g.z0(i, b);",
     "∂ℓ/∂s pairs z̄ with z instead of y", [SOLVER]),
    ("poly-derivative", "machine/sigma.hpp",
     "d.push_back(S(int(k)) * coefficients_[k]);", "d.push_back(coefficients_[k]);",
     "σ′ of a polynomial forgets the power rule", [SOLVER]),
    ("relu-derivative", "machine/sigma.hpp", "return y > S(0) ? S(1) : S(0);",
     "return y > S(0) ? S(1) : S(1);", "σ′ of relu is 1 everywhere (σ′ of the identity)",
     [SOLVER]),
    ("tanh-derivative", "machine/sigma.hpp", "return derivative ? S(1) - t * t : t;",
     "return derivative ? S(1) - t : t;", "σ′ of tanh taken as 1 − tanh", [MFLOAT]),
    ("sigmoid-derivative", "machine/sigma.hpp",
     "if (kind_ == Kind::sigmoid) return derivative ? sg * (S(1) - sg) : sg;",
     "if (kind_ == Kind::sigmoid) return derivative ? sg : sg;",
     "σ′ of sigmoid taken as sigmoid (σ′ of softplus)", [MFLOAT]),
    # ---- layers -------------------------------------------------------------
    ("conv-stride", "layers/conv_spec.hpp",
     "const auto at = std::int64_t(o[j] * c.step(j) + k * c.dil(j)) - std::int64_t(c.lo(j));",
     "const auto at = std::int64_t(o[j] + k * c.dil(j)) - std::int64_t(c.lo(j));",
     "convolution ignores the stride", [LAYERS]),
    ("conv-dilation", "layers/conv_spec.hpp",
     "const auto at = std::int64_t(o[j] * c.step(j) + k * c.dil(j)) - std::int64_t(c.lo(j));",
     "const auto at = std::int64_t(o[j] * c.step(j) + k) - std::int64_t(c.lo(j));",
     "convolution ignores the dilation", [LAYERS]),
    ("conv-reversed-kernel", "layers/conv_spec.hpp",
     "edge(in.flat(src), (kf * cin_g + ci) * c.out_channels + co);",
     "edge(in.flat(src), ((ker.size() - 1 - kf) * cin_g + ci) * c.out_channels + co);",
     "convolution with the kernel reversed", [LAYERS]),
    ("conv-low-edge", "layers/conv_spec.hpp",
     "if (i >= 0 && i < n) return i;",
     "if (i > 0 && i < n) return i;",
     "convolution misses the edges at the first input position", [LAYERS]),
    ("conv-groups", "layers/conv_spec.hpp", "src.back() = g * cin_g + ci;", "src.back() = ci;",
     "grouped convolution reads group 0's channels", [LAYERS]),
    ("time-conv-unreversed", "layers/time_conv.hpp",
     "out[e].parameter = (lag_ - p / block_) * block_ + p % block_;",
     "out[e].parameter = p;",
     "causal time convolution with the lags reversed", [LAYERS]),
    ("graph-mean-source", "layers/graph_conv.hpp",
     "return S(1) / S(deg[v]); // deg[v] ≥ 1: the edge u→v enters v",
     "return S(1) / S(deg[u] + 1);",
     "mean aggregation normalised by the wrong node's degree", [LAYERS]),
    ("graph-parameter-order", "layers/graph_conv.hpp",
     "a.pi.images.push_back(ci * co_n + co);", "a.pi.images.push_back(co * ci_n + ci);",
     "graph weights flattened (out, in) instead of (in, out)", [LAYERS]),
    ("pool-default-stride", "layers/pool.hpp",
     "spatial, channels, channels, window, pad_lo, pad_hi, stride.empty() ? window : stride,",
     "spatial, channels, channels, window, pad_lo, pad_hi, stride,",
     "pooling defaults to stride 1 instead of the window", [LAYERS, UNIT_LAYERS]),
    ("conv-transpose-rows-stride", "layers/conv.hpp",
     "hit = shifted >= k * c_.dil(j) && (shifted - k * c_.dil(j)) % c_.step(j) == 0 &&",
     "hit = shifted >= k * c_.dil(j) &&",
     "the transposed convolution's rows ignore the stride's divisibility", [UNIT_ROWS]),
    ("pool-divisor-clipped", "layers/pool.hpp",
     "if (!p_.count_include_pad) start = std::max<std::int64_t>(start, 0), end = std::min(end, n);",
     "start = std::max<std::int64_t>(start, 0), end = std::min(end, n);",
     "average pooling always divides by the window's input points", [UNIT_ROWS]),
    ("padding-reflect-repeats", "layers/conv_spec.hpp",
     "return i < 0 ? -i : 2 * (n - 1) - i;", "return i < 0 ? -i - 1 : 2 * n - 1 - i;",
     "reflect padding repeats the border point (symmetric padding)", [UNIT_ROWS]),
    ("dense-loop-order", "layers/dense.hpp",
     "for (Index x = 0; x < spec.in; ++x)\n    for (Index y = 0; y < spec.out; ++y) {",
     "for (Index y = 0; y < spec.out; ++y)\n    for (Index x = 0; x < spec.in; ++x) {",
     "dense weights enumerated (out, in) instead of (in, out)", [LAYERS]),
    ("recur-timeblock", "layers/recur_machine.hpp",
     "for (Index b : block) g.push_back(t / d.timeblock * d.dims.size() + b);",
     "for (Index b : block) g.push_back(t / (d.timeblock + 1) * d.dims.size() + b);",
     "recurrent grading with time blocks one longer", [SEEDS, UNIT_SEED_GEOMETRY]),
    ("conv-machine-pads-swapped", "layers/conv_machine.hpp",
     "c.pad_lo.push_back(d.pad[2 * j]);\n      c.pad_hi.push_back(d.pad[2 * j + 1]);",
     "c.pad_lo.push_back(d.pad[2 * j + 1]);\n      c.pad_hi.push_back(d.pad[2 * j]);",
     "convolution machine with the pads (lo, hi) exchanged",
     [SEEDS, UNIT_LAYERS, UNIT_SEED_GEOMETRY]),
    # ---- kernels ------------------------------------------------------------
    ("dense-kernel-transposed", "kernels/dense_machine.hpp",
     "if (o > 0) multiply_add(yi, m.block(o, 0, d, o), Z.topRows(o));",
     "if (o > 0) multiply_add(yi, m.block(0, o, o, d).transpose(), Z.topRows(o));",
     "dense forward kernel reads W transposed", [kernels("KERNEL-DENSE*")]),
    ("dense-dual-missed-row", "kernels/dense_machine.hpp",
     "if (later > 0)\n"
     "            multiply_add(zi, m.block(end, o, later, d).transpose(), YB.bottomRows(later));",
     "if (later > 1)\n"
     "            multiply_add(zi, m.block(end + 1, o, later - 1, d).transpose(),\n"
     "                         YB.bottomRows(later - 1));",
     "dense dual kernel misses the first later channel (block selection)",
     [kernels("KERNEL-DENSE*")]),
    ("dense-gradient-wrong-buffer", "kernels/weight_gradient.hpp",
     "const ConstMatrixView<T> Y(pr.ybar + pr.co, outputs, pr.cols, Eigen::OuterStride<>(n));",
     "const ConstMatrixView<T> Y(pr.ybar, outputs, pr.cols, Eigen::OuterStride<>(n));",
     "weight gradient reads the cotangents of the first block for every block", [kernels("KERNEL-DENSE*")]),
    ("tanh-kernel-derivative", "kernels/activation.hpp",
     "return {t, ei::psub(ei::pset1<V>(T(1)), ei::pmul(t, t))};",
     "return {t, ei::psub(ei::pset1<V>(T(1)), t)};", "vectorised σ′ of tanh taken as 1 − tanh",
     [kernels("KERNEL-DENSE*")]),
    ("recur-kernel-cleaning", "kernels/sequence_plan.hpp",
     "p.taps.push_back({-long(lag), lag >= s.timeblock});",
     "p.taps.push_back({-long(lag), lag > s.timeblock});",
     "recurrent kernel cleans lag = timeblock as within a block (off by one)",
     [kernels("KERNEL-RECUR*")]),
    ("grid-kernel-row-stride", "kernels/sequence_plan.hpp",
     "tap.shift = tap.shift * long(s.extents[j]) + d;",
     "tap.shift = tap.shift * long(s.extents[j] + (j == 0 ? 0 : 1)) + d;",
     "2-D/3-D kernel with a row stride off by one", [kernels("KERNEL-CONV*")]),
    ("layout-channels-reversed", "kernels/direct_conv.hpp",
     "copy_run(batch_in + at + c * length, rows_out + row, len);",
     "copy_run(batch_in + at + (c1 - 1 - c + c0) * length, rows_out + row, len);",
     "direct path reads a channel-major block's channels in reverse", [("test_kernels_layout", ())]),
    # ---- validator ----------------------------------------------------------
    ("equal-never-differs", "validate/equal.hpp", "      if (same) continue;",
     "      continue;", "CONF-EQUAL counts no output as differing", [UNIT_EQUAL]),
    ("equal-probes-not-scaled", "validate/span_probes.hpp",
     "          const Acc t = a * wv * xv;", "          const Acc t = wv * xv;",
     "the specification's forward drops the weights μ (1/3 taken as 1)", [UNIT_EQUAL]),
    ("groups-smallest-block", "validate/patterns.hpp",
     "    for (Index block = c / 2; block >= 1; --block) {",
     "    for (Index block = 1; block <= c / 2; ++block) {",
     "two groups swapped named as eight blocks of one moved by four", [UNIT_EQUAL]),
    # ---- readers ------------------------------------------------------------
    ("named-conv-edges-bound", "io/named_layer.hpp",
     "        taps +=\n"
     "            c.padding_mode != PaddingMode::zeros || (i >= c.lo(j) && i < c.lo(j) + c.spatial[j]);",
     "        taps += 1;",
     "a named conv's edges counted with its taps in zero padding (the bound for the count)",
     [UNIT_IO_ROWS]),
]

# Survivors of the last full run, and why each is not a gap: a mutant
# argued equivalent, or killed since by a test added for it (the re-run of
# `--only` shows the kill in docs/mutation.md).
EXPLAINED = {
    "pool-default-stride":
        "the pooling property draws a stride for every axis, so the default (an empty "
        "stride means stride = window) is never reached there; the hand example of "
        "test_layers_layers pools [1, 3, 5, 7] with window 2 and no stride into [2, 6], "
        "which the mutant's stride 1 makes three outputs. The mutant now runs that test.",
    "iso-witness-weights":
        "no law property or unit test compared spans that differ in a weight only through "
        "is_span_isomorphism itself; the new hand example "
        "tests/category/span_iso_weights.cpp changes one weight and requires the identity "
        "of the apex not to be an isomorphism. The mutant now runs that test.",
}

RESULTS = os.path.join(ROOT, "docs", "mutation.tsv")


def run(cmd, cwd=None, env=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def executable(build, target):
    for sub in ("property_tests", "tests"):
        path = os.path.join(build, sub, target)
        if os.path.exists(path):
            return path
    raise SystemExit(f"mutate.py: no executable {target} under {build}")


def run_tests(build, tests, env):
    """The first (target, spec) whose run fails, or None."""
    for target, spec in tests:
        cmd = [executable(build, target)] + list(spec)
        try:
            r = run(cmd, env=env, timeout=900)
        except subprocess.TimeoutExpired:
            return target + " (timeout)"
        if r.returncode != 0:
            return target
    return None


# The results (docs/mutation.tsv): a line `# run START MINUTES PARTIAL SEED`
# for the last full run, then one row per mutant: kind (run: of that full run,
# rerun: of a later `--only`), id, the executables run (comma-separated),
# result (killed, survived, stillborn), the executable that killed it,
# seconds, and the UTC date of the row.

def read_results(path):
    header, rows = None, []
    if os.path.isfile(path):
        for line in open(path, encoding="utf-8"):
            if line.startswith("# run "):
                start, minutes, partial, seed = line.split()[2:6]
                header = {"sittings": [t.replace("T", " ") for t in start.split(",")],
                          "minutes": float(minutes),
                          "partial": partial == "1", "seed": seed}
            elif line.strip() and not line.startswith("#"):
                kind, ident, tests, result, by, seconds, date = line.rstrip("\n").split("\t")
                rows.append({"kind": kind, "id": ident, "tests": tests, "result": result,
                             "by": None if by == "-" else by,
                             "seconds": float(seconds), "date": date.replace("T", " ")})
    return header, rows


def write_results(path, header, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write("# Written by scripts/mutate.py; docs/mutation.md is rendered from it.\n")
        f.write(f"# run {','.join(t.replace(' ', 'T') for t in header['sittings'])} "
                f"{header['minutes']:.1f} "
                f"{int(header['partial'])} {header['seed']}\n")
        for r in rows:
            f.write("\t".join([r["kind"], r["id"], r["tests"], r["result"], r["by"] or "-",
                               f"{r['seconds']:.0f}", r["date"].replace(" ", "T")]) + "\n")


def render(header, rows):
    """docs/mutation.md from the results and EXPLAINED."""
    known = {m[0]: m for m in MUTANTS}
    full = [r for r in rows if r["kind"] == "run"]
    reruns = {r["id"]: r for r in rows if r["kind"] == "rerun"}
    counted = [r for r in full if r["result"] != "stillborn"]
    killed = sum(1 for r in counted if r["result"] == "killed")
    survived = [r for r in counted if r["result"] == "survived"]
    result = lambda r: "killed by " + r["by"] if r["result"] == "killed" else (
        "SURVIVED" if r["result"] == "survived" else "does not compile")
    lines = [
        "# Mutation testing of the library",
        "",
        "Generated by `scripts/mutate.py` (from `docs/mutation.tsv`); do not edit by hand.",
        "Each row is one realistic mistake applied to `src/pm/` (the list, with the replaced",
        "text, is `MUTANTS` in the script). For each, the script rebuilds only the test",
        "executables named in the row, from a snapshot of the committed tree, and runs their",
        "law properties and unit tests (not the law mutant tests) at the default case count",
        f"with `RC_PARAMS=seed={header['seed']}`. A mutant is killed when one of them fails.",
        "",
        "Run it with `/usr/bin/python3 scripts/mutate.py` (each mutant recompiles one to three",
        "test executables at -Og); `--only ID,...` re-runs some mutants against the current",
        "tree and records them as re-runs, below the table. It is not part of the default",
        "suite.",
        "",
        "What the default suite gains with this evidence (measured on two shared, loaded",
        "cores): ctest `traceability` lists the tests of every test executable (31, twice",
        "each) and reads their bodies, 2.2 s; `traceability_self_test_bypasses` 0.5 s, plus",
        "the build of its fixture executable `traceability_fixture`.",
        "",
        f"Last full run: {' and '.join(header['sittings'])} UTC"
        + (f" ({len(header['sittings'])} sittings, `--resume`)" if len(header["sittings"]) > 1
           else "")
        + f", {header['minutes']:.0f} minutes for {len(full)} of the {len(MUTANTS)} mutants"
        + (" (stopped at its deadline)" if header["partial"] else "") + ".",
        "",
        "| mutant | file | mistake | tests run | result | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for r in full:
        _, rel, _, _, what, _ = known.get(r["id"], (r["id"], "?", "", "", "?", []))
        lines.append(f"| {r['id']} | `src/pm/{rel}` | {what} | {r['tests'].replace(',', ', ')} | "
                     f"{result(r)} | {r['seconds']:.0f} |")
    lines.append("")
    stillborn = [r["id"] for r in full if r["result"] == "stillborn"]
    if stillborn:
        lines += ["Not counted, since they do not compile: " + ", ".join(stillborn) + ".", ""]
    if reruns:
        lines += ["## Re-runs", "", "| mutant | date | tests run | result | seconds |",
                  "|---|---|---|---|---|"]
        for ident, r in sorted(reruns.items()):
            lines.append(f"| {ident} | {r['date']} UTC | {r['tests'].replace(',', ', ')} | "
                         f"{result(r)} | {r['seconds']:.0f} |")
        lines.append("")
    if survived:
        lines += ["## Survivors", ""]
        for r in survived:
            why = EXPLAINED.get(r["id"], "not explained")
            again = reruns.get(r["id"])
            if again:
                why += f" Re-run {again['date']} UTC: {result(again)}."
            lines.append(f"- {r['id']}: {why}")
        lines.append("")
    lines.append(f"{len(counted)} mutants, {killed} killed, {len(survived)} survived")
    return "\n".join(lines) + "\n"


def interleaved(mutants):
    """Round robin over the groups of mutants that run the same first executable,
    so that a run stopped at its deadline has sampled every part of the library."""
    groups = {}
    for m in mutants:
        groups.setdefault(m[5][0][0], []).append(m)
    out = []
    while any(groups.values()):
        for g in groups.values():
            if g:
                out.append(g.pop(0))
    return out


def mutation_run(args):
    work = args.work or tempfile.mkdtemp(prefix="pm-mutate-")
    src = os.path.join(work, "tree")
    build = os.path.join(work, "build")
    if os.path.exists(src):
        shutil.rmtree(src)
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", ROOT, "archive", "HEAD"], check=True,
                             stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    chosen = interleaved([m for m in MUTANTS if not args.only or m[0] in args.only.split(",")])
    for m in chosen:
        with open(os.path.join(src, "src/pm", m[1])) as f:
            n = f.read().count(m[2])
        if n != 1:
            raise SystemExit(f"mutate.py: mutant {m[0]}: the text to replace occurs {n} times "
                             f"in src/pm/{m[1]}, expected once")
    # ccache when it is installed (it is not among the suite's packages).
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    r = run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             "-DCMAKE_CXX_FLAGS_RELEASE=-O1", "-DPM_PROOFS=OFF"] + launcher)
    if r.returncode != 0:
        raise SystemExit("mutate.py: configure failed\n" + r.stdout)
    env = dict(os.environ, RC_PARAMS=f"seed={args.seed}")
    env.pop("PM_KILL_SEEDS", None)
    targets = sorted({t for m in chosen for t, _ in m[5]})
    started = time.time()
    r = run(["ninja", "-C", build, "-j", str(args.jobs)] + targets)
    if r.returncode != 0:
        raise SystemExit("mutate.py: the unmutated tree does not build\n" + r.stdout[-4000:])
    failing = run_tests(build, sorted({t for m in chosen for t in m[5]}), env)
    if failing:
        raise SystemExit(f"mutate.py: {failing} fails on the unmutated tree")
    print(f"baseline built and passing in {time.time() - started:.0f} s", flush=True)
    stamp = lambda t: time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))
    header, rows = read_results(args.results)
    if args.only:
        rows = [r for r in rows if not (r["kind"] == "rerun" and r["id"] in args.only.split(","))]
    elif args.resume:
        ran = {r["id"] for r in rows if r["kind"] == "run"}
        chosen = [m for m in chosen if m[0] not in ran]
        if header is not None:
            header["sittings"].append(stamp(started))
    else:
        header = {"sittings": [stamp(started)], "minutes": 0.0, "partial": True,
                  "seed": args.seed}
        rows = []
    if header is None:
        raise SystemExit(f"mutate.py: {args.results} holds no full run to add to")
    if args.resume and str(header["seed"]) != str(args.seed):
        raise SystemExit(f"mutate.py: the run was made with seed {header['seed']}, not {args.seed}")
    minutes_before, done = header["minutes"], 0
    for ident, rel, old, new, what, tests in chosen:
        if args.deadline and time.strftime("%H:%M", time.gmtime()) >= args.deadline:
            break
        t0 = time.time()
        path = os.path.join(src, "src/pm", rel)
        with open(path) as f:
            original = f.read()
        with open(path, "w") as f:
            f.write(original.replace(old, new))
        try:
            r = run(["ninja", "-C", build, "-j", str(args.jobs)] + [t for t, _ in tests])
            compiled = r.returncode == 0
            by = run_tests(build, tests, env) if compiled else None
        finally:
            with open(path, "w") as f:
                f.write(original)
        result = "stillborn" if not compiled else ("killed" if by else "survived")
        rows.append({"kind": "rerun" if args.only else "run", "id": ident,
                     "tests": ",".join(t for t, _ in tests), "result": result,
                     "by": by, "seconds": time.time() - t0, "date": stamp(t0)})
        done += 1
        if not args.only:
            header["minutes"] = minutes_before + (time.time() - started) / 60
            header["partial"] = done < len(chosen)
        print(f"{ident}: {result}{' by ' + by if by else ''} ({time.time() - t0:.0f} s)",
              flush=True)
        write_results(args.results, header, rows)
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(render(header, rows))
    # Rebuild the unmutated tree so that the build directory ends consistent.
    run(["ninja", "-C", build, "-j", str(args.jobs)] + targets)
    survived = [r["id"] for r in rows if r["result"] == "survived" and r["id"] not in EXPLAINED]
    return 1 if survived else 0


KILL_RATE = re.compile(r"^kill rate (.*): (\d+)/(\d+)$")
DISTRIBUTION = re.compile(r"^distribution (\S+): (\d+)/(\d+) non-trivial$")


def kill_rates(args):
    build = args.kill_rates
    # The distributions are those of the suite's run, from its seed
    # (PM_RC_PARAMS in property_tests/CMakeLists.txt); the kill rates set
    # their own seeds 1..N.
    env = dict(os.environ, PM_KILL_SEEDS=str(args.seeds), RC_PARAMS=f"seed={args.seed}")
    rows = []
    law_dir = os.path.join(build, "property_tests")
    for exe in sorted(os.listdir(law_dir)):
        path = os.path.join(law_dir, exe)
        if not exe.startswith("law_") or not os.access(path, os.X_OK) or os.path.isdir(path):
            continue
        for spec in ("*mutant*", "~*mutant*"):
            r = run([path, spec], env=env, timeout=3600)
            for line in r.stdout.splitlines():
                m = KILL_RATE.match(line.strip())
                if m:
                    rows.append(("kill-rate", m.group(1), m.group(2), m.group(3)))
                m = DISTRIBUTION.match(line.strip())
                if m:
                    rows.append(("distribution", m.group(1), m.group(2), m.group(3)))
            print(f"{exe} {spec}: exit {r.returncode}", flush=True)
    out = os.path.join(ROOT, "property_tests", "measured.tsv")
    with open(out, "w") as f:
        f.write(f"# Measured by scripts/mutate.py --kill-rates (seeds 1..{args.seeds} for the "
                f"kill rates; the distributions from seed {args.seed}, the suite's).\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    low = [r for r in rows if r[0] == "kill-rate" and int(r[2]) < 0.99 * int(r[3])]
    for r in low:
        print(f"kill rate below 99 %: {r[1]}: {r[2]}/{r[3]}")
    return 1 if low else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", help="comma-separated mutant ids")
    p.add_argument("--resume", action="store_true",
                   help="continue the full run of the results with the mutants it has not run")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--deadline", help="HH:MM UTC after which no mutant is started")
    p.add_argument("--work", help="work directory (default: a new temporary one)")
    p.add_argument("--doc", default=os.path.join(ROOT, "docs", "mutation.md"))
    p.add_argument("--results", default=RESULTS, help="the results file (docs/mutation.tsv)")
    p.add_argument("--render", action="store_true",
                   help="only render the doc from the results and EXPLAINED")
    p.add_argument("--kill-rates", metavar="BUILD_DIR")
    p.add_argument("--seeds", type=int, default=100)
    args = p.parse_args()
    if args.render:
        header, rows = read_results(args.results)
        if header is None:
            raise SystemExit(f"mutate.py: {args.results} holds no run")
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(render(header, rows))
        sys.exit(0)
    sys.exit(kill_rates(args) if args.kill_rates else mutation_run(args))


if __name__ == "__main__":
    main()
