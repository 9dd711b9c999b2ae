#!/usr/bin/python3
"""The proof gate: what it takes for the laws of spec/ to count as proved.

For the tree at --root (spec/*.md and proofs/*.v) the gate

  1. reads every proofs/*.v with scripts/proof_markers.py (the parser the
     traceability check uses) and refuses what would make a proof mean
     nothing: axioms and parameters (also `Local` or `#[local]`), top-level
     Hypothesis/Variable/Context, Admitted/admit, `Unset ... Checking`,
     `bypass_check`, ML plugins, and law markers that mark nothing;
  2. compiles every file with coqc under the logical root PM, in the order
     of their `From PM Require` imports;
  3. runs Print Assumptions on every Theorem, Lemma, Corollary,
     Proposition, Fact, Remark and Example, and requires each answer to be
     "Closed under the global context" (no axiom, no parameter, no
     assumed-guarded fixpoint, no opaque admitted proof), except that the
     files of REAL_FILES may use the axioms of REAL_AXIOMS and no other;
  4. requires the set of (law, file, theorem) marked `(* Law: ID *)` in
     proofs/ to equal the set named on the `Proof:` lines of spec/.

Usage:
  check_proofs.py --root DIR --out DIR [--coqc coqc]
  check_proofs.py ... --expect-failure REGEX
      succeed only if the gate fails and its report matches REGEX (the
      fixtures of proofs/selftest/, one per way around the gate)
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import proof_markers  # noqa: E402
import traceability  # noqa: E402

LIBRARY = "PM"
FLAGS = ["-q", "-w", "-notation-overridden,-ambiguous-paths"]
SENTINEL = "pm-assumptions: "
CLOSED = "Closed under the global context"
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


def gate(root, out_dir, coqc, say):
    problems = []
    report = problems.append
    proof_dir = os.path.join(root, "proofs")
    stems = sorted(f[:-2] for f in os.listdir(proof_dir) if f.endswith(".v"))
    if not stems:
        raise GateFailure(f"{proof_dir}: no .v file")
    files = {}
    for stem in stems:
        files[stem] = proof_markers.read_file(os.path.join(proof_dir, stem + ".v"))
        problems += [f"proofs/{stem}.v:{line}: {msg}" for line, msg in files[stem].problems]
    order = dependency_order(files, report)
    if problems:
        raise GateFailure("\n".join(problems))

    # 4 first: it needs no compilation, and a mismatch is the cheapest to report.
    spec_problems = []
    laws = traceability.read_laws(root, spec_problems)
    named = {(law.id, f, thm) for law in laws.values() for f, thm in law.proofs}
    marked = {(law, f"proofs/{stem}.v", d.name)
              for stem in stems for d in files[stem].declarations for law in d.laws}
    for law_id, f, thm in sorted(named - marked):
        report(f"spec: {law_id}: its Proof line names {f} {thm}, "
               f"which is not a declaration marked (* Law: {law_id} *)")
    for law_id, f, thm in sorted(marked - named):
        report(f"{f}: {thm} is marked (* Law: {law_id} *), "
               f"but no Proof line of {law_id} in spec/ names it")
    if spec_problems or problems:
        raise GateFailure("\n".join(spec_problems + problems))

    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    for stem in order:
        shutil.copy(os.path.join(proof_dir, stem + ".v"), out_dir)
        done = run_coqc(coqc, out_dir, [stem + ".v"])
        if done.returncode:
            raise GateFailure(f"coqc proofs/{stem}.v failed ({done.returncode}):\n"
                              f"{done.stdout}{done.stderr}")
        say(f"compiled proofs/{stem}.v")

    declarations = [(stem, d) for stem in order for d in files[stem].declarations]
    if not declarations:
        raise GateFailure("proofs/ declares no theorem")
    script = [f"Require {LIBRARY}.{stem}." for stem in order]
    for stem, d in declarations:
        name = d.qualified(f"{LIBRARY}.{stem}")
        script += [f'Goal True. idtac "{SENTINEL}{name}". Abort.', f"Print Assumptions {name}."]
    with open(os.path.join(out_dir, "Assumptions.v"), "w", encoding="utf-8") as f:
        f.write("\n".join(script) + "\n")
    done = run_coqc(coqc, out_dir, ["Assumptions.v"])
    if done.returncode:
        raise GateFailure(f"Print Assumptions failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    # The answer of each declaration is the text between its sentinel and the next.
    answers = {}
    current = None
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith(SENTINEL):
            current = line[len(SENTINEL):]
            answers[current] = []
        elif current is not None:
            answers[current].append(line)
        elif line.strip():
            report(f"Print Assumptions: unexpected output `{line}`")
    on_reals = 0
    for stem, d in declarations:
        name = d.qualified(f"{LIBRARY}.{stem}")
        answer = "\n".join(answers.get(name, ["(no answer)"])).strip()
        if answer != CLOSED and stem in REAL_FILES and real_axioms_only(answer):
            on_reals += 1
        elif answer != CLOSED:
            report(f"proofs/{stem}.v:{d.line}: {d.keyword} {d.name} is not closed under the "
                   f"global context; Print Assumptions says:\n  " + answer.replace("\n", "\n  "))
    if problems:
        raise GateFailure("\n".join(problems))
    n_laws = len({law for law, _, _ in marked})
    closed = len(declarations) - on_reals
    say(f"{closed} of {len(declarations)} theorems closed under the global context, "
        f"{on_reals} on the axioms of the reals only; "
        f"{len(marked)} law theorems ({n_laws} laws), the same set as the Proof: lines of spec/")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--coqc", default="coqc")
    parser.add_argument("--expect-failure", metavar="REGEX")
    args = parser.parse_args()
    lines = []

    def say(text):
        lines.append(text)
        print(text, flush=True)

    try:
        gate(os.path.abspath(args.root), os.path.abspath(args.out), args.coqc, say)
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
