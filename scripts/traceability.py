#!/usr/bin/python3
"""Spec-test-proof traceability.

Every law of the specification is a heading `#### ID: name` in spec/*.md,
followed by the evidence lines `- Test: ...` and `- Proof: ...` (see
spec/README.md). This script collects

  * the laws and their evidence lines from spec/*.md;
  * the Catch test names from tests/ and property_tests/ (TEST_CASE and
    TEMPLATE_TEST_CASE, also when the name is built by a macro such as
    `#define LAW(ID, NAME, ...) TEST_CASE(ID ": " NAME)`); a name that
    starts with `ID:` is a property test of the law, `ID mutant:` its
    mutant test;
  * the proofs in proofs/*.v: a comment `(* Law: ID *)` followed by the
    Theorem (Lemma, Corollary, ...) that proves the law, read by
    scripts/proof_markers.py, the parser the proof gate uses too;

and reports, one line per problem naming the file and the law:

  * a law without a property test, or without a mutant test;
  * a test or a proof that names an unknown law ID;
  * a Test line naming a file that does not exist, or none of whose tests
    carries the law's ID;
  * a Proof line naming a file or theorem that does not exist, or a theorem
    that is not marked with the law's ID;
  * a proof of a law whose spec says `Proof: none`;
  * a law defined twice, or without its Test and Proof lines.

Usage:
  traceability.py --check       exit 1 if there is any problem
  traceability.py --write       also write docs/traceability.md
  traceability.py --self-test   run the checker on built trees with known faults
"""
import argparse
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field

import proof_markers

ID = r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*"
LAW_HEADING = re.compile(r"^####\s+(" + ID + r"):\s*(.*?)\s*$")
EVIDENCE = re.compile(r"^\s*[-*]\s+(Test|Proof):\s*(.*?)\s*$")
BACKTICKED = re.compile(r"`([^`]+)`")
TEST_NAME = re.compile(r"^(" + ID + r")( mutant)?:")
TEST_MACROS = ("TEST_CASE", "TEMPLATE_TEST_CASE", "TEMPLATE_PRODUCT_TEST_CASE", "SCENARIO")


@dataclass
class Law:
    id: str
    name: str
    chapter: str  # spec/<file>.md
    line: int
    tests: list = field(default_factory=list)  # files named on the Test line
    proofs: list = field(default_factory=list)  # (file, theorem) named on the Proof line
    proof_none: bool = False
    proof_note: str = ""
    has_test_line: bool = False
    has_proof_line: bool = False


@dataclass
class Test:
    name: str
    file: str
    line: int


@dataclass
class Proof:
    law: str
    theorem: str
    file: str
    line: int


# ---------------------------------------------------------------------------
# The specification.

