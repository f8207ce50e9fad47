#!/usr/bin/python3
"""Every function marked TS_NO_FP_CONTRACT (src/exact/fp_contract.hpp) opens its body with
TS_NO_FP_CONTRACT_BODY, and every TS_NO_FP_CONTRACT_BODY opens a marked function's body: GCC
reads the first marker, clang the second, so one without the other turns contraction off under
one compiler only, and the last digits of what the function computes differ between them.

usage: fp_contract_check.py SOURCE_DIR   (checks SOURCE_DIR/src and SOURCE_DIR/chapters)
"""
import pathlib
import re
import sys

HEAD = re.compile(r"^TS_NO_FP_CONTRACT\s", re.M)
BODY = "TS_NO_FP_CONTRACT_BODY"


def problems(path, text):
    found = []
    starts = set()
    for m in HEAD.finditer(text):
        brace = text.find("{", m.end())
        line = text.count("\n", 0, m.start()) + 1
        if brace < 0:
            found.append(f"{path}:{line}: TS_NO_FP_CONTRACT without a function body")
            continue
        after = text[brace + 1:].lstrip()
        if not after.startswith(BODY):
            found.append(f"{path}:{line}: a TS_NO_FP_CONTRACT function whose body does not open with {BODY} "
                         "(clang would contract it)")
        else:
            starts.add(len(text) - len(after))
    for m in re.finditer(r"\b" + BODY + r"\b", text):
        if m.start() not in starts and not text.startswith("#define", text.rfind("\n", 0, m.start()) + 1):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{path}:{line}: {BODY} outside the opening of a TS_NO_FP_CONTRACT function "
                         "(GCC would contract it)")
    if (starts or HEAD.search(text)) and '#include "exact/fp_contract.hpp"' not in text:
        found.append(f"{path}: uses TS_NO_FP_CONTRACT without #include \"exact/fp_contract.hpp\"")
    return found


def main():
    if len(sys.argv) != 2:
        print("usage: fp_contract_check.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    if not (root / "src").is_dir():
        print(f"fp_contract_check.py: {root} has no src/: give the repository's root", file=sys.stderr)
        return 2
    found, marked = [], 0
    for path in sorted(list((root / "src").rglob("*.cpp")) + list((root / "chapters").glob("*.cpp"))):
        text = path.read_text(encoding="utf-8")
        marked += len(HEAD.findall(text))
        found += problems(path.relative_to(root), text)
    for f in found:
        print(f)
    if marked == 0:
        print("no function is marked TS_NO_FP_CONTRACT: the check found nothing to check")
        return 1
    print(f"{marked} functions marked TS_NO_FP_CONTRACT, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
