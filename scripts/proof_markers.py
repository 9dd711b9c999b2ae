#!/usr/bin/python3
"""The one reading of the Coq files of proofs/, shared by the traceability
check (scripts/traceability.py) and the proof gate (proofs/check_proofs.py).

A Coq file is read as Coq reads it: nested comments and string literals are
set aside, the rest is cut into sentences (a '.' followed by blank space),
and each sentence is classified by its command word once attributes
(`#[local]`), modifiers (`Local`, `Global`, ...), control prefixes
(`Timeout n`, `Redirect "f"`, `Time`, `Export`, ...) and proof bullets are
removed. From this reading come

  * every declaration of a proposition, with its qualified name (the
    modules around it), its line, and where its proof ends (the sentence
    Qed, Defined, Admitted, Abort or Save, or `Proof term`): the commands of
    THEOREM_KEYWORDS; a name declared twice in one module is reported;
  * the law markers, comments whose whole text is `Law: ID` (any spacing),
    each attached to the declaration that follows it, whose proof must end
    with Qed, Defined or a `Proof term`;
  * the refusals: commands that add an assumption or switch a kernel check
    off, so that a proof resting on them would mean nothing.

The proof gate takes these as an early report only: it decides from the
compiled library (coqchk, Print Assumptions, the printed statements).

Usage: proof_markers.py --self-test   check the reader on planted cases
"""
import re
import sys
from dataclasses import dataclass, field

ID = r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*"
THEOREM_KEYWORDS = ("Theorem", "Lemma", "Corollary", "Proposition", "Fact", "Remark", "Example")
# Commands that declare an assumption anywhere.
ASSUMPTION_COMMANDS = ("Axiom", "Axioms", "Parameter", "Parameters", "Conjecture",
                       "Conjectures")
# Commands that are assumptions when no Section is open (a section variable
# outside a section is an axiom).
SECTION_COMMANDS = ("Hypothesis", "Hypotheses", "Variable", "Variables", "Context")
MODIFIERS = ("Local", "Global", "Polymorphic", "Monomorphic", "Cumulative", "NonCumulative",
             "Private", "Program", "Time", "Succeed", "Instructions", "Profile", "Export",
             "Import")
# Control prefixes with an argument: `Timeout 100 Axiom ...` and
# `Redirect "file" Axiom ...` (the string is blanked before classifying)
# are the command after them.
CONTROLS = re.compile(r"(?:Timeout\s+\d+|Redirect(?=\s))")
# The sentences that end a proof: what follows is the next command.
PROOF_ENDS = ("Qed", "Defined", "Admitted", "Abort", "Save")
MARKER = re.compile(r"^\s*Law:\s*(" + ID + r")\s*$")
MARKER_LIKE = re.compile(r"^\s*law\b", re.I)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
ADMIT = re.compile(r"(?<![\w'.])admit(?![\w'])")


@dataclass
class Declaration:
    keyword: str
    name: str
    path: list  # the names of the modules around the declaration
    line: int
    laws: list = field(default_factory=list)  # IDs of the markers before it
    start: int = 0  # offset of its sentence
    end: int = -1  # offset just after the sentence that ends its proof (-1: none found)
    ending: str = ""  # the command that ends its proof (Qed, Defined, Abort, ...)

    def qualified(self, library):
        return ".".join([library] + self.path + [self.name])


@dataclass
class Sentence:
    command: str  # the first word after attributes, modifiers and bullets
    words: str  # the sentence with attributes and modifiers removed
    attributes: str
    modifiers: list
    start: int
    line: int
    end: int  # offset just after its final '.'


@dataclass
class CoqFile:
    declarations: list = field(default_factory=list)
    imports: list = field(default_factory=list)  # files of `From PM Require`
    problems: list = field(default_factory=list)  # (line, message)


def blank_comments(text):
    """text with comments and string literals replaced by blanks (newlines
    kept), and the top-level comments as (offset, body) pairs."""
    out, comments = list(text), []
    i, n = 0, len(text)

    def string_end(j):
        j += 1
        while j < n:
            if text[j] == '"':
                if j + 1 < n and text[j + 1] == '"':
                    j += 2
                    continue
                return j + 1
            j += 1
        return n

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if text.startswith("(*", i):
            start, depth, j = i, 1, i + 2
            while j < n and depth:
                if text.startswith("(*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*)", j):
                    depth, j = depth - 1, j + 2
                elif text[j] == '"':
                    j = string_end(j)
                else:
                    j += 1
            comments.append((start, text[start + 2:j - 2] if depth == 0 else text[start + 2:]))
            blank(start, j)
            i = j
        elif text[i] == '"':
            j = string_end(i)
            blank(i, j)
            i = j
        else:
            i += 1
    return "".join(out), comments


