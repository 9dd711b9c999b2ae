#!/usr/bin/python3
"""The verdict of pmach.check on every planted fault class, written as a
PyTorch user writes layers, at a small size and at a ResNet-50 size.

Usage (from the repository root, with the Python package built):
    PYTHONPATH=build/python /usr/bin/python3 bench/planted_faults.py [--quick] [--only TEXT]

--quick: the small sizes only (float64); without it, the small sizes and the
ResNet-50 sizes (float32, as users run them). --only TEXT: the rows whose
fault name contains TEXT ("correct" selects the correct implementations).
Not a test: run by hand.

Sizes: small, conv 3x3 4->4 on 6x6 (grouped: 8->8 in 4 groups), Linear
16->16, avg pool on 4x6x6; full, conv 3x3 64->64 on 56x56, grouped 3x3
256->256 in 32 groups on 28x28, stride (2, 1) 64->64 and stride 2 128->128
on 56x56, avg pool on 64x56x56, and Linear 2048->2048 (the laws' 100 cases
grow with the weight's n^2 entries: a Linear 4096->4096 check did not
finish in 10 minutes on two shared cores).

Each implementation is plain torch code (F.conv2d, nn.Linear,
F.avg_pool2d, ...) in PyTorch's layout, checked by pmach.check against the
intended specification (a pmach.layers constructor with layout="torch"),
with the cases and probes pmach.check chooses. Prints one markdown row per
(fault, size): the fault, the layer, the dtype, the seconds of
pmach.check, the verdict (report.passed), the status of the CONF-EQUAL
forward row, whether a pattern line was printed and the line (the first
line of the CONF-EQUAL forward row's detail that starts with "every
difference is explained by one pattern:", "all N differences are",
"implemented = ... × intended" or "not bilinear"; when that row has none,
the same kind of line from CONF-SPAN-DIFF or CONF-RECOVER, marked with the
row's name), and whether it names the planted fault class (by keywords
defined per class below: yes, partly, or NO; "NO in LAW" when another
pattern line of the report names another class). Then one row per correct
implementation, which must pass, and a summary: the faults caught, those
caught with a pattern line, the correct layers passed, the faults on which
CONF-EQUAL forward failed, the faults misnamed or named in part, the
correct layers that failed and the rows that failed them, and the checks
that took more than 60 s with their slowest rows.

The twin of bench/check_equal.cpp's planted faults (there a C++ loop, here
PyTorch). Two faults need a choice of how a user writes them:

- a stride on the wrong axis keeps the intended output shape only if the
  reads past the image are zeros: the implementation is a stride-1
  convolution on an input padded with zeros far enough to the right, of
  which rows 0, 1, ... and columns 0, 2, 4, ... are kept (axis 0 stepped by
  axis 1's stride and the reverse), as a hand loop that bounds-checks its
  reads does; beside it the plainer "stride of axis 1 lost" (a stride-1
  convolution, axis 0 subsampled, axis 1 cropped to the intended extent);
- a wrong divisor at the borders is avg pool 3x3 padding 1 with
  count_include_pad=False where True is intended, and the reverse.
"""
import argparse
import os
import re
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import pmach

SLOW = 60.0  # seconds: a full-size check above this is reported as slow


# ---------------------------------------------------------------- layers

