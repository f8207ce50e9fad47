#!/usr/bin/env python3
"""The mutant explorer's comparison and report (scripts/mutants.py): what a mutant changed in a
chapter's output, step by step, and the markdown (and JSON) report per chapter."""
import json
import os
import re
import difflib
import sys


def short(t, n=60):
    t = " ".join(t.split())
    return t if len(t) <= n else t[:n - 1] + "…"


NUM = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
VERDICT = re.compile(r"\b(NOT OK|OK)\b")


def skeleton(line):
    return NUM.sub("#", line)


def steps_of(lines):
    """[(title, [lines])]: a step opens with its '── ' title"""
    steps = [("(before the first step)", [])]
    for line in lines:
        if line.startswith("── "):
            steps.append((line, []))
        else:
            steps[-1][1].append(line)
    return steps


def is_sentence(line):
    """a line that states something about this run: not a tensor, a code: line, an erratum
    (about the article, true whatever the code does) or a summarised tensor's count"""
    s = line.strip()
    return (not s.startswith("code: ") and len(re.findall(r"[A-Za-z]{2,}", s)) >= 4
            and not s.startswith(("tensor(", "[", ">>>", "! article errata"))
            and not re.match(r"\(\d+ values, summarised", s))


def compare(base, mutant, volatile):
    """what changed, step by step: {verdicts, changed_steps, unchanged_sentences, lines_changed, sites}"""
    def clean(lines):
        return [line for line in lines if skeleton(line) not in volatile]
    result = {"verdicts": [], "flagged": [], "lines_changed": 0, "code_changed": [], "changes": []}
    bsteps, msteps = steps_of(clean(base)), steps_of(clean(mutant))
    mtitles = [skeleton(t) for t, _ in msteps]
    for title, blines in bsteps:
        key = skeleton(title)
        mlines = msteps[mtitles.index(key)][1] if key in mtitles else []
        if key not in mtitles:
            result["verdicts"].append((title, "the step is no longer printed"))
        sm = difflib.SequenceMatcher(None, [skeleton(x) for x in blines], [skeleton(x) for x in mlines], autojunk=False)
        numbers_changed, same = False, []
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                for a, b in zip(blines[i1:i2], mlines[j1:j2]):
                    if a == b:
                        same.append(a)
                    else:
                        numbers_changed = True
                        result["lines_changed"] += 1
                        result["changes"].append((title, a.strip(), b.strip()))
                        if a.strip().startswith("code: "):
                            result["code_changed"].append((a.strip(), b.strip()))
            else:
                numbers_changed = True
                result["lines_changed"] += max(i2 - i1, j2 - j1)
                result["changes"].append((title, " / ".join(x.strip() for x in blines[i1:i1 + 2]) or "(nothing)",
                                          " / ".join(x.strip() for x in mlines[j1:j1 + 2]) or "(nothing)"))
        bv = [x.strip() for x in blines if VERDICT.search(x)]
        mv = [x.strip() for x in mlines if VERDICT.search(x)]
        # a verdict changed when OK became NOT OK (or back), or one came or went; the same OK
        # with other numbers is no change: it is flagged below (a check that may pass on garbage)
        if [VERDICT.findall(x) for x in bv] != [VERDICT.findall(x) for x in mv]:
            gone = [x for x in bv if x not in mv]
            new = [x for x in mv if x not in bv]
            result["verdicts"].append((title, "; ".join(["- " + short(x, 200) for x in gone] + ["+ " + short(x, 200) for x in new])))
        if numbers_changed:  # an unchanged verdict is a lead too: a check that may pass on garbage
            if title.startswith("── ") and title in [t for t, _ in msteps]:  # a step's title says what the step does ("forward, loss, ...")
                result["flagged"].append((title, "(the step's title) " + title))
            result["flagged"] += [(title, s.strip()) for s in same if is_sentence(s)]
            kept = [(a, b) for a, b in zip(bv, mv) if a != b and VERDICT.findall(a) == VERDICT.findall(b)]
            if VERDICT.findall(" ".join(bv)) == VERDICT.findall(" ".join(mv)):
                result["flagged"] += [(title, "(same verdict, other numbers) " + b) for a, b in kept if "NOT OK" not in b]
    return result


