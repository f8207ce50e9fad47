#!/usr/bin/env python3
"""The mutant explorer: small wrong edits at the code a chapter runs, and which sentences noticed.

usage: mutants.py BUILD_DIR CHAPTER... [--max N] [--jobs J] [--args "ARGS"] [--out DIR]
  CHAPTER    ch06, ch06_layernorm, or several (each its own report)
  --max N    at most N mutants per chapter (default 40), taken round-robin over the sites
  --jobs J   mutants built and run at once (default 2, at most 2: the machine is shared)
  --args     the chapter's arguments for every run (default none)
  --out DIR  where the reports go (default BUILD_DIR/mutants)

For the chapter (make mutants CH=chNN runs this):
1. It runs the chapter with --code-all and reads every step's `code:` line: the chapter line
   that opened the step and each function marked TS_CODE_SITE() that ran (src/base/code_site.hpp).
   A chapter site is the chapter's lines from that step's line to the next step's; a src site is
   the body of the function holding the TS_CODE_SITE() line.
2. It parses each file with libclang (python3-clang; the build's compile command) and makes
   mutants at those sites, each an exact source range from the AST: a number x2 or x0.5, a
   call statement dropped, the operands of - / % or a comparison swapped, a loop bound or an
   index off by one, a comparison flipped (< to >=, == to !=), a flag inverted (true/false, a
   `!` dropped), + to - (+= to -=). A mutant keeps every line where it was.
3. The mutants of a file all go into one copy of it, each switched on at run time by
   TS_MUTANT=n (mutant schemata: a file compiles once, not once per mutant), compiled and linked
   like a learner's edit (tests/exercises_check.py's compile_one and link_chapter: a temporary
   folder, never the source tree; a mutant the compiler refuses there is left out and counted).
   Each runs with a timeout (a mutant that runs forever is reported, not waited for) and is
   compared with the build's run with no mutant on: exit code, verdict lines (OK / NOT OK), and,
   in each step whose numbers changed, the sentences printed unchanged (the likely false ones:
   the same words while what they describe changed) and the OKs kept over other numbers.
   Lines that differ between two unmutated runs (timings) are left out. Each mutant's own patch
   is in the report, ready to become a learner edit (tests/edits/ format).
Writes BUILD_DIR/mutants/<chapter>.md (and .json) and prints one summary line per chapter.
Exit 0 when every chapter was explored (what the mutants found is in the reports, not the exit
code); 2 on bad arguments; 1 when the unmutated chapter fails or cannot be parsed.
"""
import concurrent.futures
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import exercises_check  # noqa: E402  (build_variant: the learner-edit build, shared)
from mutants_report import short, skeleton, write_report  # noqa: E402

try:
    import clang.cindex as ci
except ImportError:
    ci = None

FUNCS = {"FUNCTION_DECL", "CXX_METHOD", "CONSTRUCTOR", "DESTRUCTOR", "FUNCTION_TEMPLATE",
         "CONVERSION_FUNCTION", "LAMBDA_EXPR"}
FLIP = {"<": ">=", ">": "<=", "<=": ">", ">=": "<", "==": "!=", "!=": "=="}
SWAP = {"-", "/", "%", "<", ">", "<=", ">="}
KINDS = ["drop-call", "flip", "const", "swap", "off-by-one", "flag", "plus-minus"]


def fail(msg, code=2):
    print("mutants: " + msg, file=sys.stderr)
    sys.exit(code)


# ------------------------------------------------------------------ the sites a chapter prints
def run_chapter(exe, args, timeout, mutant=None, code_all=True):
    """(exit code or 'timeout', stdout + stderr lines, seconds); mutant: the number TS_MUTANT switches on"""
    env = exercises_check.run_env()
    if mutant is not None:
        env["TS_MUTANT"] = str(mutant)
    t = time.time()
    try:
        r = subprocess.run([exe] + (["--code-all"] if code_all else []) + args, capture_output=True, text=True, env=env, timeout=timeout,
                           errors="replace")
        return r.returncode, (r.stdout + r.stderr).splitlines(), time.time() - t
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out.splitlines(), time.time() - t


