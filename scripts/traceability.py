#!/usr/bin/python3
"""Spec-test-proof traceability.

Every law of the specification is a heading `#### ID: name` in spec/*.md,
followed by the evidence lines `- Test: ...` and `- Proof: ...` (see
spec/README.md). This script collects

  * the laws and their evidence lines from spec/*.md;
  * the Catch test cases that the test executables of a build register
    (`--list-test-names-only` of each tests/ and property_tests/ executable,
    so the preprocessor and the compiler have had their say), and which of
    them the default run leaves out (hidden by a `[.]`-style tag); a name
    that starts with `ID:` is a property test of the law, `ID mutant:` its
    mutant test;
  * the same test cases as written in tests/ and property_tests/ (TEST_CASE
    and TEMPLATE_TEST_CASE, also when built by a macro such as
    `#define LAW(ID, NAME, ...) TEST_CASE(ID ": " NAME) {...}`), for their
    bodies, which must reach an assertion, as must every property they run;
  * the proofs in proofs/*.v: a comment `(* Law: ID *)` followed by the
    Theorem (Lemma, Corollary, ...) that proves the law, read by
    scripts/proof_markers.py, the parser the proof gate uses too;

and reports, one line per problem naming the file and the law:

  * a law without a property test, or without a mutant test, that is
    registered, shown to the default run and asserts;
  * a law test that is written but registered by no executable (left out by
    `#if 0`, an `#ifdef` not taken, or a file not built), one that is hidden,
    one that reaches no REQUIRE/CHECK/RC_ASSERT/..., and one that runs a
    property reaching none;
  * a test or a proof that names an unknown law ID;
  * a Test line naming a file that does not exist, or none of whose tests
    carries the law's ID;
  * a Proof line naming a file or theorem that does not exist, or a theorem
    that is not marked with the law's ID;
  * a proof of a law whose spec says `Proof: none`;
  * a law defined twice, or without its Test and Proof lines;
  * a docs/traceability.md that is not the table of the tree.

Usage:
  traceability.py --check [--build DIR]  exit 1 if there is any problem
                                         (DIR: the build, default ./build)
  traceability.py --write [--build DIR]  also write docs/traceability.md
  traceability.py --root FIXTURE --exe EXE --expect FILE
                                         pass when the fixture tree, whose tests
                                         EXE registers, reports exactly FILE's
                                         problems (scripts/selftest/traceability)
  traceability.py --self-test            run the checker on small trees with
                                         known faults in the spec and proofs
"""
import argparse
import os
import re
import subprocess
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
    body: str = ""  # the test's block, macro arguments substituted
    hidden: bool = False  # Catch runs it only when named (a `[.]`-style tag)


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


def block_after(text, i):
    """The balanced block `{...}` that starts at the first non-blank after i, or ""."""
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text) or text[i] != "{":
        return ""
    parsed = split_arguments(text, i)
    return text[i:parsed[1]] if parsed else ""


def test_calls(text):
    """(offset, name expression, body) of every test macro call in text."""
    for m in re.finditer(r"\b(" + "|".join(TEST_MACROS) + r")\s*\(", text):
        parsed = split_arguments(text, m.end() - 1)
        if parsed and parsed[0]:
            yield m.start(), parsed[0][0], block_after(text, parsed[1])


def substitute(text, bindings):
    """text with each macro parameter (a whole word outside string literals)
    replaced by its argument."""
    if not bindings:
        return text
    word = re.compile(r"\b(" + "|".join(map(re.escape, bindings)) + r")\b")
    out, i = [], 0
    while i < len(text):
        if text[i] in "\"'":
            j = literal_end(text, i)
            out.append(text[i:j])
            i = j
            continue
        m = word.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            out.append(bindings[m.group(1)])
            i = m.end()
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def read_sources(root):
    """rel path -> text (comments blanked, continued lines joined) of every C++
    file under tests/ and property_tests/."""
    sources = {}
    for top in ("tests", "property_tests"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".cpp", ".hpp", ".h")):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        text = strip_comments(f.read()).replace("\\\n", "  ")
                    sources[os.path.relpath(path, root).replace(os.sep, "/")] = text
    return dict(sorted(sources.items()))