class Conv:
    """A 2-D convolution 3x3 (padding 1 unless said) in PyTorch's layout:
    x (n, C, H, W), w (O, C // groups, 3, 3)."""

    def __init__(self, n, cin, cout, groups=1, stride=(1, 1)):
        self.n, self.cin, self.cout, self.groups, self.stride = n, cin, cout, groups, tuple(stride)

    def name(self):
        s = f"conv 3x3 {self.cin}->{self.cout}"
        if self.groups > 1:
            s += f" {self.groups} groups"
        if self.stride != (1, 1):
            s += f" stride {self.stride[0]}" if self.stride[0] == self.stride[1] else f" stride {self.stride}"
        return s + f" on {self.n}x{self.n}"

    def spec(self):
        return pmach.layers.conv((self.n, self.n), self.cin, self.cout, 3, padding=1, stride=list(self.stride),
                                 groups=self.groups, layout="torch")

    def out(self):
        return tuple((self.n + 2 - 3) // s + 1 for s in self.stride)


class Dense:
    def __init__(self, n):
        self.n = n

    def name(self):
        return f"Linear {self.n}->{self.n}"

    def spec(self):
        return pmach.layers.dense(self.n, self.n, layout="torch")


class Pool:
    """avg pool 3x3, stride 1, padding 1, on (C, n, n)."""

    def __init__(self, n, channels, count_include_pad=True):
        self.n, self.c, self.include = n, channels, count_include_pad

    def name(self):
        return f"avg pool 3x3 pad 1 ({'count_include_pad' if self.include else 'not counting the padding'}), " \
               f"{self.c} on {self.n}x{self.n}"

    def spec(self):
        return pmach.layers.avg_pool((self.n, self.n), self.c, 3, stride=1, padding=1,
                                     count_include_pad=self.include, layout="torch")


# --------------------------------------------------------- implementations
# Each returns the forward(w, x) (or forward(x), or a module) a user writes.

def conv_correct(L):
    def conv(w, x):
        return F.conv2d(x, w, padding=1, stride=L.stride, groups=L.groups)
    return conv


def conv_flipped(L):
    def flipped_conv(w, x):  # a convolution: the kernel reversed on both axes
        return F.conv2d(x, w.flip(-1, -2), padding=1, stride=L.stride, groups=L.groups)
    return flipped_conv


def conv_axis0_reversed(L):
    def conv_axis0_reversed(w, x):  # kernel axis 0 (kH) alone reversed
        return F.conv2d(x, w.flip(-2), padding=1, stride=L.stride, groups=L.groups)
    return conv_axis0_reversed


def conv_wrong_group(L):
    cg = L.cin // L.groups

    def wrong_group_conv(w, x):  # the input channels rolled by one group: group g reads group g + 1
        return F.conv2d(torch.roll(x, -cg, dims=1), w, padding=1, stride=L.stride, groups=L.groups)
    return wrong_group_conv


def conv_missing_group(L):
    og = L.cout // L.groups

    def missing_group_conv(w, x):  # the last group's outputs never written (zero)
        y = F.conv2d(x, w, padding=1, stride=L.stride, groups=L.groups)
        mask = torch.ones(L.cout, 1, 1, dtype=y.dtype)
        mask[L.cout - og:] = 0
        return y * mask
    return missing_group_conv


def conv_shifted(L):
    def shifted_conv(w, x):  # padding (2, 0) instead of (1, 1) on the last axis
        return F.conv2d(F.pad(x, (2, 0, 1, 1)), w, stride=L.stride, groups=L.groups)
    return shifted_conv


def conv_last_row_unread(L):
    def last_row_unread_conv(w, x):  # reads rows 0 .. H-2 and pads the bottom by 2: the last row never read
        return F.conv2d(F.pad(x[:, :, :-1, :], (1, 1, 1, 2)), w, stride=L.stride, groups=L.groups)
    return last_row_unread_conv


def conv_single(L):
    def conv_one_term_twice(w, x):  # output (0, 0, 0) takes the centre tap of input (0, 0, 0) twice
        y = F.conv2d(x, w, padding=1, stride=L.stride, groups=L.groups).clone()
        y[:, 0, 0, 0] = y[:, 0, 0, 0] + w[0, 0, 1, 1] * x[:, 0, 0, 0]
        return y
    return conv_one_term_twice


def conv_dilated(L):
    def dilated_conv(w, x):  # dilation 2 on axis 1 (padding 2 keeps the output size)
        return F.conv2d(x, w, padding=(1, 2), dilation=(1, 2), stride=L.stride, groups=L.groups)
    return dilated_conv


def conv_stride_swapped(L):
    sh, sw = L.stride
    ho, wo = L.out()

    def stride_swapped_conv(w, x):  # rows stepped by sw, columns by sh; reads past the image are zeros
        y = F.conv2d(F.pad(x, (1, 1 + sh * wo, 1, 1 + sw * ho)), w, groups=L.groups)
        return y[:, :, 0:sw * ho:sw, 0:sh * wo:sh]
    return stride_swapped_conv


def conv_stride_lost(L):
    sh, _ = L.stride
    ho, wo = L.out()

    def stride_lost_conv(w, x):  # stride-1 conv, axis 0 subsampled by its stride, axis 1 cropped
        y = F.conv2d(x, w, padding=1, groups=L.groups)
        return y[:, :, ::sh, :wo]
    return stride_lost_conv


def conv_plus_constant(L):
    def conv_with_constant(w, x):  # a bias where none is intended (an added constant)
        return F.conv2d(x, w, padding=1, stride=L.stride, groups=L.groups) + 0.5
    return conv_with_constant


def conv_squared_input(L):
    def conv_of_square(w, x):  # the input squared
        return F.conv2d(x * x, w, padding=1, stride=L.stride, groups=L.groups)
    return conv_of_square


class TransposedLinear(nn.Linear):
    """The weight read as (in, out): x @ W instead of x @ W.T."""

    def forward(self, x):
        return x @ self.weight


def linear_correct(L):
    return nn.Linear(L.n, L.n, bias=False)


def linear_transposed(L):
    return TransposedLinear(L.n, L.n, bias=False)


def pool_with(include):
    def make(L):
        def avg_pool(x):
            return F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=include)
        avg_pool.__qualname__ = f"avg_pool_count_include_pad_{include}"
        return avg_pool
    return make


