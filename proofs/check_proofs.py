#!/usr/bin/python3
"""The proof gate: what it takes for the laws of spec/ to count as proved.

The decision rests on what Coq has checked in the compiled library, not on
the source text. For the tree at --root (spec/*.md and proofs/*.v) the gate

  1. reads every proofs/*.v with scripts/proof_markers.py (the parser the
     traceability check uses): law markers, declarations, and an early,
     helpful report of what would make a proof mean nothing (axioms,
     Admitted, switched-off checks, Extract directives, markers that mark
     nothing); the law markers must name exactly the theorems of the spec's
     `Proof:` lines. These reports fail the gate too, but nothing passes on
     them: every class they name is also caught by a check below;
  2. compiles every file with coqc under the logical root PM, in the order of
     their `From PM Require` imports, each marked theorem between two anchors
     written into the compiled copy on the lines of the source: before it
     `Definition pm_law_anchor_K := tt.`, whose place Coq reports, and after
     the end of its proof `Succeed Check @name.`, so that the name is defined
     by that very proof (an aborted proof fails the compilation);
  3. runs coqchk, Coq's independent checker, over every module of the
     library, and requires its context summary to hold no assumption of PM
     (Axiom, Parameter, Conjecture, Declare Instance, Declare Module,
     Admitted, however prefixed, used or not), only the axioms of the
     libraries listed in proofs/library_axioms.txt, Set predicative, and no
     type-in-type, unsafe fixpoint or assumed positivity;
  4. asks Coq where each anchor is, and requires the module path to be the
     one the gate read (else the theorem judged might not be the one
     marked); resolves each marked theorem by its fully qualified name,
     prints its statement with `Set Printing All` (no notation, no implicit
     argument hidden) and requires the statements to equal the committed
     proofs/statements.txt: a weakened statement or a notation that changes
     its meaning fails the gate until the file is regenerated on purpose
     (--write-statements);
  5. runs Print Assumptions on every marked theorem and every other theorem,
     lemma, ..., and requires each answer to be "Closed under the global
     context", except that the files of REAL_FILES may use the axioms of
     REAL_AXIOMS and no other. The theorems of a file are judged together
     first (one definition whose body names each of them), and one by one
     only in a file whose joint answer is not clean, to name the theorem: the
     joint answer is the union of theirs, and one traversal of the library
     instead of 272 took the judgement from about 32 to 5 s;
  6. requires the compiled library to hold no extraction directive: `Print
     Extraction Inline` lists nothing, and the extraction of the model (the
     `Extraction "file" ...` commands of proofs/) contains no user-defined
     extraction, so the extracted program is the definitions themselves.

Usage:
  check_proofs.py --root DIR --out DIR [--coqc coqc] [--coqchk coqchk]
  check_proofs.py ... --write-statements
      write proofs/statements.txt of the tree from its compiled library
  check_proofs.py ... --expect-failure REGEX
      succeed only if the gate fails and its report matches REGEX (the
      fixtures of proofs/selftest/, one per way around the gate)
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import proof_markers  # noqa: E402
import traceability  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = "PM"
FLAGS = ["-q", "-w", "-notation-overridden,-ambiguous-paths"]
SENTINEL = "pm-assumptions: "
JOINT = "pm_judge_theorems_of_"  # the definition naming every theorem of a file
CLOSED = "Closed under the global context"
ANCHOR = "pm_law_anchor_"
STATEMENTS = "proofs/statements.txt"
# The Extraction commands that extract nothing.
EXTRACTION_OPTIONS = ("Language", "Inline", "NoInline", "Implicit", "Blacklist", "Library",
                      "TestCompile", "Conservative", "KeepSingleton", "AutoInline", "Optimize",
                      "Flag", "SafeImplicits", "TypeExpand")
# What coqchk lists as axioms of the libraries the proofs build on (Coq's
# standard library, MathComp, MathComp-Analysis, Coquelicot): their axioms
# and the fields of their sealed modules. The gate's own list, not the
# tree's: a tree under test cannot widen it.
LIBRARY_AXIOMS = os.path.join(HERE, "library_axioms.txt")
STATEMENTS_HEADER = """\
# The statement of every law theorem of spec/ as Coq prints it from the
# compiled library (Set Printing All: no notation, every implicit argument
# and coercion shown), one entry per constant: its fully qualified name and
# the laws whose Proof: lines name it, then its type. The proof gate
# (proofs/check_proofs.py, ctest proofs) requires this file to equal what it
# prints, so a changed statement is a changed reviewed file. Regenerate on
# purpose:
#   proofs/check_proofs.py --root . --out build/proofs/coq --write-statements
"""
# The real numbers of Coq's standard library (Rdefinitions) and what
# Coquelicot and MathComp-Analysis (Rstruct) build on them rest on these
# axioms of the standard library; only the files on the reals may use them
# (docs/assurance.md names them).
REAL_FILES = {"Backprop"}
REAL_AXIOMS = {
    "ClassicalDedekindReals.sig_forall_dec",  # the reals: limited omniscience
    "ClassicalDedekindReals.sig_not_dec",  # the reals: weak excluded middle
    "FunctionalExtensionality.functional_extensionality_dep",
    "Epsilon.epsilon_statement",  # Hilbert's epsilon (choice on R)
}


def real_axioms_only(answer):
    """True if a Print Assumptions answer lists axioms of REAL_AXIOMS only."""
    lines = answer.splitlines()
    if not lines or lines[0] != "Axioms:":
        return False
    names = [line.split()[0] for line in lines[1:] if line and not line[0].isspace()]
    return bool(names) and set(names) <= REAL_AXIOMS


class GateFailure(Exception):
    pass


def dependency_order(files, report):
    """The stems of files sorted so that each comes after the files it imports."""
    order, state = [], {}

    def visit(stem, chain):
        if state.get(stem) == "done":
            return
        if state.get(stem) == "visiting":
            report(f"proofs/{stem}.v: import cycle {' -> '.join(chain + [stem])}")
            return
        state[stem] = "visiting"
        for dep in files[stem].imports:
            if dep not in files:
                report(f"proofs/{stem}.v: imports PM.{dep}, which is not a file of proofs/")
            else:
                visit(dep, chain + [stem])
        state[stem] = "done"
        order.append(stem)

    for stem in sorted(files):
        visit(stem, [])
    return order


def run_coqc(coqc, out_dir, args):
    return subprocess.run([coqc] + FLAGS + ["-Q", out_dir, LIBRARY] + args, cwd=out_dir,
                          capture_output=True, text=True)


def with_anchors(text, marked):
    """text with the anchors of the marked declarations [(K, declaration)]
    written in, on the same lines (so that coqc's line numbers are the
    source's)."""
    inserts = []
    for k, d in marked:
        inserts.append((d.start, f"Definition {ANCHOR}{k} := Coq.Init.Datatypes.tt. "))
        if d.end >= 0:
            inserts.append((d.end, f" Succeed Check @{d.name}."))
    for offset, code in sorted(inserts, key=lambda x: x[0], reverse=True):
        text = text[:offset] + code + text[offset:]
    return text


def answers_by_sentinel(output, report):
    """{key: [lines]} of a judge run whose answers follow `SENTINEL key` lines."""
    answers, current = {}, None
    for line in output.splitlines():
        if line.startswith(SENTINEL):
            current = line[len(SENTINEL):]
            answers[current] = []
        elif current is not None:
            answers[current].append(line)
        elif line.strip():
            report(f"judge: unexpected output `{line}`")
    return answers


def judge(coqc, out_dir, order, name, commands):
    """Run the generated file `name`: the library required, then for each
    (key, command) the sentinel of key and the command. Returns the answers
    by key (those given before an error, if any) and coqc's error or None."""
    script = [f"Require {LIBRARY}.{stem}." for stem in order]
    script += ["Require Extraction.", "Set Printing All.", "Set Printing Width 100."]
    for key, command in commands:
        script += [f'Goal True. idtac "{SENTINEL}{key}". Abort.', command]
    with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
        f.write("\n".join(script) + "\n")
    done = run_coqc(coqc, out_dir, [name])
    problems = []
    answers = answers_by_sentinel(done.stdout, problems.append)
    error = None
    if done.returncode:
        error = f"{name} (generated by the gate) failed ({done.returncode}):\n{done.stderr}"
    elif problems:
        error = "\n".join(problems)
    return {key: "\n".join(lines).strip() for key, lines in answers.items()}, error


def coqchk_summary(coqchk, out_dir, order):
    """coqchk over every module of the library (dependencies outside it
    loaded, not re-checked), and its context summary: {heading: [names]}."""
    args = [coqchk, "-silent", "-o", "-Q", out_dir, LIBRARY]
    for stem in order:
        args += ["-norec", f"{LIBRARY}.{stem}"]
    done = subprocess.run(args, cwd=out_dir, capture_output=True, text=True)
    if done.returncode:
        raise GateFailure(f"coqchk failed ({done.returncode}):\n{done.stdout[-3000:]}"
                          f"{done.stderr[-3000:]}")
    text = done.stdout + done.stderr
    if "CONTEXT SUMMARY" not in text:
        raise GateFailure(f"coqchk printed no context summary:\n{text[-3000:]}")
    summary, heading = {}, None
    for line in text[text.index("CONTEXT SUMMARY"):].splitlines()[2:]:
        if line.startswith("* "):
            heading, _, rest = line[2:].partition(":")
            rest = rest.strip()
            summary[heading] = [] if rest in ("", "<none>") else [rest]
        elif heading is not None and line.strip():
            summary[heading].append(line.strip())
    return summary


def check_summary(summary, report):
    allowed = read_list(LIBRARY_AXIOMS)
    theory = summary.get("Theory", ["(missing)"])
    if theory != ["Set is predicative"]:
        report(f"coqchk: the theory is `{' '.join(theory)}`, expected `Set is predicative`")
    for name in summary.get("Axioms", []):
        if name.startswith(LIBRARY + "."):
            report(f"coqchk: {name} is an assumption of the library (an Axiom, Parameter, "
                   "Conjecture, Declare Instance, Declare Module field or Admitted proof): "
                   "a proof resting on it would prove nothing")
        elif name not in allowed:
            report(f"coqchk: {name} is an axiom of a library the proofs load, not listed in "
                   "proofs/library_axioms.txt")
    for heading, names in summary.items():
        if heading not in ("Theory", "Axioms") and names:
            report(f"coqchk: {heading}: {', '.join(names)}")
    for heading in ("Axioms", "Constants/Inductives relying on type-in-type",
                    "Constants/Inductives relying on unsafe (co)fixpoints",
                    "Inductives whose positivity is assumed"):
        if heading not in summary:
            report(f"coqchk: the context summary has no `{heading}`")


def read_list(path):
    with open(path, encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def format_statements(entries):
    """The text of proofs/statements.txt: entries [(qualified, laws, type)]."""
    out = [STATEMENTS_HEADER]
    for qualified, laws, statement in sorted(entries):
        out.append(f"{qualified} [{' '.join(sorted(laws))}]")
        out += [("  " + line).rstrip() for line in statement.splitlines()]
    return "\n".join(out) + "\n"


def compare_statements(path, text, report):
    if not os.path.isfile(path):
        report(f"{STATEMENTS} missing: generate it with --write-statements and review it")
        return
    with open(path, encoding="utf-8") as f:
        committed = f.read()
    if committed == text:
        return
    diff = difflib.unified_diff(committed.splitlines(), text.splitlines(),
                                f"{STATEMENTS} (committed)", "printed by Coq", lineterm="", n=1)
    report(f"{STATEMENTS}: the statements of the law theorems differ from the committed ones "
           "(a changed statement must be reviewed, then regenerated with --write-statements):\n  "
           + "\n  ".join(list(diff)[:60]))


def extraction_commands(proof_dir, stems):
    """The names extracted by the Extraction commands of proofs/ (the output
    file, a string, is blanked with the comments), as `Recursive Extraction
    names.` for the judge (which imports every module first)."""
    commands = []
    for stem in stems:
        with open(os.path.join(proof_dir, stem + ".v"), encoding="utf-8") as f:
            code, _ = proof_markers.blank_comments(f.read())
        for _, words, _ in proof_markers.split_sentences(code):
            words = words.split()
            while words and words[0] in ("Recursive", "Separate"):
                words = words[1:]
            if len(words) > 1 and words[0] == "Extraction" and words[1] not in EXTRACTION_OPTIONS:
                commands.append(f"Recursive Extraction {' '.join(words[1:])}.")
    return commands


def undefined_types(ocaml):
    """The type names of the signatures `(** val f : T **)` of an extracted
    program that it does not define with `type` (or `and`): an inductive
    realised by Extract Inductive is used, not defined."""
    param = r"(?:'\w+\s+|\([^)]*\)\s*)?"
    defined = set(re.findall(r"\b(?:type|and)\s+" + param + r"([a-z_][\w']*)\s*=", ocaml))
    used = set()
    for signature in re.findall(r"\(\*\* val [\w']+ :(.*?)\*\*\)", ocaml, re.S):
        for token in re.findall(r"(?<!['\w.])[A-Za-z_][\w'.]*", signature):
            used.add(token.split(".")[-1])
    return sorted(name for name in used - defined - {"__"} if name[0].islower() or name[0] == "_")


def gate(root, out_dir, coqc, coqchk, say, write_statements=False):
    problems = []
    report = problems.append
    proof_dir = os.path.join(root, "proofs")
    stems = sorted(f[:-2] for f in os.listdir(proof_dir) if f.endswith(".v"))
    if not stems:
        raise GateFailure(f"{proof_dir}: no .v file")
    files = {}
    early = []
    for stem in stems:
        files[stem] = proof_markers.read_file(os.path.join(proof_dir, stem + ".v"))
        early += [f"proofs/{stem}.v:{line}: {msg}" for line, msg in files[stem].problems]
    order = dependency_order(files, report)
    if problems:
        raise GateFailure("\n".join(problems))

    # The markers are comments: which theorems they mark is read from the text.
    laws = traceability.read_laws(root, early)
    named = {(law.id, f, thm) for law in laws.values() for f, thm in law.proofs}
    marked = {(law, f"proofs/{stem}.v", d.name)
              for stem in stems for d in files[stem].declarations for law in d.laws}
    for law_id, f, thm in sorted(named - marked):
        early.append(f"spec: {law_id}: its Proof line names {f} {thm}, "
                     f"which is not a declaration marked (* Law: {law_id} *)")
    for law_id, f, thm in sorted(marked - named):
        early.append(f"{f}: {thm} is marked (* Law: {law_id} *), "
                     f"but no Proof line of {law_id} in spec/ names it")
    if early:
        say("early report from the source text (the decision is Coq's, below):\n  "
            + "\n  ".join(early))

    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    law_decls = []  # (K, stem, declaration) of the marked declarations
    for stem in order:
        marked_here = [(len(law_decls) + i, d)
                       for i, d in enumerate(d for d in files[stem].declarations if d.laws)]
        law_decls += [(k, stem, d) for k, d in marked_here]
        with open(os.path.join(proof_dir, stem + ".v"), encoding="utf-8") as f:
            text = with_anchors(f.read(), marked_here)
        with open(os.path.join(out_dir, stem + ".v"), "w", encoding="utf-8") as f:
            f.write(text)
        done = run_coqc(coqc, out_dir, [stem + ".v"])
        if done.returncode:
            raise GateFailure("\n".join(early + [
                f"coqc proofs/{stem}.v failed ({done.returncode}):\n{done.stdout}{done.stderr}"]))
        say(f"compiled proofs/{stem}.v")

    check_summary(coqchk_summary(coqchk, out_dir, order), report)
    say(f"coqchk: checked {len(order)} modules")

    # One run of Coq on the compiled library: where Coq put each anchor (the
    # module path of the marked theorem), then the statement and assumptions
    # of every theorem by its qualified name, then the extraction directives.
    declarations = [(stem, d, d.qualified(f"{LIBRARY}.{stem}"))
                    for stem in order for d in files[stem].declarations]
    law_constants = {}  # qualified name -> (stem, declaration, law IDs)
    for k, stem, d in law_decls:
        law_constants.setdefault(d.qualified(f"{LIBRARY}.{stem}"), (stem, d, set()))[2].update(
            d.laws)
    commands = [(f"anchor {k}", f"Locate {ANCHOR}{k}.") for k, _, _ in law_decls]
    for qualified in sorted(law_constants):
        commands.append(("type " + qualified, f"Check @{qualified}."))
    by_file = {}
    for stem, _, qualified in declarations:
        by_file.setdefault(stem, []).append(qualified)
    for stem, names in by_file.items():
        # Let-bound, so that each theorem keeps its own type (no universe
        # unified between them), and kept in the body that Coq traverses.
        lets = " ".join(f"let _ := @{q} in" for q in names)
        commands.append((f"file {stem}", f"Definition {JOINT}{stem} : unit := {lets} tt. "
                                         f"Print Assumptions {JOINT}{stem}."))
    commands.append(("extraction inline", "Print Extraction Inline."))
    # The names of the Extraction commands as their files see them.
    commands.append(("import", " ".join(f"Import {LIBRARY}.{stem}." for stem in order)))
    commands += [(f"extraction {i}", c)
                 for i, c in enumerate(extraction_commands(proof_dir, stems))]
    answers, error = judge(coqc, out_dir, order, "Judge.v", commands)
    for k, stem, d in law_decls:
        answer = answers.get(f"anchor {k}", "(no answer)")
        m = re.match(r"Constant (\S+)\." + ANCHOR + str(k) + r"\b", answer)
        qualified = d.qualified(f"{LIBRARY}.{stem}")
        if not m:
            report(f"proofs/{stem}.v:{d.line}: Coq did not find the anchor of {d.name}: {answer}")
        elif f"{m.group(1)}.{d.name}" != qualified:
            report(f"proofs/{stem}.v:{d.line}: the marked {d.keyword} is "
                   f"{m.group(1)}.{d.name} in the compiled library, but {qualified} "
                   "in the source text as the gate reads it (a module it cannot see)")
    if error:
        raise GateFailure("\n".join(early + problems + [error]))

    entries = []
    for qualified, (stem, d, law_ids) in law_constants.items():
        lines = answers.get("type " + qualified, "").splitlines()
        typ = [line for line in lines[1:]]
        if not lines or not typ or not typ[0].lstrip().startswith(":"):
            report(f"Check {qualified}: unexpected answer `{' '.join(lines)}`")
            continue
        statement = "\n".join(line[5:] if line.startswith("     ") else line for line in typ)
        entries.append((qualified, law_ids, statement))
    text = format_statements(entries)
    path = os.path.join(root, STATEMENTS)
    if write_statements:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        say(f"wrote {STATEMENTS}: {len(entries)} law theorems")
    compare_statements(path, text, report)

    allowed = lambda stem, answer: answer == CLOSED or (stem in REAL_FILES
                                                        and real_axioms_only(answer))
    joint = {stem: answers.get(f"file {stem}", "(no answer)") for stem in by_file}
    suspects = [stem for stem in by_file if not allowed(stem, joint[stem])]
    alone = {}
    if suspects:
        alone, error = judge(coqc, out_dir, order, "JudgeAlone.v",
                             [("assumptions " + q, f"Print Assumptions {q}.")
                              for stem in suspects for q in by_file[stem]])
        if error:
            raise GateFailure("\n".join(early + problems + [error]))
    named = set()
    for stem, d, qualified in declarations:
        answer = alone.get("assumptions " + qualified, CLOSED)
        if not allowed(stem, answer):
            named.add(stem)
            report(f"proofs/{stem}.v:{d.line}: {d.keyword} {qualified} is not closed under the "
                   f"global context; Print Assumptions says:\n  " + answer.replace("\n", "\n  "))
    for stem in suspects:
        if stem not in named:  # never a pass that no theorem accounts for
            report(f"proofs/{stem}.v: its theorems together are not closed under the global "
                   f"context, though none alone is reported; Print Assumptions says:\n  "
                   + joint[stem].replace("\n", "\n  "))
    on_reals = sum(len(by_file[stem]) for stem in by_file if joint[stem] != CLOSED)

    inline = [line.strip() for line in answers.get("extraction inline", "").splitlines()
              if line.startswith(" ")]
    if inline:
        report("extraction: the library declares extraction directives "
               f"(Print Extraction Inline: {', '.join(inline)}): an Extract Constant or "
               "Extraction Inline replaces or rewrites model code")
    for key, answer in sorted(answers.items()):
        if key.startswith("extraction ") and key != "extraction inline":
            for name in undefined_types(answer):
                report(f"extraction: the extracted model uses the type `{name}` without "
                       "defining it: defined by hand (Extract Inductive)")
    if problems:
        raise GateFailure("\n".join(early + problems))
    if early:
        raise GateFailure("\n".join(early + ["(the source text only: Coq's checks passed)"]))
    n_laws = len({law for law, _, _ in marked})
    closed = len(declarations) - on_reals
    real = ", ".join(f"{stem}.v" for stem in by_file if joint[stem] != CLOSED) or "none"
    say(f"{closed} of {len(declarations)} theorems closed under the global context, the "
        f"{on_reals} of {real} on the axioms of the reals only at most (judged per file); "
        "coqchk: no assumption in the library; "
        f"{len(entries)} law theorems ({n_laws} laws) resolved by Coq, the same set as the "
        f"Proof: lines of spec/, their statements those of {STATEMENTS}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--coqc", default="coqc")
    parser.add_argument("--coqchk", default="coqchk")
    parser.add_argument("--write-statements", action="store_true")
    parser.add_argument("--expect-failure", metavar="REGEX")
    args = parser.parse_args()
    lines = []

    def say(text):
        lines.append(text)
        print(text, flush=True)

    try:
        gate(os.path.abspath(args.root), os.path.abspath(args.out), args.coqc, args.coqchk, say,
             args.write_statements)
        failed = False
    except GateFailure as failure:
        say(f"proof gate FAILED:\n{failure}")
        failed = True
    if args.expect_failure is None:
        return 1 if failed else 0
    if not failed:
        print(f"self-test: the gate passed on {args.root}, which it must refuse")
        return 1
    if not re.search(args.expect_failure, "\n".join(lines), re.S):
        print(f"self-test: the gate failed on {args.root}, but not with /{args.expect_failure}/")
        return 1
    print(f"self-test: the gate refused {args.root} as expected (/{args.expect_failure}/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