CODE_ENTRY = re.compile(r"((?:src|chapters)/[\w/.-]+\.(?:cpp|hpp|h)):(\d+)(?: ([^·]+))?")


def code_sites(lines):
    """[(file, line, name)] from the `code:` lines, first-seen order, each once"""
    seen = []
    for line in lines:
        s = line.strip()
        if not s.startswith("code: "):
            continue
        for m in CODE_ENTRY.finditer(s[6:]):
            e = (m.group(1), int(m.group(2)), (m.group(3) or "").strip())
            if e not in seen:
                seen.append(e)
    return seen


# ------------------------------------------------------------------ mutants from the AST
def parse_args_for(build, rel):
    """libclang arguments for ROOT/rel: the build's compile command less the output, the file and
    GCC's precompiled header (libclang reads the headers themselves)."""
    cc = json.load(open(os.path.join(build, "compile_commands.json")))
    path = os.path.join(ROOT, rel)
    entry = next((e for e in cc if os.path.normpath(e["file"]) == path), None)
    if entry is None:
        return None
    out, skip = [], False
    for a in shlex.split(entry["command"])[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-include"):
            skip = True
        elif a not in ("-c", "-Winvalid-pch") and os.path.normpath(a) != path and not a.startswith("-fno-fat"):
            out.append(a)
    return out


def unwrap(c):
    while c.kind.name == "UNEXPOSED_EXPR" and len(list(c.get_children())) == 1:
        c = next(c.get_children())
    return c


class Source:
    """One file's bytes and AST; mutants are byte ranges of it."""

    def __init__(self, rel, args, text=None, root=ROOT):
        self.rel = rel
        self.path = os.path.join(root, rel)
        self.data = (text if text is not None else open(self.path, encoding="utf-8").read()).encode("utf-8")
        unsaved = [(self.path, self.data.decode("utf-8"))] if text is not None else None
        self.tu = ci.Index.create().parse(self.path, args=args, unsaved_files=unsaved,
                                          options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
        errors = [d for d in self.tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        if errors:
            raise RuntimeError("libclang cannot parse %s: %s" % (rel, errors[0]))
        self.macros = [(c.extent.start.offset, c.extent.end.offset) for c in self.tu.cursor.get_children()
                       if c.kind.name == "MACRO_INSTANTIATION" and self.mine(c)]

    def mine(self, c):
        f = c.extent.start.file
        return f is not None and os.path.normpath(f.name) == self.path

    def text(self, c):
        return self.data[c.extent.start.offset:c.extent.end.offset].decode("utf-8")

    def in_macro(self, c):
        s, e = c.extent.start.offset, c.extent.end.offset
        return any(ms <= s and e <= me for ms, me in self.macros)

    def line_of(self, offset):
        return self.data.count(b"\n", 0, offset) + 1

    def function_body(self, line):
        """(start, end) offsets of the body of the innermost function holding `line`"""
        best = None

        def walk(c):
            nonlocal best
            for k in c.get_children():
                if not self.mine(k) or not (k.extent.start.line <= line <= k.extent.end.line):
                    continue
                if k.kind.name in FUNCS:
                    body = [b for b in k.get_children() if b.kind.name == "COMPOUND_STMT"]
                    if body:
                        best = (body[-1].extent.start.offset, body[-1].extent.end.offset)
                walk(k)
        walk(self.tu.cursor)
        return best

    def line_range(self, first, last):
        lines = self.data.split(b"\n")
        start = sum(len(x) + 1 for x in lines[:first - 1])
        return start, start + sum(len(x) + 1 for x in lines[first - 1:last])

    def between(self, a, b):
        """the operator text between two operand cursors"""
        return self.data[a.extent.end.offset:b.extent.start.offset].decode("utf-8").strip()

    def mutants(self, start, end):
        """[(kind, start, end, replacement, what)] inside [start, end)"""
        found = []

        def add(kind, s, e, new, what):
            old = self.data[s:e].decode("utf-8")
            new += "\n" * (old.count("\n") - new.count("\n"))  # every line stays where it was
            found.append((kind, s, e, new, what))

        def operands(c):
            """(lhs, op, rhs) of a binary operator, built-in or overloaded, else None"""
            kids = list(c.get_children())
            if c.kind.name in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and len(kids) == 2:
                return kids[0], self.between(kids[0], kids[1]), kids[1]
            if c.kind.name == "CALL_EXPR" and c.spelling.startswith("operator") and len(kids) == 3:
                op = c.spelling[len("operator"):]
                if self.text(unwrap(kids[1])).strip() == op:
                    return kids[0], op, kids[2]
            return None

        def paren(c):
            t = self.text(c)
            if unwrap(c).kind.name == "PAREN_EXPR":
                return t
            return t if re.fullmatch(r"[\w.:>\-()\[\] ]*", t) and not re.search(r"[-+*/<>]\s", t) else "(" + t + ")"

        def visit(c, parent):
            for k in c.get_children():
                if not self.mine(k) or k.extent.end.offset <= start or k.extent.start.offset >= end:
                    continue
                if self.in_macro(k) or guard(k):
                    continue
                if start <= k.extent.start.offset and k.extent.end.offset <= end:
                    one(k, parent)
                visit(k, k)

        def guard(k):
            """an `if (bad input) throw/fail(...)`: its mutants only trade one refusal for another"""
            kids = list(k.get_children())
            if k.kind.name != "IF_STMT" or len(kids) != 2:
                return False
            body = unwrap(kids[1])
            if body.kind.name == "COMPOUND_STMT" and len(list(body.get_children())) == 1:
                body = unwrap(next(body.get_children()))
            return body.kind.name == "CXX_THROW_EXPR" or (body.kind.name == "CALL_EXPR" and
                                                           re.search(r"fail|throw|error|refuse", body.spelling or "", re.I))

        def statement(k, parent):
            """k is a statement of its own: in a block, or the body of an if / for / while"""
            if parent is None:
                return False
            if parent.kind.name == "COMPOUND_STMT":
                return True
            if parent.kind.name in ("IF_STMT", "FOR_STMT", "WHILE_STMT", "CXX_FOR_RANGE_STMT"):
                kids = list(parent.get_children())
                if k not in kids:
                    return False
                return kids.index(k) >= 1 if parent.kind.name == "IF_STMT" else k == kids[-1]
            return False

        def ops_of_assign(c):
            o = operands(c)
            return o is not None and o[1] in ("=", "+=", "-=", "*=", "/=")

        def bare(t):
            return re.sub(r"^const |[&\s]+$", "", t.get_canonical().spelling)

        def one(k, parent):
            name = k.kind.name
            s, e = k.extent.start.offset, k.extent.end.offset
            text = self.text(k)
            if name in ("INTEGER_LITERAL", "FLOATING_LITERAL") and (s, e) not in indices:
                m = re.fullmatch(r"([0-9.]+(?:[eE][-+]?\d+)?)([fFuUlL]*)", text)
                if m and name == "INTEGER_LITERAL" and "." not in m.group(1):
                    v = int(m.group(1))
                    for new in (v * 2, v // 2):
                        if v != 0 and new != v:
                            add("const", s, e, str(new) + m.group(2), "%s -> %d" % (text, new))
                elif m:
                    v = float(m.group(1))
                    for new in (v * 2, v / 2):
                        if v != 0:
                            lit = repr(new)
                            add("const", s, e, lit + m.group(2), "%s -> %s%s" % (text, lit, m.group(2)))
            if name == "CXX_BOOL_LITERAL_EXPR" and text in ("true", "false"):
                flipped = "false" if text == "true" else "true"
                add("flag", s, e, flipped, text + " -> " + flipped)
            if name == "UNARY_OPERATOR" and text.startswith("!") and not text.startswith("!="):
                inner = list(k.get_children())
                if inner:
                    add("flag", s, e, "(" + self.text(inner[0]) + ")", "%s -> %s (the ! dropped)" % (short(text), short(self.text(inner[0]))))
            if name in ("IF_STMT", "WHILE_STMT"):
                cond = list(k.get_children())[0]
                if unwrap(cond).kind.name in ("DECL_REF_EXPR", "MEMBER_REF_EXPR", "CALL_EXPR"):
                    t = self.text(cond)
                    add("flag", cond.extent.start.offset, cond.extent.end.offset, "!(%s)" % t, "if (%s) -> if (!%s)" % (short(t), short(t)))
            if statement(k, parent):
                inner = unwrap(k)
                callee = inner.referenced if inner.kind.name == "CALL_EXPR" else None
                if inner.kind.name == "CALL_EXPR" and callee is not None and callee.kind.name != "CONSTRUCTOR" and not (
                        callee.semantic_parent is not None and callee.semantic_parent.spelling == "Chapter"):
                    add("drop-call", s, e, "(void)0", "`%s;` dropped" % short(text))
                elif inner.kind.name in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR") and ops_of_assign(inner):
                    add("drop-call", s, e, "(void)0", "`%s;` dropped" % short(text))
            if name == "CALL_EXPR" and k.spelling and (not k.spelling.startswith("operator") or k.spelling == "operator()"):
                args = list(k.get_arguments())[1 if k.spelling == "operator()" else 0:]
                callee = k.referenced
                if (args and callee is not None and callee.kind.name not in ("CONSTRUCTOR", "CONVERSION_FUNCTION")
                        and k.type.spelling and bare(args[0].type) == bare(k.type) and self.text(args[0]).strip()):
                    t = self.text(args[0])
                    add("drop-call", s, e, paren(args[0]), "`%s` -> `%s` (the call skipped)" % (short(text), short(t)))
            ops = operands(k)
            if ops:
                lhs, op, rhs = ops
                plain = lhs.type.spelling + " " + rhs.type.spelling
                if op in SWAP:
                    add("swap", s, e, "%s %s %s" % (paren(rhs), op, paren(lhs)),
                        "%s -> %s %s %s" % (short(text), short(self.text(rhs)), op, short(self.text(lhs))))
                if op in FLIP:
                    add("flip", s, e, "%s %s %s" % (self.text(lhs), FLIP[op], self.text(rhs)),
                        "%s -> %s %s %s" % (short(text), short(self.text(lhs)), FLIP[op], short(self.text(rhs))))
                if op in ("+", "+=") and not re.search(r"string|char", plain):
                    add("plus-minus", s, e, "%s %s %s" % (self.text(lhs), op.replace("+", "-"), self.text(rhs)),
                        "%s -> %s" % (short(text), op.replace("+", "-")))
                if op in ("<", "<=", ">", ">=", "!=") and parent is not None and parent.kind.name == "FOR_STMT":
                    b = rhs.extent
                    add("off-by-one", b.start.offset, b.end.offset, paren(rhs) + " - 1",
                        "loop bound %s -> %s - 1" % (short(self.text(rhs)), short(self.text(rhs))))
            index = subscript(k)
            if index is not None:
                t = self.text(index)
                indices.add((index.extent.start.offset, index.extent.end.offset))
                indices.add((unwrap(index).extent.start.offset, unwrap(index).extent.end.offset))
                lit = re.fullmatch(r"\d+", t)
                new = (str(int(t) - 1) if int(t) > 0 else "1") if lit else paren(index) + " + 1"
                add("off-by-one", index.extent.start.offset, index.extent.end.offset, new, "index [%s] -> [%s]" % (short(t), short(new)))

        def subscript(k):
            kids = list(k.get_children())
            if k.kind.name == "ARRAY_SUBSCRIPT_EXPR" and len(kids) == 2:
                return kids[1]
            if k.kind.name == "CALL_EXPR" and k.spelling == "operator[]" and len(kids) == 3:
                return kids[2]
            return None

        indices = set()
        visit(self.tu.cursor, None)
        # unwrapped implicit nodes repeat their child's range: the same edit once
        unique, seen = [], set()
        for m in found:
            if (m[1], m[2], m[3]) not in seen and self.data[m[1]:m[2]].decode("utf-8") != m[3]:
                seen.add((m[1], m[2], m[3]))
                unique.append(m)
        return unique


class Mutant:
    def __init__(self, n, src, site, kind, s, e, new, what):
        self.n, self.rel, self.site, self.kind, self.what = n, src.rel, site, kind, what
        self.src, self.start, self.end, self.new = src, s, e, new.rstrip("\n")
        self.line, self.last = src.line_of(s), src.line_of(e)
        old = src.data.decode("utf-8")
        self.text = (src.data[:s] + new.encode("utf-8") + src.data[e:]).decode("utf-8")
        self.patch = "".join(difflib.unified_diff(old.splitlines(keepends=True), self.text.splitlines(keepends=True),
                                                  "a/" + src.rel, "b/" + src.rel, n=3))

    def name(self):
        return "%s:%d %s: %s" % (self.rel, self.line, self.kind, self.what)


def chapter_sites(sites, chapter_rel):
    """the chapter's own step lines, sorted: each step's site runs to the next one's line"""
    return sorted({line for f, line, _ in sites if f == chapter_rel})


def make_mutants(build, chapter, sites, limit):
    """(mutants round-robin over sites and kinds, notes on sites left out)"""
    chapter_rel = "chapters/%s.cpp" % chapter
    steps = chapter_sites(sites, chapter_rel)
    by_file, notes = {}, []
    for f, line, name in sites:
        if not (f == chapter_rel or (f.startswith("src/") and f.endswith(".cpp"))):
            notes.append("%s:%d %s: a header (a learner edit rebuilds the chapter and src/*.cpp only)" % (f, line, name))
            continue
        by_file.setdefault(f, []).append((line, name))
    per_site = []
    for rel, entries in by_file.items():
        args = parse_args_for(build, rel)
        if args is None:
            notes.append("%s: no compile command in %s" % (rel, build))
            continue
        src = Source(rel, args)
        for line, name in entries:
            if rel == chapter_rel:
                nxt = [x for x in steps if x > line]
                body = src.function_body(line)
                s, e = src.line_range(line, (nxt[0] - 1) if nxt else src.line_of(body[1]) if body else line)
                if body:
                    e = min(e, body[1])
                label = "%s:%d (the step)" % (rel, line)
            else:
                body = src.function_body(line)
                if body is None:
                    notes.append("%s:%d %s: no function holds this line" % (rel, line, name))
                    continue
                s, e = body
                label = "%s:%d %s" % (rel, line, name)
            per_site.append((src, label, src.mutants(s, e)))
    # round-robin: each site in turn gives its next mutant, cycling through the kinds
    queues = []
    for src, label, found in per_site:
        by_kind = {k: [m for m in found if m[0] == k] for k in KINDS}
        order = []
        while any(by_kind.values()):
            for k in KINDS:
                if by_kind[k]:
                    order.append(by_kind[k].pop(0))
        queues.append((src, label, order))
    chosen, seen = [], set()
    while len(chosen) < limit and any(q[2] for q in queues):
        for src, label, order in queues:
            while order and len(chosen) < limit:
                m = order.pop(0)
                key = (src.rel, m[1], m[2], m[3])
                if key in seen or any(c.rel == src.rel and m[1] < c.end and c.start < m[2] for c in chosen):
                    continue
                seen.add(key)
                chosen.append(Mutant(len(chosen) + 1, src, label, *m))
                break
    total = sum(len(f) for _, _, f in per_site)
    return chosen, notes, total


# ------------------------------------------------------------------ one build for all mutants
# Mutant schemata: every mutant of a file goes into one copy of it, switched on at run time by
# TS_MUTANT=n (`(ts_mutant_() == n ? new : old)`), so a chapter compiles each file once instead of
# once per mutant; the copy keeps every line where it was (the switch opens line 1).
SWITCH = ('extern "C" char* getenv(const char*) noexcept; static int ts_mutant_() { static const int m = [] { '
          'const char* e = getenv("TS_MUTANT"); int v = 0; while (e && *e >= \'0\' && *e <= \'9\') '
          'v = v * 10 + (*e++ - \'0\'); return v; }(); return m; } ')


def schema(src, muts):
    data = src.data
    for m in sorted(muts, key=lambda m: m.start, reverse=True):
        old = data[m.start:m.end].decode("utf-8")
        if m.new == "(void)0":
            new = "(::ts_mutant_() == %d ? (void)0 : (void)(%s))" % (m.n, old)
        elif m.kind == "flag" and m.new.startswith(("(", "!(")):  # a pointer as a flag: both sides bool
            new = "(::ts_mutant_() == %d ? %s : !!(%s))" % (m.n, m.new if m.new[0] == "!" else "!!" + m.new, old)
        else:
            new = "(::ts_mutant_() == %d ? %s : %s)" % (m.n, m.new, old)
        data = data[:m.start] + new.encode("utf-8") + data[m.end:]
    text = data.decode("utf-8")
    # the switch opens the first line that is blank or a // comment (line 1 in every course file)
    at = re.search(r"^(?=//|\n)", text, re.M)
    return text[:at.start()] + SWITCH + text[at.start():] if at else SWITCH + text


def build_schema(build, chapter, mutants, tmp, jobs):
    """(the chapter linked with every file's schema, {mutant number: why it was left out})"""
    cc = json.load(open(os.path.join(build, "compile_commands.json")))
    by_file, dropped = {}, {}
    for m in mutants:
        by_file.setdefault(m.rel, []).append(m)

    def compile_file(i, rel):
        path, obj = os.path.join(tmp, rel), os.path.join(tmp, "schema%d.o" % i)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        for _ in range(4):  # each try leaves out the mutants on the lines the compiler names
            live = [m for m in by_file[rel] if m.n not in dropped]
            with open(path, "w", encoding="utf-8") as f:
                f.write(schema(live[0].src, live) if live else live_src(rel))
            try:
                exercises_check.compile_one(build, cc, rel, path, obj)
                return obj
            except RuntimeError as e:
                err = getattr(e, "stderr", str(e))
                bad = {int(x) for x in re.findall(re.escape(path) + r":(\d+):", err)}
                hit = [m for m in live if any(m.line <= b <= m.last for b in bad)]
                first = next((x for x in err.splitlines() if ": error: " in x), "")
                for m in hit or live:
                    dropped[m.n] = short(first.split(": error: ")[-1], 160) or "does not compile"
        return None

    def live_src(rel):
        return open(os.path.join(ROOT, rel), encoding="utf-8").read()

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        objs = list(pool.map(lambda a: compile_file(*a), enumerate(sorted(by_file))))
    chapter_rel = "chapters/%s.cpp" % chapter
    if None in objs:
        for m in mutants:
            dropped.setdefault(m.n, "another file of the build does not compile")
        return None, dropped
    try:
        return exercises_check.link_chapter(build, chapter, objs, chapter_rel in by_file, tmp), dropped
    except RuntimeError as e:
        return None, {m.n: short(str(e).splitlines()[-1], 160) for m in mutants}


# ------------------------------------------------------------------ one chapter
def explore(build, chapter, limit, jobs, args, out_dir):
    exe = os.path.join(build, chapter)
    code1, base, secs = run_chapter(exe, args, 900)
    if code1 == "timeout":
        fail("%s does not finish in 900 s unmutated" % chapter, 1)
    if code1 not in (0, 3):  # 3: a NOT OK the unmutated chapter prints is explored like any other run
        fail("%s exits %s unmutated%s: %s" % (chapter, code1, " with --args " + " ".join(args) if args else "",
                                              base[-1] if base else "no output"), 2 if code1 == 2 else 1)
    _, base2, secs2 = run_chapter(exe, args, 900)
    volatile = {skeleton(a) for a, b in zip(base, base2) if a != b}
    volatile |= {skeleton(x) for x in set(base) ^ set(base2)} if len(base) != len(base2) else set()
    sites = code_sites(base)
    if not sites:
        fail("%s printed no code: line (is it built from this tree?)" % chapter, 1)
    print("%s: %d sites ran; their files parsed with libclang (seconds each)" % (chapter, len(sites)), flush=True)
    try:
        mutants, notes, total = make_mutants(build, chapter, sites, limit)
    except RuntimeError as e:
        fail(str(e), 1)
    timeout = max(30.0, 5 * max(secs, secs2))
    with tempfile.TemporaryDirectory(prefix="ts-mutants-") as tmp:
        exe_m, dropped = build_schema(build, chapter, mutants, tmp, jobs)
        print("%s: one build holds %d mutants (%d do not compile); running each" % (chapter, len(mutants) - len(dropped), len(dropped)), flush=True)
        code0, base0, _ = run_chapter(exe_m, args, 900, 0) if exe_m else (None, [], 0)
        if exe_m and (code0, base0) != (code1, base):
            notes.append("the mutants' build with no mutant switched on prints differently from %s: compared with it" % chapter)
            base, code1 = base0, code0

        def one(m):
            if m.n in dropped:
                return m, "compile", None, dropped[m.n]
            code, lines, _ = run_chapter(exe_m, args, timeout, m.n)
            return m, code, lines, None

        results = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for m, code, lines, err in pool.map(one, mutants):
                results.append((m, code, lines, err))
                print("  mutant %d/%d %s: %s" % (m.n, len(mutants), m.name(), "does not compile" if code == "compile" else
                                                "timeout" if code == "timeout" else "exit %s" % code), flush=True)
    return write_report(out_dir, chapter, args, code1, base, sites, notes, total, mutants, results, volatile, timeout)

def resolve(name):
    names = sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "chapters")) if f.endswith(".cpp"))
    hit = [n for n in names if n == name or n.startswith(name + "_")]
    if len(hit) != 1:
        fail("no chapter %r: name one of %s (ch06 or ch06_layernorm)" % (name, ", ".join(n[:4] for n in names)))
    return hit[0]


def main(argv):
    if argv[:1] == ["--resolve"]:  # the Makefile: the chapters' target names, or one line and exit 2
        if len(argv) < 2:
            fail("name a chapter: make mutants CH=ch06")
        print(" ".join(resolve(c) for c in " ".join(argv[1:]).split()))
        return 0
    opts = {"--max": "40", "--jobs": "2", "--args": "", "--out": ""}
    pos, i = [], 0
    while i < len(argv):
        if argv[i] in opts:
            if i + 1 >= len(argv):
                fail("%s needs a value" % argv[i])
            opts[argv[i]] = argv[i + 1]
            i += 2
        elif argv[i].startswith("-"):
            fail("unknown option %s (see the usage: scripts/mutants.py --help)" % argv[i]) if argv[i] not in ("-h", "--help") else (print(__doc__), sys.exit(0))
        else:
            pos.append(argv[i])
            i += 1
    if len(pos) < 2:
        fail("usage: mutants.py BUILD_DIR CHAPTER... [--max N] [--jobs J] [--args ARGS] [--out DIR]")
    if not (opts["--max"].isdigit() and int(opts["--max"]) > 0):
        fail("--max wants a positive number of mutants, not %r" % opts["--max"])
    if opts["--jobs"] not in ("1", "2"):
        fail("--jobs wants 1 or 2 (the machine is shared), not %r" % opts["--jobs"])
    if ci is None:
        fail("libclang's Python bindings are missing: run scripts/deps.sh all (it installs python3-clang)")
    build = os.path.abspath(pos[0])
    if not os.path.exists(os.path.join(build, "compile_commands.json")):
        fail("%s has no compile_commands.json: configure the build first (make configure)" % build)
    chapters = [resolve(c) for c in " ".join(pos[1:]).split()]
    for c in chapters:
        if not os.access(os.path.join(build, c), os.X_OK):
            fail("%s is not built in %s: cmake --build %s --target %s" % (c, build, build, c))
    os.nice(10)
    out = os.path.abspath(opts["--out"] or os.path.join(build, "mutants"))
    for c in chapters:
        explore(build, c, int(opts["--max"]), int(opts["--jobs"]), shlex.split(opts["--args"]), out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