# ------------------------------------------------------------ the classes
# A pattern line names the planted class when it contains every entry of
# "all" (an entry may be a tuple of alternatives) and none of "none"
# (another class's words); it names it only in part when it lacks an entry
# of "precise" (the variant planted: the axis, the swap) or contains one of
# "vague" (words that belong to another variant). Case-insensitive. PyTorch's
# conv weight is (O, I, kH, kW): the kernel axes are parameter axes 2 and 3;
# the source (C, H, W) has the image's axis 0 on axis 1 and its axis 1 on
# axis 2.

FAULTS = [
    # fault, make, keywords
    ("flipped kernel", conv_flipped, {"all": ["flipped kernel", "axes 2 and 3 reversed"]}),
    ("transposed weight", linear_transposed, {"all": ["transposed weight"]}),
    ("groups wired to the wrong group", conv_wrong_group, {"all": ["wrong group"], "precise": ["g + 1"]}),
    ("shift on one axis (padding (2, 0) for (1, 1))", conv_shifted,
     {"all": ["shifted by"], "none": ["stride", "dilation"], "precise": ["source axis 2"]}),
    ("stride on the wrong axis (swapped)", conv_stride_swapped,
     {"all": ["stride"], "precise": ["stride on the wrong axis", "swapped"]}),
    ("stride of axis 1 lost", conv_stride_lost,
     {"all": ["stride"], "precise": ["source axis 2 steps by 1 per step of target axis 2, not 2"]}),
    ("off-by-one at one border (last row unread)", conv_last_row_unread,
     {"all": ["off-by-one at one border"], "precise": ["source axis 1 at", "(its last)"]}),
    ("wrong divisor at the borders (count_include_pad=False for True)", pool_with(False),
     {"all": ["divisor at the borders"]}),
    ("wrong divisor at the borders (count_include_pad=True for False)", pool_with(True),
     {"all": ["divisor at the borders"]}),
    ("single wrong coefficient", conv_single, {"all": ["single wrong coefficient"]}),
    ("wrong dilation (2 on axis 1)", conv_dilated,
     {"all": ["dilation"], "precise": ["source axis 2", "parameter axis 3"]}),
    ("missing group (last group's outputs zero)", conv_missing_group,
     {"all": ["lacks"], "precise": ["target axis 0", "channel group"]}),
    ("kernel axis 0 alone reversed", conv_axis0_reversed,
     {"all": [("axes 2 reversed", "axis 2 is reversed")], "none": ["2 and 3"],
      "vague": ["a convolution where a cross-correlation is intended"]}),
    ("non-bilinear: added constant", conv_plus_constant,
     {"all": ["not bilinear"], "none": ["even degree"], "precise": ["affine"]}),
    ("non-bilinear: squared input", conv_squared_input,
     {"all": ["not bilinear"], "none": ["affine"], "precise": ["even degree in x"]}),
]


def layers(full):
    """The layer of each fault and of each correct row at one size."""
    if full:
        conv, grouped = Conv(56, 64, 64), Conv(28, 256, 256, groups=32)
        dense, pool = Dense(2048), lambda inc: Pool(56, 64, inc)
        stride21, stride2 = Conv(56, 64, 64, stride=(2, 1)), Conv(56, 128, 128, stride=(2, 2))
    else:
        conv, grouped = Conv(6, 4, 4), Conv(6, 8, 8, groups=4)
        dense, pool = Dense(16), lambda inc: Pool(6, 4, inc)
        stride21, stride2 = Conv(6, 4, 4, stride=(2, 1)), Conv(6, 4, 4, stride=(2, 2))
    of_fault = {
        "transposed weight": dense,
        "groups wired to the wrong group": grouped,
        "missing group (last group's outputs zero)": grouped,
        "stride on the wrong axis (swapped)": stride21,
        "stride of axis 1 lost": stride2,
        "wrong divisor at the borders (count_include_pad=False for True)": pool(True),
        "wrong divisor at the borders (count_include_pad=True for False)": pool(False),
    }
    correct = [(conv, conv_correct), (grouped, conv_correct), (stride21, conv_correct), (stride2, conv_correct),
               (dense, linear_correct), (pool(True), pool_with(True)), (pool(False), pool_with(False))]
    return of_fault, conv, correct


