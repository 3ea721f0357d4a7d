#!/usr/bin/env python3
"""Find import circles between modules inside each crate: module A refers to B (through a
`crate::…`, `super::…` or `self::…` path in a `use` or an expression) while B, directly or
through other modules, refers back to A. A child using its parent's items (`super::X`) is the
normal shape of a Rust module tree and is not counted; everything else is. Exit 1 when a circle
exists, listing it."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};", re.S)


def modules(src):
    """Map module path tuples to files for one crate's src dir."""
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("lib", "main") and len(parts) == 1:
                parts = []
            elif parts[-1] == "mod":
                parts = parts[:-1]
            mods[tuple(parts)] = os.path.join(dirpath, f)
    return mods


def strip_code(text):
    """Blank out comments, string and char literals (one pass, so `//` inside a string and
    quotes inside a comment are both handled)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 40]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = len(re.match(r"r(#*)", text[i:]).group(1))
            end = text.find('"' + "#" * hashes, i + 2 + hashes)
            out.append('""')
            i = n if end < 0 else end + 1 + hashes
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            out.append('""')
            i += 1
        elif c == "'" and re.match(r"'(\\.[^']*|[^'\\])'", text[i:i + 12]):
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:i + 12])
            out.append("' '")
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_comments_and_tests(text):
    text = strip_code(text)
    # Leave out #[cfg(test)] modules: tests may reach anywhere.
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def resolve(mod, path, mods):
    parts = path.split("::")
    if parts[0] == "crate":
        base, rest = [], parts[1:]
    else:
        base = list(mod)
        rest = parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                if not base:
                    return None
                base = base[:-1]
            rest = rest[1:]
    cand = tuple(base + rest)
    while cand and cand not in mods:
        cand = cand[:-1]
    return cand


def crate_cycles(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for m, f in mods.items():
        text = strip_comments_and_tests(open(f, encoding="utf-8").read())
        paths = set(PATH.findall(text))
        for prefix, group in USE_GROUP.findall(text):
            for item in re.split(r"[,\s]+", group):
                item = item.split(" as ")[0].strip("{} ")
                if item and item != "self":
                    paths.add(prefix + "::" + item.split("::")[0])
        # Paths that start with a child module's name (`use tgz::X;` in `root/mod.rs`).
        for name in set(re.findall(r"(?<![:\w])([a-z_][a-z0-9_]*)::", text)):
            if m + (name,) in mods:
                paths.add("self::" + name)
        for p in paths:
            t = resolve(m, p, mods)
            if t is None or t == m:
                continue
            # A module using an ancestor (or the crate root) is the tree's normal shape.
            if m[: len(t)] == t:
                continue
            edges[m].add(t)
    # Tarjan's strongly connected components.
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in mods:
        if v not in index:
            visit(v)
    return out


def main():
    bad = 0
    for crate in sorted(os.listdir(ROOT)):
        src = os.path.join(ROOT, crate, "src")
        if not os.path.isdir(src):
            continue
        for comp in crate_cycles(src):
            bad += 1
            names = ["::".join(c) or "(crate root)" for c in comp]
            print(f"{crate}: import circle between {', '.join(names)}")
    if bad:
        print(f"{bad} import circle(s); break each by moving the shared piece down a level")
        return 1
    print("no import circles between modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