def read_tests(sources):
    """The test cases written in the sources, with their bodies. Only the
    names and bodies are read here: which of them are compiled, and how they
    are tagged, the test executables say (registered_tests)."""
    # Test macros: those of a source file apply to it, those of headers to all.
    own, shared = {}, {}
    for rel, text in sources.items():
        own[rel] = {}
        for d in DEFINE.finditer(text):
            params = [p.strip() for p in d.group(2).split(",")]
            if any(True for _ in test_calls(d.group(3))):
                (shared if rel.endswith((".hpp", ".h")) else own[rel])[d.group(1)] = (
                    params, d.group(3))
    tests = []
    for rel, text in sources.items():
        macros = {**shared, **own[rel]}
        defines = [(d.start(), d.end()) for d in DEFINE.finditer(text)]
        inside = lambda pos: any(a <= pos < b for a, b in defines)
        line_of = lambda pos: text.count("\n", 0, pos) + 1
        for pos, expr, body in test_calls(text):
            if inside(pos):
                continue
            name = evaluate_name(expr, {})
            if name is not None:
                tests.append(Test(name, rel, line_of(pos), body))
        if not macros:
            continue
        for m in re.finditer(r"\b(" + "|".join(map(re.escape, macros)) + r")\s*\(", text):
            if inside(m.start()):
                continue
            parsed = split_arguments(text, m.end() - 1)
            if not parsed:
                continue
            params, replacement = macros[m.group(1)]
            expanded = substitute(replacement, dict(zip(params, parsed[0])))
            for _, expr, body in test_calls(expanded):
                name = evaluate_name(expr, {})
                if name is not None:
                    tests.append(Test(name, rel, line_of(m.start()), body))
    return tests


# ---------------------------------------------------------------------------
# What the test executables register: Catch lists its test cases after the
# preprocessor and the compiler have had their say, so a test inside `#if 0`
# or an `#ifdef` that is not taken is not there. A test Catch lists for "*"
# but not for the default run is hidden (`[.]`, `[.integration]`, `[!hide]`...).

def catch_executables(build):
    """The test executables of a build directory (tests/ and property_tests/)."""
    found = []
    for sub in ("tests", "property_tests"):
        d = os.path.join(build, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if (name.startswith(("test_", "law_")) and os.path.isfile(path)
                    and os.access(path, os.X_OK)):
                found.append(path)
    return found


def build_of(executable):
    """(top build directory, source directory it was configured from) of an
    executable, or (its directory, None) outside a CMake build."""
    d = os.path.dirname(os.path.abspath(executable))
    while True:
        cache = os.path.join(d, "CMakeCache.txt")
        if os.path.isfile(cache):
            for line in open(cache, encoding="utf-8", errors="replace"):
                if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                    return d, line.split("=", 1)[1].strip()
            return d, None
        if os.path.dirname(d) == d:
            return os.path.dirname(os.path.abspath(executable)), None
        d = os.path.dirname(d)


def list_tests(executable, everything):
    """[(name, file, line)] that the Catch executable lists (all, or the
    default run's). Catch 2 exits with the number of tests listed."""
    cmd = [executable, "--list-test-names-only", "-v", "high"] + (["*"] if everything else [])
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    if r.returncode < 0:
        raise RuntimeError(f"{executable}: killed by signal {-r.returncode} when listing tests")
    listed = []
    for line in r.stdout.splitlines():
        name, sep, where = line.rpartition("\t@")
        path, colon, number = where.rpartition(":")
        if not sep or not colon or not number.isdigit():
            raise RuntimeError(f"{executable}: unexpected line in --list-test-names-only: {line!r}")
        listed.append((name, path, int(number)))
    return listed


def registered_tests(root, executables, problems):
    """The test cases that the executables register, as Tests (without bodies)."""
    tests, seen = [], set()
    for exe in executables:
        # __FILE__ is as the compiler was given it: absolute, or relative to
        # the top build directory, where ninja and make run the compiler.
        top, src_root = build_of(exe)
        src_root = src_root or root
        try:
            shown = set(list_tests(exe, everything=False))
            listed = list_tests(exe, everything=True)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            problems.append(f"{exe}: cannot list its tests: {e}")
            continue
        for entry in listed:
            name, path, line = entry
            path = os.path.normpath(os.path.join(top, path))
            base = root if os.path.abspath(path).startswith(os.path.abspath(root) + os.sep) \
                else src_root
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if (name, rel, line) not in seen:
                seen.add((name, rel, line))
                tests.append(Test(name, rel, line, hidden=entry not in shown))
    return tests


def same_test(written, registered):
    """A test case as written is the registered one (a TEMPLATE_TEST_CASE
    registers `NAME - TYPE` per type)."""
    return written.file == registered.file and (
        registered.name == written.name or registered.name.startswith(written.name + " - "))


# ---------------------------------------------------------------------------
# Assertions: a law's test must assert, and so must every property it runs
# (a RapidCheck property whose body asserts nothing passes on every case).
# Reaching is by name through the functions and named lambdas of the test
# sources (overloads and templates of one name count as one), so it can say
# "reaches" for a call that does not assert, never "does not reach" for one
# that does.

ASSERTION = re.compile(r"\b(?:STATIC_REQUIRE|REQUIRE(?:_FALSE|_THROWS\w*|_NOTHROW|_THAT)?"
                       r"|CHECK(?:_FALSE|_THROWS\w*|_NOTHROW|_THAT)?|FAIL(?:_CHECK)?"
                       r"|RC_ASSERT\w*|RC_FAIL)\s*\(")
PROPERTY_CALL = re.compile(r"\b(?:rc::prop|rc::check|rejects)\s*\(")
NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype",
                 "alignof", "static_assert", "noexcept", *TEST_MACROS}