# ---------------------------------------------------------- reading reports

_PREFIXES = re.compile(r"every difference is explained by one pattern:|all \d+ differences are |"
                       r"implemented = .* × intended|not bilinear")


def pattern_lines(detail):
    """The pattern lines of a row's detail, trimmed: the lines that start
    with a pattern, and CONF-SPAN-DIFF's first line "N of M coefficients
    differ; <pattern>" (its pattern). "no recovered span (CONF-RECOVER not
    bilinear)" is no pattern line."""
    out = []
    for line in detail.splitlines():
        line = line.strip()
        m = re.match(r"\d+ of \d+ coefficients differ; (.*)", line)
        if m:
            line = m.group(1).strip()
        if _PREFIXES.match(line):
            out.append(line)
    return out


def read(report):
    """(status of CONF-EQUAL forward, the pattern line shown, every pattern
    line of the report with its row's law)."""
    by_law = {}
    for r in report.rows:
        by_law.setdefault(r["law"], r)  # the linear part's row (a module with a bias has two parts)
    fwd = by_law.get("CONF-EQUAL forward")
    status = fwd["status"] if fwd else "(no row)"
    found = []
    for law in ("CONF-EQUAL forward", "CONF-SPAN-DIFF", "CONF-RECOVER"):
        for r in report.rows:
            if r["law"] == law:
                found += [(law, line) for line in pattern_lines(r["detail"])]
    shown = ""
    if found:
        law, line = found[0]
        shown = line if law == "CONF-EQUAL forward" else f"[{law}] {line}"
    return status, shown, found


def _has(low, entry):
    return any(k.lower() in low for k in (entry if isinstance(entry, tuple) else (entry,)))


def naming(line, keywords):
    """"yes", "partly: ..." or "NO: ..." for one pattern line."""
    low = line.lower()
    missing = [k for k in keywords.get("all", []) if not _has(low, k)]
    other = [k for k in keywords.get("none", []) if _has(low, k)]
    if missing or other:
        return "NO: " + "; ".join([f"lacks {k!r}" for k in missing] + [f"says {k!r}" for k in other])
    imprecise = [f"lacks {k!r}" for k in keywords.get("precise", []) if not _has(low, k)] + \
                [f"says {k!r}" for k in keywords.get("vague", []) if _has(low, k)]
    return "partly: " + "; ".join(imprecise) if imprecise else "yes"


def judged(row):
    """The keyword check of a fault row: the shown line's naming, then any
    other pattern line of the report that names another class."""
    if row["fault"] == "correct" or not row["found"]:
        return "-", []
    first = naming(row["found"][0][1], row["keywords"])
    others = [(law, line) for law, line in row["found"][1:] if naming(line, row["keywords"]).startswith("NO")]
    return first, others


# ------------------------------------------------------------------ running