def write_report(out_dir, chapter, args, code1, base, sites, notes, total, mutants, results, volatile, timeout):
    counts = {"compile": 0, "timeout": 0, "exit": 0, "verdict": 0, "flagged": 0, "silent": 0}
    body, found = [], []
    for m, code, lines, err in results:
        body.append("### %d. %s\n\nsite: %s\n\n```diff\n%s```\n" % (m.n, m.name(), m.site, m.patch))
        if code == "compile":
            counts["compile"] += 1
            body.append("does not compile (skipped): %s\n" % err)
            continue
        c = compare(base, lines, volatile)
        found.append({"n": m.n, "mutant": m.name(), "site": m.site, "patch": m.patch, "exit": code, "verdicts": c["verdicts"],
                      "flagged": c["flagged"], "changes": c["changes"][:6], "lines_changed": c["lines_changed"]})
        if code == "timeout":
            counts["timeout"] += 1
            body.append("**runs past %.0f s (killed): a finding**\n" % timeout)
        elif code != code1:
            counts["exit"] += 1
            body.append("**exit code %s (unmutated: %s)**; last lines: `%s`\n" % (code, code1, short(" / ".join(lines[-2:]), 300)))
        if c["verdicts"]:
            counts["verdict"] += 1
            body.append("verdicts changed:\n" + "".join("- %s: %s\n" % (short(t, 80), v) for t, v in c["verdicts"]))
        if c["code_changed"]:
            body.append("functions run changed:\n" + "".join("- `%s` -> `%s`\n" % (short(a, 150), short(b, 150))
                                                              for a, b in c["code_changed"][:5]))
        if c["lines_changed"] == 0 and code == code1:
            counts["silent"] += 1
            body.append("output identical: nothing the chapter prints depends on this edit (equivalent, or unchecked)\n")
        else:
            body.append("%d lines changed, the first:\n" % c["lines_changed"])
            body += ["- [%s] `%s` -> `%s`\n" % (short(t, 40), short(a, 150), short(b, 150)) for t, a, b in c["changes"][:4]]
        if c["flagged"]:
            counts["flagged"] += 1
            body.append("sentences printed unchanged in steps whose numbers changed:\n")
            body += ["- [%s] %s\n" % (short(t, 50), short(s, 240)) for t, s in c["flagged"]]
        body.append("\n")
    summary = ("%s: %d mutants (of %d at %d sites): %d do not compile, %d run past the timeout, %d change the exit "
               "code, %d change a verdict, %d leave sentences unchanged beside changed numbers, %d change no output"
               % (chapter, len(mutants), total, len(sites), counts["compile"], counts["timeout"], counts["exit"],
                  counts["verdict"], counts["flagged"], counts["silent"]))
    head = ["# Mutants of %s\n\n" % chapter, summary + ".\n\n",
            "Run: `%s --code-all %s` (exit %s unmutated). Sites (from its `code:` lines):\n\n" % (chapter, " ".join(args), code1)]
    head += ["- %s:%d %s\n" % s for s in sites]
    if notes:
        head += ["\nLeft out:\n\n"] + ["- %s\n" % n for n in notes]
    if volatile:
        head.append("\n%d line shapes differ between two unmutated runs and are ignored.\n" % len(volatile))
    head.append("\nA flagged sentence is a lead, not a verdict: read it beside the numbers that changed.\n\n")
    path = os.path.join(out_dir, chapter + ".md")
    try:
        os.makedirs(out_dir, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(head + body))
        with open(path[:-3] + ".json", "w", encoding="utf-8") as f:  # the same, for a script to read
            json.dump(found, f, ensure_ascii=False, indent=1)
    except OSError as e:
        print("mutants: cannot write %s: %s" % (path, e.strerror), file=sys.stderr)
        raise SystemExit(1)
    print(summary + "; report: " + os.path.relpath(path))
    return summary
