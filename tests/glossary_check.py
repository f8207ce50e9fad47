#!/usr/bin/env python3
"""The Chinese catalog uses the glossary's terms (ctest glossary).

usage: glossary_check.py GLOSSARY.md CATALOG.po
For each English word the glossary (docs/zh/术语.md) translates, in every entry of the
catalog: where the English message uses the word in prose, the translation uses the
glossary's term; and no translation leaves the English word in its prose (outside `code`,
{placeholders}, identifiers such as key_mask, --key or q.key, calls, |a - b| and quoted 'words'). Prints
NOT OK with the entry for each miss; exit 0 when there is none.
"""
import re
import sys
from script_args import args_or_usage

# English word(s) -> (a code name in the glossary's row, the index of the term in its cell)
WORDS = {
    "query": (r"`query`", 0, r"quer(?:y|ies)"),
    "key": (r"`query`", 1, r"keys?"),
    "value": (r"`query`", 2, r"values?"),
    "head": (r"`AttentionHead`", 0, r"heads?"),
    "mask": (r"`mask`", 0, r"masks?"),
}


def glossary_terms(path):
    """word -> the Chinese term the glossary gives it."""
    rows = [l for l in open(path, encoding="utf-8") if l.startswith("|")]
    terms = {}
    for word, (code, index, _) in WORDS.items():
        row = next((r for r in rows if re.search(code, r.split("|")[2])), None)
        if row is None:
            sys.exit(f"glossary_check: {path} has no row for {code}: update WORDS in {sys.argv[0]}")
        cell = re.split(r"[、/]", row.split("|")[1])
        term = cell[index].strip()
        if word == "head":  # 注意力头: the head itself is 头
            term = term.replace("注意力", "")
        terms[word] = term
    return terms


def entries(path):
    """[(msgid, msgstr)] of a .po file (continued strings joined, the header skipped)."""
    text = open(path, encoding="utf-8").read()
    out = []
    for block in text.split("\n\n"):
        if "#~" in block:
            continue
        m = re.search(r'^msgid ((?:".*"\n?)+)msgstr ((?:".*"\n?)+)', block + "\n", re.M)
        if not m:
            continue
        join = lambda s: "".join(eval(x) for x in re.findall(r'"(?:[^"\\]|\\.)*"', s))
        if join(m.group(1)):
            out.append((join(m.group(1)), join(m.group(2))))
    return out


def prose(text):
    """text without `code`, {placeholders}, 'quoted' words, -- flags and >>> lines."""
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"'[^']*'", " ", text)
    text = re.sub(r">>>.*", " ", text)
    text = re.sub(r"[\w.]+\([^()\u2e80-\uffff]*\)", " ", text)  # a call: bmm(weights, value)
    text = re.sub(r"\|[^|\u2e80-\uffff]*\|", " ", text)  # |attn_outputs - value|
    text = re.sub(r"\w+ \* [-\w.]+", " ", text)  # mask * -1e9
    return text


def uses(word_re, text):
    return re.search(r"(?<![\w.\-/])" + word_re + r"(?![\w(=/.\-])", prose(text), re.I) is not None


def main():
    glossary, catalog = args_or_usage(__doc__, 2)[:2]
    terms = glossary_terms(glossary)
    misses = 0
    for msgid, msgstr in entries(catalog):
        if not msgstr:
            continue
        for word, (_, _, word_re) in WORDS.items():
            term = terms[word]
            if uses(word_re, msgstr):
                misses += 1
                print(f"NOT OK  '{word}' left in English (the glossary says {term}):\n        {msgid!r}\n     -> {msgstr!r}")
            elif uses(word_re, msgid) and term not in msgstr:
                misses += 1
                print(f"NOT OK  '{word}' not translated as {term}:\n        {msgid!r}\n     -> {msgstr!r}")
    print(f"glossary: {len(WORDS)} words ({', '.join(f'{w} = {t}' for w, t in terms.items())}): "
          + ("every entry uses the glossary's terms" if misses == 0 else f"{misses} miss(es)"))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