def run(fault, layer, impl, dtype, keywords):
    """One row: a dict of what the table and the summary need."""
    row = {"fault": fault, "layer": layer.name(), "dtype": dtype, "keywords": keywords}
    start = time.perf_counter()
    try:
        report = pmach.check(layer.spec(), impl, dtype=dtype)
    except Exception as e:  # a crash of pmach (or of the implementation): reported, not hidden
        row.update(seconds=time.perf_counter() - start, verdict="error", status="-", shown="",
                   found=[], slowest=[], error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return row
    row["seconds"] = time.perf_counter() - start
    row["verdict"] = "passed" if report.passed else "failed"
    row["status"], row["shown"], row["found"] = read(report)
    row["error"] = ""
    row["failing"] = [f"{r['law']} ({r['subject']}): {r['detail'].splitlines()[0]}" for r in report.failures]
    row["slowest"] = sorted(((r["seconds"], r["law"]) for r in report.rows), reverse=True)[:3]
    return row


def named_text(row):
    first, others = judged(row)
    word = first.split(":")[0]
    if others:
        word += "; NO in " + ", ".join(sorted({law for law, _ in others}))
    return word


def cell(text):
    return text.replace("|", "\\|")


def print_row(row):
    slow = " (> 60 s)" if row["seconds"] > SLOW else ""
    pattern = row["shown"] or (row["error"] and f"pmach.check raised {row['error']}") or "-"
    print(f"| {row['fault']} | {row['layer']} | {row['dtype']} | {row['seconds']:.1f}{slow} | {row['verdict']} "
          f"| {row['status']} | {'yes' if row['shown'] else 'no'} | {cell(pattern)} | {named_text(row)} |",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the small sizes only")
    ap.add_argument("--only", default="", help="the rows whose fault name contains TEXT")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"pmach {pmach.__version__}, torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
          f"{os.cpu_count()} CPUs, load average {load:.1f}; "
          f"{'small sizes only' if args.quick else 'small and ResNet-50 sizes'}\n")
    print("| fault | layer | dtype | seconds | verdict | CONF-EQUAL forward | pattern line printed | pattern line "
          "| names the fault |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    sizes = [(False, "float64")] + ([] if args.quick else [(True, "float32")])
    for full, dtype in sizes:
        of_fault, conv, correct = layers(full)
        for fault, make, keywords in FAULTS:
            if args.only not in fault:
                continue
            layer = of_fault.get(fault, conv)
            rows.append(run(fault, layer, make(layer), dtype, keywords))
            print_row(rows[-1])
        if args.only in "correct":
            for layer, make in correct:
                rows.append(run("correct", layer, make(layer), dtype, {}))
                print_row(rows[-1])
    faults = [r for r in rows if r["fault"] != "correct"]
    good = [r for r in rows if r["fault"] == "correct"]
    caught = [r for r in faults if r["verdict"] == "failed"]
    with_pattern = [r for r in caught if r["shown"]]
    passed = [r for r in good if r["verdict"] == "passed"]
    print(f"\n{len(caught)} of {len(faults)} faults caught; {len(with_pattern)} of them with a pattern line; "
          f"{len(passed)} of {len(good)} correct layers passed")
    print(f"CONF-EQUAL forward failed on {sum(r['status'] == 'failed' for r in faults)} of {len(faults)} faults "
          f"and passed on {sum(r['status'] == 'passed' for r in good)} of {len(good)} correct layers")
    at = lambda r: f"{r['fault']} on {r['layer']} ({r['dtype']})"  # noqa: E731
    for r in faults:
        if r["verdict"] != "failed":
            print(f"NOT CAUGHT: {at(r)}: verdict {r['verdict']}" + (f", {r['error']}" if r["error"] else ""))
        elif not r["shown"]:
            print(f"caught without a pattern line: {at(r)}")
    judgements = [(r, *judged(r)) for r in faults if r["found"]]
    misnamed = [(r, first, others) for r, first, others in judgements if first.startswith("NO") or others]
    partly = [(r, first) for r, first, _ in judgements if first.startswith("partly")]
    print(f"keyword check: of {len(judgements)} faults with a pattern line, "
          f"{sum(first == 'yes' and not others for _, first, others in judgements)} name the planted class, "
          f"{len(partly)} name it in part, {len(misnamed)} misnamed")
    for r, first, others in misnamed:
        if first.startswith("NO"):
            print(f"MISNAMED: {at(r)}: {r['found'][0][0]}: {r['found'][0][1]} ({first})")
        for law, line in others:
            print(f"MISNAMED: {at(r)}: {law}: {line} ({naming(line, r['keywords'])})")
    for r, first in partly:
        print(f"named in part: {at(r)}: {r['found'][0][0]}: {r['found'][0][1]} ({first})")
    for r in good:
        if r["verdict"] != "passed":
            print(f"CORRECT LAYER FAILED: {at(r)}: " + (r["error"] or "; ".join(r["failing"])))
    slow = [r for r in rows if r["seconds"] > SLOW]
    slowest = lambda r: ", ".join(f"{law} {t:.0f} s" for t, law in r["slowest"])  # noqa: E731
    print(f"checks above {SLOW:.0f} s: " + ("; ".join(f"{at(r)} {r['seconds']:.0f} s (slowest rows: {slowest(r)})"
                                                     for r in slow) or "none"))
    print(f"total {sum(r['seconds'] for r in rows):.1f} s in pmach.check; load average {os.getloadavg()[0]:.1f} "
          f"at the end ({load:.1f} at the start; the machine may be shared, so the seconds are indicative)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