CALLABLE = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>\s*)?\(|\b([A-Za-z_]\w*)\s*=\s*\[")
QUALIFIERS = re.compile(r"(?:\s*(?:const|noexcept|override|final|mutable|&&?|->\s*[\w:<>,\s*&]+?))*\s*(?=\{)")


def function_bodies(sources):
    """name -> bodies of the functions and named lambdas defined in the sources."""
    bodies = {}
    for text in sources.values():
        for m in CALLABLE.finditer(text):
            name = m.group(1) or m.group(2)
            if name in NOT_FUNCTIONS:
                continue
            i = m.end() - 1
            if m.group(2):  # name = [captures](parameters) qualifiers { ... }
                parsed = split_arguments(text, i)
                if not parsed:
                    continue
                i = parsed[1]
                while i < len(text) and text[i].isspace():
                    i += 1
                if i >= len(text) or text[i] != "(":
                    body = block_after(text, i)
                    if body:
                        bodies.setdefault(name, []).append(body)
                    continue
            parsed = split_arguments(text, i)
            if not parsed:
                continue
            q = QUALIFIERS.match(text, parsed[1])
            body = block_after(text, q.end()) if q else ""
            if body:
                bodies.setdefault(name, []).append(body)
    return bodies


class Reach:
    """Whether a piece of test code reaches an assertion."""

    def __init__(self, sources):
        self.bodies = function_bodies(sources)
        self.memo = {}

    def name(self, name):
        if name not in self.memo:
            self.memo[name] = False  # a recursive call does not assert by itself
            self.memo[name] = any(self.code(b) for b in self.bodies.get(name, []))
        return self.memo[name]

    def code(self, text):
        return bool(ASSERTION.search(text)) or any(
            self.name(w) for w in set(re.findall(r"[A-Za-z_]\w*", text)) if w in self.bodies)

    def silent_properties(self, body):
        """The properties run in body (by rc::prop, rc::check or rejects) that
        reach no assertion."""
        silent = []
        for m in PROPERTY_CALL.finditer(body):
            parsed = split_arguments(body, m.end() - 1)
            if parsed and parsed[0] and not self.code(parsed[0][-1]):
                silent.append(parsed[0][-1])
        return silent


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


def collect(root, executables=None):
    """The evidence of the tree at root. The law tests are those that the test
    executables register (None: every test as written counts as registered,
    which only the self-test's trees without a build use)."""
    problems = []
    laws = read_laws(root, problems)
    sources = read_sources(root)
    written = read_tests(sources)
    if executables is None:
        registered = [Test(t.name, t.file, t.line) for t in written]
    else:
        registered = registered_tests(root, executables, problems)
    for t in registered:
        source = next((w for w in written if same_test(w, t)), None)
        t.body = source.body if source else ""
    for w in written:
        if TEST_NAME.match(w.name) and not any(same_test(w, t) for t in registered):
            problems.append(f"{w.file}:{w.line}: {TEST_NAME.match(w.name).group(1)}: test "
                            f"\"{w.name}\" is written but no test executable registers it "
                            "(left out by the preprocessor, or its file is not built)")
    proofs, defined = read_proofs(root, problems)
    return Evidence(laws, registered, proofs, defined, problems), Reach(sources)


def check(root, executables=None):
    ev, reach = collect(root, executables)
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
        where = f"{t.file}:{t.line}: {law_id}: test \"{t.name}\""
        if t.hidden:
            problems.append(f"{where} is hidden (a `[.]`-style tag): the default run skips it")
            continue
        if not t.body:
            problems.append(f"{where}: its body is not found in {t.file}")
            continue
        if not reach.code(t.body):
            problems.append(f"{where} asserts nothing (no REQUIRE, CHECK, RC_ASSERT... reached)")
            continue
        silent = reach.silent_properties(t.body)
        if silent:
            problems.append(f"{where} runs a property that asserts nothing: {silent[0]}")
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
        "*non-trivial*: the share of the suite's cases that the law classifies as",
        "non-trivial, at the suite's seed (`PM_RC_PARAMS`, seed 1; the suite requires at",
        "least half); *kill rate*: over seeds 1..100, the share of seeds at which the",
        "default case count finds a counterexample to the law's mutant (the lowest, when a",
        "law has several); the suite judges each mutant at its own seed. Both measured by",
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
  TEST_CASE(ID " mutant: " NAME) { REQUIRE(rejects([] { MUT; })); }
template <class I> void law_one(int x) { RC_ASSERT(I::f(x) == x); }
LAW("A-ONE", "the first law", rc::prop("A-ONE", [](int x) { law_one<Ref>(x); }), law_one<Mut>(3))
TEST_CASE("A-TWO: the second law", "[tag]") { CHECK(1 + 1 == 2); }
TEST_CASE("A-TWO mutant: the second law") { const auto wrong = [] { REQUIRE(1 + 1 != 3); }; wrong(); }
TEST_CASE("unit tests without an ID are not laws") {}
SHARED_LAW("A-TWO")
"""

GOOD_HEADER = """#define SHARED_LAW(ID) TEST_CASE(ID ": from a macro of a header") { REQUIRE(true); }
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
    faulty_tests = GOOD_TESTS + """TEST_CASE("A-THREE: the third law") { CHECK(true); }
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


def matched(problems, expected):
    """The expected problems (substrings) that no problem shows, and the
    problems that none of them expects; each problem answers one expectation."""
    unmatched, missing = list(problems), []
    for text in expected:
        hit = next((p for p in unmatched if text in p), None)
        if hit is None:
            missing.append(text)
        else:
            unmatched.remove(hit)
    return missing, unmatched


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--build", help="build directory whose test executables are listed "
                        "(default: ROOT/build)")
    parser.add_argument("--exe", action="append", help="list this test executable instead "
                        "(repeatable)")
    parser.add_argument("--check", action="store_true", help="fail on any problem")
    parser.add_argument("--write", action="store_true", help="write docs/traceability.md")
    parser.add_argument("--expect", help="a fixture's file of expected problems, one substring "
                        "a line: pass when exactly these are reported")
    parser.add_argument("--self-test", action="store_true", help="test the checker itself")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    build = args.build or os.path.join(args.root, "build")
    executables = args.exe or catch_executables(build)
    ev, by_law, proofs_of, problems = check(args.root, executables)
    if not executables:
        problems.append(f"{build}: no test executables (build the tests first, or give --build)")
    table = render(ev, by_law, proofs_of, read_measured(args.root))
    doc = os.path.join(args.root, "docs", "traceability.md")
    if args.write:
        write(args.root, "docs/traceability.md", table)
    elif not os.path.isfile(doc) or open(doc, encoding="utf-8").read() != table:
        problems.append("docs/traceability.md: not current (a stale table fails the check); "
                        "run scripts/traceability.py --write")
    if args.expect:
        expected = [l.rstrip("\n") for l in open(args.expect, encoding="utf-8") if l.strip()]
        missing, unexpected = matched(problems, expected)
        for text in missing:
            print(f"not reported: {text}")
        for p in unexpected:
            print(f"unexpected report: {p}")
        print(f"fixture {args.root}: {'FAILED' if missing or unexpected else 'passed'} "
              f"({len(expected)} planted faults, {len(missing) + len(unexpected)} failures)")
        return 1 if missing or unexpected else 0
    for p in problems:
        print(p)
    n_tests = sum(len(v["property"]) + len(v["mutant"]) for v in by_law.values())
    print(f"traceability: {len(ev.laws)} laws, {n_tests} law tests, {len(ev.proofs)} proofs, "
          f"{len(problems)} problems", file=sys.stderr)
    return 1 if problems and (args.check or not args.write) else 0


if __name__ == "__main__":
    sys.exit(main())
