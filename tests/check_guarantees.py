#!/usr/bin/env python3
"""docs/guarantees.md names the tests that check its promises: every name it cites is one.

A citation is `group` or `group: case, case` (several joined by ';', each with an optional
note in parentheses), where it is found:
- the second column of the table under "The tests behind each row";
- the last column of a table whose heading says "Tests (`group` unless named)": a bare
  case there is one of that group;
- a parenthesised text, anywhere, that opens with a name and ':' ("(test_pch: a, b)",
  "(test: test_memmodel)") or with a test's name (a CTest test, test_..., stress_...,
  fuzz_...);
- a word test_..., stress_... or fuzz_... anywhere else is a group (unless cited as a case).
A group is a CTest test of the build, a test source under tests/ (tests/NAME.c, .cpp, .sh,
.py; tests/fuzz/NAME.c) or a path of the tree; `test` stands for "the test", as in
"(test: test_memmodel)". A case is a word of the group's source (its test function): of
the sources the CTest test's command runs, else of tests/GROUP.*. Words of prose in a part
("fuzz target", "every test") are not names.

Usage: check_guarantees.py SOURCE_DIR BUILD_DIR [CTEST]   checks, naming every fault
       check_guarantees.py --self-test SOURCE_DIR BUILD_DIR [CTEST]
                                       checks that made-up citations are caught
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
PATH = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$")
PROSE = re.compile(r"^(fuzz targets?|fuzzers?|the|every|each|all|its|on|in|under)\b\s*")


def drop_notes(text):
    """The text without its parenthesised notes (nested ones too)."""
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def split_top(text, sep):
    """Splits at `sep` outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def words(text):
    """The names of a list ("a, b and c"), prose words dropped; paths kept."""
    out = []
    text = re.sub(r"\b(every|each|all) tests?\b", "", text)
    for w in re.split(r",|\band\b", text):
        w = w.strip().strip("`").strip()
        while True:
            m = PROSE.match(w)
            if not m or not m.group(0):
                break
            w = w[m.end():]
        if NAME.match(w) or PATH.match(w):
            out.append(w)
    return out


def citations(text, default_group=None):
    """(group, case or None) pairs of a citation text."""
    out = []
    for part in split_top(text, ";"):
        part = drop_notes(part).strip()
        if not part:
            continue
        if ":" in part:
            left, right = part.split(":", 1)
            groups = words(left)
            cases = [w for w in words(right) if NAME.match(w)]
            if groups == ["test"]:  # "(test: test_memmodel)": the test is named after it
                out += [(c, None) for c in cases]
                continue
            for g in groups:
                out.append((g, None))
                out += [(g, c) for c in cases]
        else:
            for w in words(part):
                out.append((default_group, w) if default_group else (w, None))
    return out


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


TESTLIKE = re.compile(r"\b(?:test|stress|fuzz)_[a-z0-9_]+\b")


def paren_citations(text, known):
    """(offset, group, case) for the parenthesised citations of a paragraph."""
    out = []
    for m in re.finditer(r"\(([A-Za-z][A-Za-z0-9_]*)(:|[;,)]|\s)", text):
        name, after = m.group(1), m.group(2)
        if after != ":" and not TESTLIKE.fullmatch(name) and name not in known:
            continue
        start, depth = m.start(), 0
        for i in range(start, len(text)):  # the parenthesised text, nested notes in it
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
        inner = text[start + 1 : i] if depth == 0 else text[start + 1 :]
        out += [(start, g, c) for g, c in citations(inner)]
    return out


def doc_citations(doc, known=()):
    """(line number, group, case) for every citation of the document; `known`: names of
    tests, which open a citation in parentheses as test_..., stress_... and fuzz_... do."""
    out, para, para_start = [], [], 0
    section, default_group, in_fence = "", None, False

    def flush():
        text = "\n".join(para)
        for off, g, c in paren_citations(text, known):
            out.append((para_start + text.count("\n", 0, off), g, c))
        del para[:]

    for n, line in enumerate(doc.splitlines(), 1):
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence:
            continue
        if line.startswith("#") or line.startswith("|") or not line.strip():
            flush()
        if line.startswith("#"):
            section, default_group = line, None
            continue
        if line.startswith("|"):
            row = cells(line)
            m = re.match(r"Tests \(`([A-Za-z0-9_]+)` unless named\)", row[-1])
            if m:
                default_group = m.group(1)
                continue
            if set(row[-1]) <= set("-: "):
                continue
            if "The tests behind each row" in section and len(row) >= 2 and row[0] != "Row":
                out += [(n, g, c) for g, c in citations(row[1])]
                continue
            if default_group:
                out += [(n, g, c) for g, c in citations(row[-1], default_group)]
                continue
            for off, g, c in paren_citations(line, known):
                out.append((n, g, c))
            continue
        if line.strip():
            if not para:
                para_start = n
            para.append(line)
    flush()
    cited = {c for _, _, c in out if c} | {g for _, g, _ in out}
    for n, line in enumerate(doc.splitlines(), 1):  # a test's name in prose, cited or not
        out += [(n, w, None) for w in TESTLIKE.findall(line) if w not in cited]
    return out