def read_laws(root, problems):
    laws = {}
    spec_dir = os.path.join(root, "spec")
    if not os.path.isdir(spec_dir):
        problems.append("spec/: directory missing")
        return laws
    for fname in sorted(os.listdir(spec_dir)):
        if not fname.endswith(".md"):
            continue
        rel = "spec/" + fname
        current = None
        fenced = False
        with open(os.path.join(spec_dir, fname), encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                if text.lstrip().startswith("```"):
                    fenced = not fenced  # examples in code blocks are not laws
                    continue
                if fenced:
                    continue
                heading = LAW_HEADING.match(text)
                if heading:
                    law_id = heading.group(1)
                    if law_id in laws:
                        other = laws[law_id]
                        problems.append(f"{rel}:{number}: {law_id}: law defined twice "
                                        f"(also {other.chapter}:{other.line})")
                        current = None
                        continue
                    current = Law(law_id, heading.group(2), rel, number)
                    laws[law_id] = current
                    continue
                if text.startswith("#"):
                    current = None
                    continue
                evidence = EVIDENCE.match(text)
                if current is None or not evidence:
                    continue
                kind, rest = evidence.groups()
                names = BACKTICKED.findall(rest)
                if kind == "Test":
                    current.has_test_line = True
                    current.tests.extend(names)
                else:
                    current.has_proof_line = True
                    if rest.startswith("none"):
                        current.proof_none = True
                        current.proof_note = rest[len("none"):].strip(" ()")
                    elif len(names) % 2 or not names:
                        problems.append(f"{rel}:{number}: {current.id}: Proof line must be "
                                        "`none` or pairs `proofs/File.v` `theorem`")
                    else:
                        current.proofs.extend(zip(names[0::2], names[1::2]))
    return laws


# ---------------------------------------------------------------------------
# The tests: a small reading of C++ that is enough for Catch test names.

def literal_end(src, i):
    """The index after the string or character literal that starts at i."""
    j = i + 1
    while j < len(src) and src[j] != src[i]:
        j += 2 if src[j] == "\\" else 1
    return j + 1


def strip_comments(src):
    """Blanks comments outside string literals, keeping line numbers."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            j = literal_end(src, i)
            out.append(src[i:j])
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in src[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_arguments(src, start):
    """The comma-separated arguments of the call whose '(' is at start, and
    the index after its ')'; None when unbalanced."""
    depth, i, n, args, begin = 0, start, len(src), [], start + 1
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            i = literal_end(src, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(src[begin:i].strip())
                return args, i + 1
        elif c == "," and depth == 1:
            args.append(src[begin:i].strip())
            begin = i + 1
        i += 1
    return None


STRING_OR_WORD = re.compile(r'\s*(?:(u8|u|U|L)?"((?:[^"\\]|\\.)*)"|([A-Za-z_]\w*))')


def unescape(literal):
    """The text of a string literal's body; only the escapes of test names."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), literal)


def evaluate_name(expr, bindings):
    """The value of a concatenation of string literals and macro parameters,
    or None when it is anything else."""
    pos, parts = 0, []
    expr = expr.strip()
    while pos < len(expr):
        m = STRING_OR_WORD.match(expr, pos)
        if not m:
            return None
        if m.group(3) is not None:
            value = bindings.get(m.group(3))
            if value is None:
                return None
            parts.append(value)
        else:
            parts.append(unescape(m.group(2)))
        pos = m.end()
        while pos < len(expr) and expr[pos].isspace():
            pos += 1
    return "".join(parts) if parts else None


DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)(.*)$", re.M)


def test_calls(text):
    """(offset, name expression) of every test macro call in text."""
    for m in re.finditer(r"\b(" + "|".join(TEST_MACROS) + r")\s*\(", text):
        parsed = split_arguments(text, m.end() - 1)
        if parsed and parsed[0]:
            yield m.start(), parsed[0][0]


def read_tests(root):
    files = []
    for top in ("tests", "property_tests"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".cpp", ".hpp", ".h")):
                    path = os.path.join(dirpath, name)
                    files.append((os.path.relpath(path, root).replace(os.sep, "/"), path))
    # Test macros: those of a source file apply to it, those of headers to all.
    sources, own, shared = {}, {}, {}
    for rel, path in sorted(files):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read()).replace("\\\n", "  ")
        sources[rel] = text
        own[rel] = {}
        for d in DEFINE.finditer(text):
            params = [p.strip() for p in d.group(2).split(",")]
            names = [expr for _, expr in test_calls(d.group(3))]
            if names:
                (shared if rel.endswith((".hpp", ".h")) else own[rel])[d.group(1)] = (params, names)
    tests = []
    for rel, text in sources.items():
        macros = {**shared, **own[rel]}
        defines = [(d.start(), d.end()) for d in DEFINE.finditer(text)]
        inside = lambda pos: any(a <= pos < b for a, b in defines)
        line_of = lambda pos: text.count("\n", 0, pos) + 1
        for pos, expr in test_calls(text):
            if inside(pos):
                continue
            name = evaluate_name(expr, {})
            if name is not None:
                tests.append(Test(name, rel, line_of(pos)))
        if not macros:
            continue
        for m in re.finditer(r"\b(" + "|".join(map(re.escape, macros)) + r")\s*\(", text):
            if inside(m.start()):
                continue
            parsed = split_arguments(text, m.end() - 1)
            if not parsed:
                continue
            params, names = macros[m.group(1)]
            args = parsed[0]
            bindings = {}
            for p, a in zip(params, args):
                value = evaluate_name(a, {})
                if value is not None:
                    bindings[p] = value
            for expr in names:
                name = evaluate_name(expr, bindings)
                if name is not None:
                    tests.append(Test(name, rel, line_of(m.start())))
    return tests


# ---------------------------------------------------------------------------
# The proofs.

