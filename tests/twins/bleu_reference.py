"""bleu_reference: src/data/bleu.cpp's corpus BLEU against NLTK's corpus_bleu (no smoothing) or
torchtext's bleu_score, live, on the same tokens.

usage: bleu_reference.py BLEU_DUMP [--ref nltk|torchtext] [--count N] [--from-data DIR] [--quick]

BLEU_DUMP (tests/tools/bleu_dump.cpp) writes N random cases (1 to 3 references each) and its
scores: the whole corpus, each case as a corpus of one (zero counts, short and empty hypotheses,
ties of reference lengths) and the first 2, 10, 100 cases. Every score must agree to 1e-6, both
absolutely and relatively (so NLTK's 1e-77 after a zero count is not passed by a 0), and be 0
exactly where the reference's is.
Exit 0 when all agree, 1 when one differs, 77 (ctest SKIP) when the reference is not installed
(torchtext: Debian 13 dropped python3-torchtext) or --from-data's data are missing.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import types
import warnings

TOL = 1e-6


def nltk_score():
    try:
        from nltk.translate.bleu_score import corpus_bleu
    except ImportError as e:
        print("SKIP: NLTK is not installed (apt-get install python3-nltk; scripts/deps.sh all): %s" % e)
        sys.exit(77)

    def score(hyps, refs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NLTK warns on every zero count; the score is what we compare
            return float(corpus_bleu(refs, hyps))
    return score


def torchtext_score():
    try:
        from torchtext.data.metrics import bleu_score
    except Exception as e:  # noqa: BLE001 - ImportError, or Debian 12's broken extension (below)
        # Debian 12's python3-torchtext 0.14.1 fails to import its C++ extension under Python 3.11
        # ("dynamic module does not define module export function"); bleu_score itself is pure
        # Python over torch, so its module (and the ngrams_iterator it imports) is loaded from the
        # installed package's files without the package's __init__.
        bleu_score = None
        for base in sys.path:
            metrics = os.path.join(base, "torchtext", "data", "metrics.py")
            utils = os.path.join(base, "torchtext", "data", "utils.py")
            if os.path.exists(metrics) and os.path.exists(utils):
                for name in ("torchtext", "torchtext.data"):
                    sys.modules.pop(name, None)
                    pkg = types.ModuleType(name)
                    pkg.__path__ = []
                    sys.modules[name] = pkg
                mods = {}
                for name, path in (("torchtext.data.utils", utils), ("torchtext.data.metrics", metrics)):
                    spec = importlib.util.spec_from_file_location(name, path)
                    mods[name] = importlib.util.module_from_spec(spec)
                    sys.modules[name] = mods[name]
                    spec.loader.exec_module(mods[name])
                bleu_score = mods["torchtext.data.metrics"].bleu_score
                print("note: torchtext's package import failed (%s); bleu_score loaded from %s" % (e, metrics))
                break
        if bleu_score is None:
            print("SKIP: torchtext is not installed (python3-torchtext: Debian 12 has it, Debian 13 does not): %s" % e)
            sys.exit(77)

    def score(hyps, refs):
        return float(bleu_score(hyps, refs))
    return score


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--ref", choices=("nltk", "torchtext"), default="nltk")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--from-data")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.count = min(a.count, 200)
    if a.from_data and not os.path.exists(os.path.join(a.from_data, "MANIFEST.tsv")):
        print("SKIP: no %s/MANIFEST.tsv: run scripts/fetch_data.sh" % a.from_data)
        sys.exit(77)
    score = nltk_score() if a.ref == "nltk" else torchtext_score()
    cmd = [a.dump, "--count", str(a.count)] + (["--from-data", a.from_data] if a.from_data else [])
    out = json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout)
    hyps = [c["hyp"] for c in out["cases"]]
    refs = [c["refs"] for c in out["cases"]]
    ours = out["scores"][a.ref]
    checks = [("corpus of %d" % len(hyps), ours["corpus"], score(hyps, refs))]
    for k, v in sorted(ours["prefix"].items(), key=lambda kv: int(kv[0])):
        checks.append(("first %s" % k, v, score(hyps[:int(k)], refs[:int(k)])))
    for i, v in enumerate(ours["each"]):
        checks.append(("case %d alone" % i, v, score([hyps[i]], [refs[i]])))
    # 1e-6 apart, and NLTK's tiny scores (a zero count made 2.2e-308) tiny alike: zero where the
    # reference says zero, and within 1e-6 of it relatively everywhere else
    bad = [(n, x, y) for n, x, y in checks
           if not (abs(x - y) <= TOL and (x == 0) == (y == 0) and abs(x - y) <= TOL * abs(y))]
    zeros = sum(1 for _, _, y in checks if y == 0)
    tiny = sum(1 for _, _, y in checks if 0 < y < 1e-60)
    worst = max(abs(x - y) for _, x, y in checks)
    where = ", French pairs of %s" % a.from_data if a.from_data else ""
    if bad:
        print("NOT OK: %d of %d BLEU scores differ from %s's by more than %g (src/data/bleu.cpp):"
              % (len(bad), len(checks), a.ref, TOL))
        for n, x, y in bad[:10]:
            print("  %s: C++ %.17g, %s %.17g" % (n, x, a.ref, y))
        return 1
    print("OK: %d BLEU scores (%d cases%s; %d of them 0, %d below 1e-60) agree with %s's to %g, relatively too"
          " (max |diff| %.3g); corpus %.6f" % (len(checks), len(hyps), where, zeros, tiny, a.ref, TOL, worst, ours["corpus"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