def ctest_tests(build, ctest):
    """CTest's tests of the build: {name: [files its command names]}. ctest runs on a copy of
    the build's CTestTestfile.cmake files: in the build it would rewrite the log of a suite
    that runs this check, and its skipped groups' reasons would be lost."""
    with tempfile.TemporaryDirectory() as copy:
        for top, _, files in os.walk(build):
            if "CTestTestfile.cmake" in files:
                to = os.path.join(copy, os.path.relpath(top, build))
                os.makedirs(to, exist_ok=True)
                shutil.copy(os.path.join(top, "CTestTestfile.cmake"), to)
        r = subprocess.run([ctest, "--show-only=json-v1"], cwd=copy, capture_output=True,
                           text=True)
    if r.returncode != 0:
        sys.exit("check_guarantees: %s --show-only=json-v1 in %s failed: %s" % (ctest, build, r.stderr))
    return {t["name"]: t.get("command", []) for t in json.loads(r.stdout).get("tests", [])}


def sources_of(group, tests, src):
    """The source files of a group: those its CTest command runs, else tests/GROUP.*."""
    found = []
    stems = [group]
    for arg in tests.get(group, []):
        base = os.path.basename(arg)
        if (os.path.isfile(arg) and arg.startswith(os.path.join(src, "tests") + os.sep)
                and arg.endswith((".sh", ".py")) and base != "fresh.sh"):
            found.append(arg)  # a script the test runs (fresh.sh only wraps)
        if base != "fresh.sh":
            stems.append(os.path.splitext(base)[0])
    for stem in stems:
        for d in ("tests", "tests/fuzz"):
            for ext in (".c", ".cpp", ".sh", ".py"):
                p = os.path.join(src, d, stem + ext)
                if os.path.isfile(p) and p not in found:
                    found.append(p)
    return found


def check(doc, src, tests):
    """Faults found, one line each."""
    faults, seen = [], {}
    said = set()
    for n, group, case in doc_citations(doc, tests):
        if PATH.match(group):
            if not os.path.exists(os.path.join(src, group)):
                faults.append("line %d: %s: no such file in the tree" % (n, group))
            continue
        files = sources_of(group, tests, src)
        if group not in tests and not files:
            faults.append("line %d: %s: neither a CTest test nor a test source" % (n, group))
            continue
        if case is None:
            continue
        if group not in seen:
            seen[group] = "\n".join(open(f, encoding="utf-8", errors="replace").read() for f in files)
        if not re.search(r"\b%s\b" % re.escape(case), seen[group]):
            faults.append("line %d: %s: %s is no test of it (not in %s)"
                          % (n, group, case, ", ".join(os.path.relpath(f, src) for f in files) or "any source"))
    return [f for f in faults if not (f in said or said.add(f))]  # each once


def self_test(src, tests):
    """Each made-up fault is caught, and a sound citation of each form passes."""
    sound = ("# Doc\n\nA promise. (test: test_checkdriver)\n"
             "Another. (test_checkdriver: a_fault_ends_cuda_for_the_process; fuzz target fuzz_bundle)\n\n"
             "| Guarantee | How | Tests (`test_checkdriver` unless named) |\n|---|---|---|\n"
             "| x | y | a_reset_context_is_dead; test_memmodel: sequences_keep_memory_apart |\n\n"
             "## The tests behind each row\n\n| Row | Tests |\n|---|---|\n"
             "| r | test_memmodel: sequences_keep_memory_apart (a note); scripts/gpu-test |\n")
    faulty = {
        "a group that is no test": "A promise. (test: test_no_such_group)\n",
        "a case that is no test of its group": "A promise. (test_checkdriver: no_such_case_here)\n",
        "a bare case of a table's group": "| Guarantee | How | Tests (`test_checkdriver` unless named) |\n"
                                          "|---|---|---|\n| x | y | no_such_case_here |\n",
        "a row of the tests' table": "## The tests behind each row\n\n| Row | Tests |\n|---|---|\n"
                                     "| r | test_memmodel: sequences_keep_memory_apart, gone_case |\n",
        "a path": "## The tests behind each row\n\n| Row | Tests |\n|---|---|\n| r | scripts/no-such-script |\n",
        "a fuzz target": "Parsed. (fuzz target fuzz_no_such_target)\n",
        "a test named in prose": "Threads: test_no_such_threads (16 threads).\n",
        "a citation over two lines": "A promise (test_checkdriver: a_reset_context_is_dead,\n"
                                     "no_such_case_here).\n",
    }
    bad = 0
    got = check(sound, src, tests)
    if got:
        print("self-test: sound citations were refused:\n  " + "\n  ".join(got))
        bad = 1
    for what, text in faulty.items():
        if not check(text, src, tests):
            print("self-test: %s was not caught" % what)
            bad = 1
    if not bad:
        print("self-test: %d made-up faults caught, sound citations passed" % len(faulty))
    return bad


def main(argv):
    st = argv[1:2] == ["--self-test"]
    args = argv[2:] if st else argv[1:]
    if len(args) not in (2, 3):
        print(__doc__.split("Usage: ")[1], file=sys.stderr)
        return 2
    src, build = os.path.abspath(args[0]), os.path.abspath(args[1])
    tests = ctest_tests(build, args[2] if len(args) == 3 else "ctest")
    if st:
        return self_test(src, tests)
    doc = open(os.path.join(src, "docs", "guarantees.md"), encoding="utf-8").read()
    faults = check(doc, src, tests)
    n = len(doc_citations(doc, tests))
    if faults:
        print("docs/guarantees.md cites %d test names that are none:" % len(faults))
        print("\n".join("  " + f for f in faults))
        return 1
    print("docs/guarantees.md: %d citations, each a test" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