def split_sentences(code):
    """(start offset, text, end offset) of each sentence of code (comments
    blanked)."""
    sentences, begin = [], 0
    for m in re.finditer(r"\.(?=\s|$)", code):
        if m.start() > 0 and code[m.start() - 1] == ".":
            continue  # `..` of a recursive notation
        body = code[begin:m.start()]
        stripped = body.lstrip()
        if stripped:
            sentences.append((begin + len(body) - len(stripped), stripped, m.end()))
        begin = m.end()
    tail = code[begin:].lstrip()
    if tail:
        sentences.append((len(code) - len(tail), tail, len(code)))
    return sentences


def classify(start, body, line, end):
    i, attributes, modifiers = 0, [], []
    while True:
        while i < len(body) and (body[i].isspace() or body[i] in "-+*{}"):
            i += 1  # bullets and braces of a proof
        m = re.match(r"\d+\s*:|all\s*:", body[i:])
        if m:
            i += m.end()  # goal selectors
            continue
        if body.startswith("#[", i):
            depth, j = 0, i + 1
            while j < len(body):
                depth += {"[": 1, "]": -1}.get(body[j], 0)
                j += 1
                if depth == 0:
                    break
            attributes.append(body[i:j])
            i = j
            continue
        m = CONTROLS.match(body, i)
        if m:
            modifiers.append(m.group(0).split()[0])
            i = m.end()
            continue
        m = IDENT.match(body, i)
        if m and m.group(0) in MODIFIERS:
            modifiers.append(m.group(0))
            i = m.end()
            continue
        break
    words = " ".join(body[i:].split())
    m = IDENT.match(words)
    return Sentence(m.group(0) if m else "", words, " ".join(attributes), modifiers, start,
                    line, end)


def read_coq(text):
    """The CoqFile of the source text."""
    result = CoqFile()
    code, comments = blank_comments(text)
    line_of = lambda pos: text.count("\n", 0, pos) + 1
    sentences = [classify(s, b, line_of(s), e) for s, b, e in split_sentences(code)]
    blocks = []  # ("Section" | "Module", name)
    declared_at = {}
    open_proof = None  # the declaration whose proof is being read
    for st in sentences:
        cmd, words = st.command, st.words
        refuse = lambda what: result.problems.append(
            (st.line, f"refused: {what} (a proof resting on it would prove nothing)"))
        if "bypass_check" in st.attributes:
            refuse(f"`{st.attributes}` switches a kernel check off")
        if cmd in ASSUMPTION_COMMANDS:
            refuse(f"`{' '.join(([st.attributes] if st.attributes else []) + st.modifiers + [cmd])}`"
                   " declares an assumption")
        elif cmd in SECTION_COMMANDS and not any(k == "Section" for k, _ in blocks):
            refuse(f"top-level `{cmd}` outside any Section is an axiom")
        elif cmd == "Admitted" or (cmd == "Admit" and words.startswith("Admit Obligations")):
            refuse(f"`{words}` leaves a proof open")
        elif cmd == "Unset" and re.search(r"\bChecking\b", words):
            refuse(f"`{words}` switches a kernel check off")
        elif cmd == "Declare" and words.startswith("Declare ML Module"):
            refuse("`Declare ML Module` loads a plugin, which can change what is checked")
        elif cmd == "Extract" and re.match(r"Extract (Inlined )?(Constant|Inductive)\b", words):
            result.problems.append(
                (st.line, f"refused: `{' '.join(words.split()[:3])}` replaces model code by "
                 "hand-written OCaml in the extracted program"))
        if ADMIT.search(words):
            refuse("the tactic `admit` leaves a goal open")
        if cmd == "Section":
            blocks.append(("Section", words.split()[1] if len(words.split()) > 1 else ""))
        elif cmd == "Module" and ":=" not in words:
            names = [w for w in words.split()[1:] if w not in ("Type", "Import", "Export")]
            blocks.append(("Module", IDENT.match(names[0]).group(0) if names else ""))
        elif cmd == "End":
            name = words.split()[1] if len(words.split()) > 1 else ""
            if not blocks or blocks[-1][1] != name:
                result.problems.append((st.line, f"`End {name}` closes no open block of that name"))
            else:
                blocks.pop()
        elif cmd in THEOREM_KEYWORDS:
            m = IDENT.match(words, len(cmd) + 1)
            if not m:
                result.problems.append((st.line, f"`{cmd}` without a name"))
                continue
            decl = Declaration(cmd, m.group(0), [n for k, n in blocks if k == "Module"], st.line,
                               start=st.start)
            same = [d for d in result.declarations
                    if d.name == decl.name and d.path == decl.path]
            if same:
                result.problems.append(
                    (st.line, f"`{decl.name}` declared again (also line {same[0].line}): "
                     "a law marker must name one constant"))
            result.declarations.append(decl)
            declared_at[st.start] = decl
            open_proof = decl
        elif open_proof is not None and (cmd in PROOF_ENDS or (
                cmd == "Proof" and len(words.split()) > 1 and words.split()[1] not in ("with", "using"))):
            open_proof.end, open_proof.ending = st.end, cmd
            open_proof = None
        if cmd == "From" and re.match(r"From PM Require\b", words):
            rest = re.sub(r"^From PM Require\s+(Import\s+|Export\s+)?", "", words)
            result.imports.extend(rest.split())
    for k, name in blocks:
        result.problems.append((len(text.splitlines()), f"{k} {name} is never closed"))

    starts = [st.start for st in sentences]
    for offset, body in comments:
        marker = MARKER.match(body)
        if not marker:
            if MARKER_LIKE.match(body):
                result.problems.append(
                    (line_of(offset), f"malformed law marker `(*{body}*)`: expected `(* Law: ID *)`"))
            continue
        following = [s for s in starts if s > offset]
        decl = declared_at.get(following[0]) if following else None
        if decl is None or not _between_sentences(code, offset):
            result.problems.append(
                (line_of(offset), f"law marker {marker.group(1)} is not followed by a "
                 f"{', '.join(THEOREM_KEYWORDS[:-1])} or {THEOREM_KEYWORDS[-1]}"))
            continue
        decl.laws.append(marker.group(1))
        if decl.ending not in ("Qed", "Defined", "Proof"):
            result.problems.append(
                (decl.line, f"law theorem {decl.name} ends with "
                 f"`{decl.ending or '(nothing)'}`, not Qed, Defined or a `Proof term`"))
    return result


