#!/usr/bin/python3
"""The extracted Coq model against the C++ reference, exactly over Q.

Compiles the OCaml program extracted by proofs/Extraction.v (in the proof
gate's output directory) with its driver model_cases.ml, generates cases
with `reference_cases generate`, and requires

  * the model's results and the C++ reference's (`eval reference`) to be
    equal, line for line (one line per case and operation);
  * the output of every mutant of property_tests/support/span_mutants.hpp
    that `reference_cases policies` lists to differ from the model's;
  * the cases to reach real work: most composites and fibre products
    non-empty, most machines with a parameter that survives cleaning.

Usage: extracted_vs_cpp.py --coq-out DIR --ocamlopt PATH --reference PATH
                           --out DIR [--seed N] [--cases N]
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Operations per case: 14 of the span core, clean, and forward and backward
# of the machine with an array sigma and with relu, the layers dense, conv,
# conv_transpose, average_pool, graph_conv and time_conv, and the seed's
# three machines, RecurMachine, DenseMachine and ConvMachine (span, grading,
# cleaning).
PER_CASE = 28


def run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode:
        sys.exit(f"extracted_vs_cpp: `{' '.join(cmd)}` failed ({done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return i, x, y
    if len(la) != len(lb):
        i = min(len(la), len(lb))
        return i, (la[i] if i < len(la) else "(end)"), (lb[i] if i < len(lb) else "(end)")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--coq-out", required=True)
    parser.add_argument("--ocamlopt", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", default="20261201")
    parser.add_argument("--cases", type=int, default=1000)
    args = parser.parse_args()

    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    for f in ("pm_model.ml", "pm_model.mli"):
        src = os.path.join(args.coq_out, f)
        if not os.path.isfile(src):
            sys.exit(f"extracted_vs_cpp: {src} missing: the proof gate (ctest proofs) "
                     "extracts it from proofs/Extraction.v")
        shutil.copy(src, args.out)
    shutil.copy(os.path.join(HERE, "model_cases.ml"), args.out)
    run([args.ocamlopt, "-w", "-a", "pm_model.mli", "pm_model.ml", "model_cases.ml", "-o",
         "model_cases"], cwd=args.out)

    cases = run([args.reference, "generate", args.seed, str(args.cases)])
    model = run([os.path.join(args.out, "model_cases")], input=cases)
    lines = model.splitlines()
    ops = sorted({line.split()[1] for line in lines})
    if len(lines) != PER_CASE * args.cases:
        sys.exit(f"extracted_vs_cpp: the model printed {len(lines)} lines for {args.cases} "
                 f"cases, expected {PER_CASE} per case")
    # Coverage: `i op X E ...` for scomp, `i fib m E ...` for fib.
    nonempty = {op: sum(1 for l in lines if l.split()[1] == op and l.split()[3] != "0")
                for op in ("scomp", "pcomp", "fib")}
    # Machines whose cleaned parameters are not all zero: some edges enter.
    nonempty["clean"] = sum(1 for l in lines if l.split()[1] == "clean"
                            and any(v != "0/1" for v in l.split()[3:]))
    # Seed machines whose cleaning keeps a non-zero parameter: the cleaned
    # parameters are the rationals after the (integer) grades, at the end.
    def cleaned(line):
        tokens = line.split()
        k = len(tokens)
        while k > 0 and "/" in tokens[k - 1]:
            k -= 1
        return tokens[k:]

    for op in ("recur", "dense_machine", "conv_machine"):
        nonempty[op] = sum(1 for l in lines if l.split()[1] == op
                           and any(v != "0/1" for v in cleaned(l)))
    print(f"extracted_vs_cpp: {args.cases} cases (seed {args.seed}), operations {', '.join(ops)}; "
          f"non-empty: {nonempty['fib']} fibre products, {nonempty['scomp']} span composites, "
          f"{nonempty['pcomp']} parametric composites, {nonempty['clean']} machines, "
          f"{nonempty['recur']} RecurMachines, {nonempty['dense_machine']} DenseMachines and "
          f"{nonempty['conv_machine']} ConvMachines with a non-zero cleaned parameter")
    failures = []
    if min(nonempty.values()) * 2 < args.cases:
        failures.append("fewer than half of the fibre products, composites or cleaned "
                        "parameters are non-empty: the generator does not reach real cases")

    reference = run([args.reference, "eval", "reference"], input=cases)
    diff = first_difference(model, reference)
    if diff:
        i, m, r = diff
        failures.append(f"model and C++ reference differ at line {i + 1}:\n"
                        f"  model:     {m}\n  reference: {r}")
    else:
        print(f"extracted_vs_cpp: model == C++ reference on all {len(lines)} results")

    mutants = [p for p in run([args.reference, "policies"]).split() if p != "reference"]
    if not mutants:
        failures.append("no mutant to compare")
    for mutant in mutants:
        out = run([args.reference, "eval", mutant], input=cases)
        diff = first_difference(model, out)
        if diff is None:
            failures.append(f"mutant {mutant} agrees with the model on every case")
        else:
            i, m, r = diff
            tm, tr = m.split(), r.split()
            k = next((j for j, (x, y) in enumerate(zip(tm, tr)) if x != y), min(len(tm), len(tr)))
            print(f"extracted_vs_cpp: mutant {mutant} caught at line {i + 1} "
                  f"(case {tm[0]}, {tm[1]}, token {k}): model `{' '.join(tm[k:k + 4])}`, "
                  f"mutant `{' '.join(tr[k:k + 4])}`")
    for f in failures:
        print("extracted_vs_cpp: FAILED: " + f)
    if not failures:
        print(f"extracted_vs_cpp: passed (the reference agrees, {len(mutants)} of "
              f"{len(mutants)} mutants caught)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