def read_proofs(root, problems):
    """The marked theorems and the declared names of proofs/*.v, read by the
    parser the proof gate uses (scripts/proof_markers.py)."""
    proofs, defined = [], {}
    proof_dir = os.path.join(root, "proofs")
    if not os.path.isdir(proof_dir):
        return proofs, defined
    for fname in sorted(os.listdir(proof_dir)):
        if not fname.endswith(".v"):
            continue
        rel = "proofs/" + fname
        coq = proof_markers.read_file(os.path.join(proof_dir, fname))
        problems.extend(f"{rel}:{line}: {message}" for line, message in coq.problems)
        defined[rel] = {d.name for d in coq.declarations}
        proofs.extend(Proof(law, d.name, rel, d.line) for d in coq.declarations for law in d.laws)
    return proofs, defined


# ---------------------------------------------------------------------------
# The check.

@dataclass
class Evidence:
    laws: dict
    tests: list
    proofs: list
    defined: dict
    problems: list


def collect(root):
    problems = []
    laws = read_laws(root, problems)
    tests = read_tests(root)
    proofs, defined = read_proofs(root, problems)
    return Evidence(laws, tests, proofs, defined, problems)


def check(root):
    ev = collect(root)
    problems, laws = ev.problems, ev.laws
    by_law = {}
    for t in ev.tests:
        m = TEST_NAME.match(t.name)
        if not m:
            continue
        law_id, mutant = m.group(1), bool(m.group(2))
        if law_id not in laws:
            problems.append(f"{t.file}:{t.line}: {law_id}: test \"{t.name}\" names an unknown law ID")
            continue
        by_law.setdefault(law_id, {"property": [], "mutant": []})[
            "mutant" if mutant else "property"].append(t)
    proofs_of = {}
    for p in ev.proofs:
        if p.law not in laws:
            problems.append(f"{p.file}:{p.line}: {p.law}: proof {p.theorem} names an unknown law ID")
            continue
        proofs_of.setdefault(p.law, []).append(p)
    for law in laws.values():
        where = f"{law.chapter}:{law.line}: {law.id}"
        found = by_law.get(law.id, {"property": [], "mutant": []})
        if not law.has_test_line:
            problems.append(f"{where}: no `- Test:` line")
        if not law.has_proof_line:
            problems.append(f"{where}: no `- Proof:` line")
        if not found["property"]:
            problems.append(f"{where}: no property test (TEST_CASE(\"{law.id}: ...\"))")
        if not found["mutant"]:
            problems.append(f"{where}: no mutant test (TEST_CASE(\"{law.id} mutant: ...\"))")
        test_files = {t.file for t in found["property"] + found["mutant"]}
        for named in law.tests:
            if not os.path.isfile(os.path.join(root, named)):
                problems.append(f"{where}: Test line names {named}, which does not exist")
        if law.tests and found["property"] and not any(
                t.file in law.tests for t in found["property"]):
            problems.append(f"{where}: its property tests are in "
                            f"{', '.join(sorted(test_files))}, not in the files of its Test line")
        marked = proofs_of.get(law.id, [])
        if law.proof_none and marked:
            for p in marked:
                problems.append(f"{p.file}:{p.line}: {law.id}: proof {p.theorem} exists but "
                                f"{law.chapter} says `Proof: none`")
        for pfile, theorem in law.proofs:
            if pfile not in ev.defined:
                problems.append(f"{where}: Proof line names {pfile}, which does not exist")
            elif theorem not in ev.defined[pfile]:
                problems.append(f"{where}: Proof line names {theorem}, not a theorem of {pfile}")
            elif not any(p.file == pfile and p.theorem == theorem for p in marked):
                problems.append(f"{where}: {pfile} {theorem} is not marked (* Law: {law.id} *)")
    return ev, by_law, proofs_of, problems


def evidence_level(law, found, marked):
    tested = found["property"] and found["mutant"]
    if marked and tested:
        return "proved and tested"
    if marked:
        return "proved, not tested"
    if tested:
        return "tested only"
    return "missing"


def read_measured(root):
    """Per law ID: the non-trivial share of its cases and the lowest kill rate of
    its mutant tests, as measured by scripts/mutate.py --kill-rates."""
    share, kill = {}, {}
    path = os.path.join(root, "property_tests", "measured.tsv")
    if not os.path.isfile(path):
        return share, kill
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        kind, name, k, n = line.rstrip("\n").split("\t")
        m = TEST_NAME.match(name) or re.match(r"^(" + ID + r")", name)
        law = m.group(1)
        table = share if kind == "distribution" else kill
        if law not in table or int(k) * int(table[law][1]) < int(table[law][0]) * int(n):
            table[law] = (k, n)
    return share, kill


