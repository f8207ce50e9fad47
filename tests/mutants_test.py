#!/usr/bin/env python3
"""The mutant explorer (scripts/mutants.py) on a tiny program, in seconds, so it cannot rot unseen.

usage: mutants_test.py

A 20-line C++ "chapter" with one step: a loop that sums doubled numbers, a sentence fixed in
the text ("each number is doubled"), a sentence with the sum, a check (OK / NOT OK) and a
`code:` line. The test reads the site from that line, makes the mutants there with libclang and
checks that each kind is found at its exact source range; then it builds the program, a
comparison-flipped mutant and a constant-halved one (c++ -O0), runs them and checks that the
flip changes the verdict, and that halving the constant changes the sum while the fixed
sentence, now false, is flagged. Prints OK / NOT OK per check; exit 0 if all hold.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import mutants  # noqa: E402
import mutants_report  # noqa: E402

PROGRAM = r"""// site.cpp: a one-step "chapter" for the mutant explorer's test
#include <cstdio>
static bool below(int a, int b) { return a < b; }
static int capped(int v) { return v > 100 ? 100 : v; }
int main() {
  int total = 0;
  for (int i = 0; i < 4; ++i) total += i * 2;
  total = capped(total);
  std::puts("── Step 1: a sum (test)");
  std::puts("each number is doubled before it is added to the total");
  std::printf("the doubled numbers below four add up to %d\n", total);
  std::puts(below(total, 20) ? "OK: the total is below the limit" : "NOT OK: the total is not below the limit");
  std::puts("  code: site.cpp:7 · site.cpp:3 below");
  return 0;
}
"""

failures = []


def check(ok, what):
    print(("OK " if ok else "NOT OK ") + what)
    if not ok:
        failures.append(what)


def build_run(tmp, name, text):
    src = os.path.join(tmp, name + ".cpp")
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    exe = os.path.join(tmp, name)
    r = subprocess.run([os.environ.get("CXX", "c++"), "-O0", "-std=c++17", "-o", exe, src], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s does not compile: %s" % (name, r.stderr[-500:]))
    r = subprocess.run([exe], capture_output=True, text=True, timeout=20)
    return r.returncode, r.stdout.splitlines()


def main():
    if mutants.ci is None:
        print("NOT OK mutants_test: libclang's Python bindings are missing: run scripts/deps.sh all (python3-clang)")
        return 1
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        print("NOT OK mutants_test: no C++ compiler (c++) to build the tiny program")
        return 1
    with tempfile.TemporaryDirectory(prefix="ts-mutants-test-") as tmp:
        with open(os.path.join(tmp, "site.cpp"), "w", encoding="utf-8") as f:
            f.write(PROGRAM)
        code, base = build_run(tmp, "base", PROGRAM)
        check(code == 0 and any(line.startswith("OK: ") for line in base), "the tiny program runs and says OK")
        sites = mutants.code_sites([line.replace("site.cpp", "src/site.cpp") for line in base])
        check(sites == [("src/site.cpp", 7, ""), ("src/site.cpp", 3, "below")], "its code: line gives two sites: %s" % sites)

        src = mutants.Source("site.cpp", ["-std=c++17"], root=tmp)
        body = src.function_body(3)
        found = src.mutants(*body)
        text = PROGRAM.encode("utf-8")
        edits = {(k, text[s:e].decode(), new) for k, s, e, new, _ in found}
        check(("flip", "a < b", "a >= b") in edits, "below(): `a < b` flipped to `a >= b` (%s)" % sorted(edits))
        check(("swap", "a < b", "b < a") in edits, "below(): the operands of `a < b` swapped")
        main_body = src.function_body(7)
        found_main = src.mutants(*main_body)
        edits = {(k, text[s:e].decode(), new) for k, s, e, new, _ in found_main}
        want = [("const", "2", "4"), ("const", "2", "1"), ("off-by-one", "4", "4 - 1"),
                ("plus-minus", "total += i * 2", "total -= i * 2"), ("flip", "i < 4", "i >= 4"),
                ("drop-call", "capped(total)", "total"), ("drop-call", "total += i * 2", "(void)0"),
                ("drop-call", 'std::puts("each number is doubled before it is added to the total")', "(void)0")]
        for w in want:
            check(w in edits, "main(): %s `%s` -> `%s` at its exact range" % w)
        check(not any("code_site" in new for _, _, _, new, _ in found_main), "nothing from inside a macro")
        lines_kept = all(PROGRAM.count("\n") == mutants.Mutant(1, src, "s", *m).text.count("\n") for m in found_main)
        check(lines_kept, "every mutant keeps every line where it was")

        flip = next(m for m in found if m[0] == "flip")
        _, flipped = build_run(tmp, "flip", mutants.Mutant(1, src, "below", *flip).text)
        # every mutant in one build, each switched on by TS_MUTANT=n (what a chapter's run uses)
        ordered = sorted(found + found_main, key=lambda m: m[0] != "flip")
        all_of_them = [mutants.Mutant(i + 1, src, "s", *m) for i, m in enumerate(ordered)]
        disjoint = [m for i, m in enumerate(all_of_them)
                    if not any(o.start < m.end and m.start < o.end for o in all_of_them[:i])]
        code, schema_base = build_run(tmp, "schema", mutants.schema(src, disjoint))
        check(code == 0 and schema_base == base, "the build of %d mutants, none switched on, prints as the program" % len(disjoint))
        exe = os.path.join(tmp, "schema")
        n = next(m.n for m in disjoint if m.kind == "flip" and m.rel == "site.cpp" and m.what.startswith("a < b"))
        code, lines, _ = mutants.run_chapter(exe, [], 20, n, code_all=False)
        c = mutants_report.compare(base, lines, set())
        check(bool(c["verdicts"]), "TS_MUTANT=%d (the flip) changes the verdict in that build" % n)
        c = mutants_report.compare(base, flipped, set())
        check(bool(c["verdicts"]) and "NOT OK" in c["verdicts"][0][1], "the flipped comparison changes the verdict: %s" % c["verdicts"])
        half = next(m for m in found_main if m[0] == "const" and m[3] == "1")
        _, halved = build_run(tmp, "half", mutants.Mutant(2, src, "main", *half).text)
        c = mutants_report.compare(base, halved, set())
        flagged = [s for _, s in c["flagged"]]
        check(c["lines_changed"] == 1 and not c["verdicts"], "halving the constant changes the sum only (%d lines)" % c["lines_changed"])
        check(flagged == ["(the step's title) ── Step 1: a sum (test)",
                          "each number is doubled before it is added to the total", "OK: the total is below the limit"],
              "the fixed sentence and the verdict beside the changed sum are flagged: %s" % flagged)
        step = ["── Step 1: a check (test)", "the largest gap is 0.001 here", "  ↳ OK: the rows agree (largest gap 0.001)"]
        other = [step[0], "the largest gap is 0.5 here", "  ↳ OK: the rows agree (largest gap 0.5)"]
        c = mutants_report.compare(step, other, set())
        check(not c["verdicts"] and c["flagged"][-1] == (step[0], "(same verdict, other numbers) ↳ OK: the rows agree (largest gap 0.5)"),
              "an OK that stays OK over other numbers is flagged, not counted as a changed verdict: %s" % c["flagged"])
        c = mutants_report.compare(base, base, set())
        check(not c["verdicts"] and not c["flagged"] and c["lines_changed"] == 0, "the unmutated run against itself: nothing")
    print("all mutant-explorer checks hold" if not failures else "%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
