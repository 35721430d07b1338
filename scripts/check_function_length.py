#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a C++ function in the given folders is longer than --max lines
(project rule: functions fit on a screen, at most 150 lines).

A light-weight scan, not a C++ parser: comments and literals are blanked,
then every '{' at namespace or class scope whose preceding declaration has a
parameter list and no '=' opens a function body; the function's length runs
from the first line of that declaration to its closing brace. Lambdas and
blocks inside a function count as part of it.

usage: check_function_length.py [--max N] DIR_OR_FILE...
"""
import argparse
import os
import re
import sys


def blank(src):
    """Comments, string and char literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == 'R' and src.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', src[i:])
            end = src.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b|extern\s+\"")
NAME = re.compile(r"([~\w:]+(?:<[^<>]*>)?|operator\s*[^\s(]+)\s*\(")


def head_kind(head):
    """'scope' (namespace, class...), 'func' (a function body follows) or
    'data' (an initializer) for the declaration text before a '{'."""
    m = SCOPE.search(head)
    if m and "(" not in head[m.start():]:
        return "scope"
    flat = head.replace("operator=", "").replace("operator==", "")
    while True:  # drop parameter lists and template argument lists
        nxt = re.sub(r"\([^()]*\)|<[^<>;{}]*>", " ", flat)
        if nxt == flat:
            break
        flat = nxt
    if "(" in head and not re.search(r"(?<![=!<>])=(?!=)", flat):
        return "func"
    return "data"


def functions(path):
    src = blank(open(path, encoding="utf-8", errors="replace").read())
    stack = []  # 'scope', 'func', 'data'
    head_start = 0
    found = []
    for i, c in enumerate(src):
        if c == ";" and (not stack or stack[-1] == "scope"):
            head_start = i + 1
        elif c == "{":
            if stack and stack[-1] in ("func", "data"):
                stack.append("block")
                continue
            if stack and stack[-1] == "block":
                stack.append("block")
                continue
            head = src[head_start:i]
            kind = head_kind(head)
            stack.append(kind)
            if kind == "func":
                first = len(src) - len(src[head_start:].lstrip())
                m = NAME.search(head)
                found.append([m.group(1) if m else "?", src.count("\n", 0, first) + 1, None])
            head_start = i + 1
        elif c == "}":
            if not stack:
                continue
            kind = stack.pop()
            if kind == "func":
                found[-1][2] = src.count("\n", 0, i) + 1
            if not stack or stack[-1] == "scope":
                head_start = i + 1
    return [(name, a, b) for name, a, b in found if b is not None]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=150)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isfile(p):
            files.append(p)
        for root, _, names in os.walk(p):
            files += [os.path.join(root, f) for f in sorted(names) if f.endswith((".cc", ".h", ".cpp"))]
    bad = 0
    longest = (0, "")
    for f in sorted(files):
        for name, a, b in functions(f):
            length = b - a + 1
            if length > longest[0]:
                longest = (length, "%s:%d %s" % (f, a, name))
            if length > args.max:
                print("%s:%d: function %s is %d lines long (at most %d)" % (f, a, name, length, args.max))
                bad += 1
    print("%d files checked; longest function: %d lines (%s)" % (len(files), longest[0], longest[1]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