def render(ev, by_law, proofs_of, measured=({}, {})):
    share, kill = measured
    rows = [
        "# Traceability",
        "",
        "Generated by `scripts/traceability.py --write` from spec/, tests/,",
        "property_tests/ and proofs/; do not edit by hand. The test suite runs",
        "`scripts/traceability.py --check`, which fails on any gap (see",
        "[assurance.md](assurance.md) for what each level of evidence means).",
        "",
        "*non-trivial*: the share of the default run's cases that the law classifies as",
        "non-trivial (the suite requires at least half); *kill rate*: over seeds 1..100, the",
        "share of seeds at which the default case count finds a counterexample to the law's",
        "mutant (the lowest, when a law has several). Both measured by",
        "`scripts/mutate.py --kill-rates build` into `property_tests/measured.tsv`.",
        "",
        "| law | chapter | tests | mutant | proof | evidence | non-trivial | kill rate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratio = lambda table, law: "/".join(table[law]) if law in table else "—"
    cell = lambda items: "<br>".join(items) if items else "—"
    for law in sorted(ev.laws.values(), key=lambda l: (l.chapter, l.line)):
        found = by_law.get(law.id, {"property": [], "mutant": []})
        carried = {t.file for t in found["property"]}
        tests = [f"`{f}`" for f in sorted(carried)] + [
            f"`{f}` †" for f in law.tests if f not in carried]
        mutants = sorted({f"`{t.file}`" for t in found["mutant"]})
        marked = proofs_of.get(law.id, [])
        proof = [f"`{p.file}` `{p.theorem}`" for p in marked]
        if not proof and law.proof_none:
            proof = ["none" + (f" ({law.proof_note})" if law.proof_note else "")]
        chapter = f"[{law.chapter[5:]}](../{law.chapter})"
        rows.append(f"| {law.id} | {chapter} | {cell(tests)} | {cell(mutants)} | {cell(proof)} | "
                    f"{evidence_level(law, found, marked)} | {ratio(share, law.id)} | "
                    f"{ratio(kill, law.id)} |")
    counts = {}
    for law in ev.laws.values():
        level = evidence_level(law, by_law.get(law.id, {"property": [], "mutant": []}),
                               proofs_of.get(law.id, []))
        counts[level] = counts.get(level, 0) + 1
    rows += ["", "† named on the law's `Test:` line, but no test there carries the law ID in its",
             "name (for instance one floating-point test case that covers several laws).",
             "", f"{len(ev.laws)} laws: " +
             ", ".join(f"{n} {level}" for level, n in sorted(counts.items())) + "."]
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------------
# Self-test: the checker must see the faults it is meant to see.

def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


GOOD_SPEC = """# Chapter
```
#### NOT-A-LAW: an example inside a code block
```
#### A-ONE: proved and tested
- Test: `property_tests/a.cpp`
- Proof: `proofs/A.v` `a_one`

#### A-TWO: tested, no proof
- Test: `property_tests/a.cpp`
- Proof: none (a property of the layout)
"""

GOOD_TESTS = """// TEST_CASE("A-GHOST: a commented-out test is no test")
#define LAW(ID, NAME, REF, MUT) \\
  TEST_CASE(ID ": " NAME) { REF; } \\
  TEST_CASE(ID " mutant: " NAME) { MUT; }
LAW("A-ONE", "the first law", check(f(1, 2)), reject(g(3)))
TEST_CASE("A-TWO: the second law", "[tag]") {}
TEST_CASE("A-TWO mutant: the second law") {}
TEST_CASE("unit tests without an ID are not laws") {}
SHARED_LAW("A-TWO")
"""

GOOD_HEADER = """#define SHARED_LAW(ID) TEST_CASE(ID ": from a macro of a header") {}
"""

GOOD_PROOF = """(* A comment naming (* Law: A-GHOST *) is nested and ignored. *)
(* Law: A-ONE *)
Theorem a_one : True.
Proof. exact I. Qed.
"""


def self_test():
    failures = []
    with tempfile.TemporaryDirectory() as clean:
        write(clean, "spec/a.md", GOOD_SPEC)
        write(clean, "property_tests/a.cpp", GOOD_TESTS)
        write(clean, "property_tests/support/laws.hpp", GOOD_HEADER)
        write(clean, "proofs/A.v", GOOD_PROOF)
        ev, by_law, proofs_of, problems = check(clean)
        if problems:
            failures.append("a complete tree reports problems: " + "; ".join(problems))
        if sorted(ev.laws) != ["A-ONE", "A-TWO"]:
            failures.append(f"laws read: {sorted(ev.laws)}, expected A-ONE, A-TWO")
        if len(by_law.get("A-ONE", {}).get("mutant", [])) != 1:
            failures.append("the macro-built mutant test of A-ONE was not found")
        if len(by_law.get("A-TWO", {}).get("property", [])) != 2:
            failures.append("the test built by a header's macro was not found")
        table = render(ev, by_law, proofs_of)
        if "| A-ONE |" not in table or "proved and tested" not in table:
            failures.append("the table lacks the row of A-ONE")

    faulty_spec = GOOD_SPEC + """
#### A-THREE: no mutant
- Test: `property_tests/a.cpp`
- Proof: `proofs/A.v` `a_three_missing`

#### A-FOUR: no test at all
- Test: `property_tests/missing.cpp`
- Proof: none

#### A-ONE: defined again
- Test: `property_tests/a.cpp`
- Proof: none
"""
    faulty_tests = GOOD_TESTS + """TEST_CASE("A-THREE: the third law") {}
TEST_CASE("Z-UNKNOWN: a test of no law") {}
TEST_CASE("Z-UNKNOWN mutant: a mutant of no law") {}
"""
    faulty_proof = GOOD_PROOF + """(* Law: A-TWO *)
Lemma a_two : True.
Proof. exact I. Qed.
(* Law: Z-NOWHERE *)
Theorem z : True.
Proof. exact I. Qed.
"""
    expected = [
        ("spec/a.md", "A-ONE", "law defined twice"),
        ("spec/a.md", "A-THREE", "no mutant test"),
        ("spec/a.md", "A-THREE", "a_three_missing, not a theorem of proofs/A.v"),
        ("spec/a.md", "A-FOUR", "no property test"),
        ("spec/a.md", "A-FOUR", "no mutant test"),
        ("spec/a.md", "A-FOUR", "property_tests/missing.cpp, which does not exist"),
        ("property_tests/a.cpp", "Z-UNKNOWN", "names an unknown law ID"),
        ("property_tests/a.cpp", "Z-UNKNOWN", "names an unknown law ID"),
        ("proofs/A.v", "Z-NOWHERE", "names an unknown law ID"),
        ("proofs/A.v", "A-TWO", "says `Proof: none`"),
    ]
    with tempfile.TemporaryDirectory() as faulty:
        write(faulty, "spec/a.md", faulty_spec)
        write(faulty, "property_tests/a.cpp", faulty_tests)
        write(faulty, "proofs/A.v", faulty_proof)
        _, _, _, problems = check(faulty)
        unmatched = list(problems)
        for path, law_id, text in expected:
            hit = next((p for p in unmatched
                        if p.startswith(path + ":") and f": {law_id}:" in p and text in p), None)
            if hit is None:
                failures.append(f"not reported: {path} {law_id} {text}")
            else:
                unmatched.remove(hit)
        failures += [f"unexpected report: {p}" for p in unmatched]
    for f in failures:
        print("self-test: " + f)
    print(f"self-test: {'FAILED' if failures else 'passed'} "
          f"({len(expected)} planted faults, {len(failures)} failures)")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--check", action="store_true", help="fail on any problem")
    parser.add_argument("--write", action="store_true", help="write docs/traceability.md")
    parser.add_argument("--self-test", action="store_true", help="test the checker itself")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    ev, by_law, proofs_of, problems = check(args.root)
    table = render(ev, by_law, proofs_of, read_measured(args.root))
    doc = os.path.join(args.root, "docs", "traceability.md")
    if args.write:
        write(args.root, "docs/traceability.md", table)
    elif not os.path.isfile(doc) or open(doc, encoding="utf-8").read() != table:
        problems.append("docs/traceability.md: not current (a stale table fails the check); "
                        "run scripts/traceability.py --write")
    for p in problems:
        print(p)
    n_tests = sum(len(v["property"]) + len(v["mutant"]) for v in by_law.values())
    print(f"traceability: {len(ev.laws)} laws, {n_tests} law tests, {len(ev.proofs)} proofs, "
          f"{len(problems)} problems", file=sys.stderr)
    return 1 if problems and (args.check or not args.write) else 0


if __name__ == "__main__":
    sys.exit(main())