def _between_sentences(code, offset):
    """Whether offset is where a sentence may start: only blanks since the end
    of the previous sentence (or the start of the file)."""
    before = code[:offset].rstrip()
    return not before or (before.endswith(".") and not before.endswith(".."))


def read_file(path):
    with open(path, encoding="utf-8") as f:
        return read_coq(f.read())


# ---------------------------------------------------------------------------
# Self-test: the reader must see what it is meant to see.

PLANTED = '''(* A comment naming (* Law: A-GHOST *) is nested and ignored. *)
Definition s := "(* Law: A-STRING *) Axiom in a string".
(* Law: A-ONE *)
Theorem one : True.
Proof. exact I. Qed.
(*  Law:   A-TWO  *)
Corollary two : True.
Proof.
  - exact I.
Qed.
Module M.
Section S.
Variable x : nat.
Hypothesis h : x = x.
(* Law: A-THREE *)
(* Law: A-FOUR *)
#[local] Example three : x = x.
Proof. exact h. Qed.
End S.
End M.
Local Axiom cheat : False.
#[local] Axiom cheat2 : False.
Hypothesis top : False.
Context (c : False).
Unset Guard Checking.
#[bypass_check(guard)] Fixpoint f (n : nat) : nat := f n.
Lemma open : False.
Proof. admit. Admitted.
(* Law A-FIVE *)
(* Law: A-SIX *)
Definition six := 6.
From PM Require Import Spans Machines.
Extract Inductive nat => int [ "0" "succ" ].
Timeout 100 Axiom t1 : False.
Redirect "log" Export Unset Guard Checking.
Timeout 100 Module Hidden.
(* Law: A-SEVEN *)
Theorem seven : True.
Abort.
Theorem seven : True.
Proof I.
End Hidden.
Time Timeout 5 Extract Inlined Constant plus => "(+)".
'''


def self_test():
    r = read_coq(PLANTED)
    failures = []
    got = [(d.keyword, d.qualified("PM.F"), d.laws) for d in r.declarations]
    want = [("Theorem", "PM.F.one", ["A-ONE"]), ("Corollary", "PM.F.two", ["A-TWO"]),
            ("Example", "PM.F.M.three", ["A-THREE", "A-FOUR"]), ("Lemma", "PM.F.open", []),
            ("Theorem", "PM.F.Hidden.seven", ["A-SEVEN"]), ("Theorem", "PM.F.Hidden.seven", [])]
    if got != want:
        failures.append(f"declarations {got}, expected {want}")
    if r.imports != ["Spans", "Machines"]:
        failures.append(f"imports {r.imports}")
    expected = [(21, "`Local Axiom` declares"), (22, "`#[local] Axiom` declares"),
                (23, "top-level `Hypothesis`"), (24, "top-level `Context`"),
                (25, "`Unset Guard Checking`"), (26, "bypass_check"),
                (28, "`admit`"), (28, "`Admitted`"), (29, "malformed law marker"),
                (30, "A-SIX is not followed"),
                (33, "`Extract Inductive nat` replaces model code"),
                (34, "`Timeout Axiom` declares"), (35, "`Unset Guard Checking`"),
                (38, "seven ends with `Abort`"), (40, "`seven` declared again"),
                (43, "`Extract Inlined Constant` replaces model code")]
    unmatched = list(r.problems)
    for line, text in expected:
        hit = next((p for p in unmatched if p[0] == line and text in p[1]), None)
        if hit is None:
            failures.append(f"not reported: line {line}: {text}")
        else:
            unmatched.remove(hit)
    failures += [f"unexpected report: line {l}: {m}" for l, m in unmatched]
    for f in failures:
        print("proof_markers self-test: " + f)
    print(f"proof_markers self-test: {'FAILED' if failures else 'passed'} "
          f"({len(want)} declarations, {len(expected)} planted faults, {len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    print(__doc__, file=sys.stderr)
    sys.exit(2)
