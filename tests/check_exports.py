#!/usr/bin/env python3
"""check_exports.py - libfloe.so exports exactly the API its installed headers declare.

Usage: check_exports.py LIBFLOE_SO HEADER_DIR

Fails (exit 1, one line per problem) when `nm -D --defined-only` of the library lists
  - a symbol without the floe_ prefix,
  - a symbol no header in HEADER_DIR declares (an internal function leaking out),
  - a data symbol outside the read-only sections (a writable global),
or when a header declares a function (not static inline) the library does not export,
or when a function a header declares (static inline ones too) is undocumented: the lines
around its declaration, up to the nearest blank lines, hold no comment.
"""
import re
import subprocess
import sys
from pathlib import Path

DECL_RE = re.compile(r"\b(floe_[A-Za-z0-9_]+)\s*\(")
DATA_RE = re.compile(r"\bextern\b[^;(]*?\b(floe_[A-Za-z0-9_]+)\s*(?:\[[^\]]*\])?\s*;")
INLINE_RE = re.compile(r"\bstatic\s+inline\b[^;{]*?\b(floe_[A-Za-z0-9_]+)\s*\(")
READ_ONLY = (".rodata", ".data.rel.ro")


def strip(text):
    text = re.sub(r"#ifdef __cplusplus.*?#endif", " ", text, flags=re.S)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # preprocessor lines (with continuations): macros are not symbols
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)


def declared(header_dir):
    funcs, data, inline = set(), set(), set()
    for h in sorted(Path(header_dir).glob("*.h")):
        text = strip(h.read_text(encoding="utf-8"))
        inline |= set(INLINE_RE.findall(text))
        data |= set(DATA_RE.findall(text))
        # top-level statements only: a body of a static inline function calls others
        depth, top = 0, []
        for ch in text:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif depth == 0 or ch in "\n":
                top.append(ch)
        funcs |= set(DECL_RE.findall("".join(top)))
    return funcs - inline, data, inline


def undocumented(header_dir):
    """header:line: name of each declaration whose paragraph has no comment."""
    out = []
    for h in sorted(Path(header_dir).glob("*.h")):
        lines = h.read_text(encoding="utf-8").split("\n")
        para = []
        for i, line in enumerate(lines + [""]):
            if line.strip():
                para.append((i + 1, line))
                continue
            text = "\n".join(l for _, l in para)
            if para and "/*" not in text and "//" not in text:
                for lineno, l in para:
                    # a declaration starts at column 0; typedefs and macros are not symbols
                    if l[:1] in (" ", "\t", "#", "}") or l.startswith("typedef"):
                        continue
                    m = DECL_RE.search(l)
                    if m and "(*" not in l:
                        out.append(f"{h.name}:{lineno}: {m.group(1)}")
            para = []
    return out


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = parts[1]
    sections = {}
    out = subprocess.run(["objdump", "-T", lib], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[-1] in syms:
            sec = next((p for p in parts if p.startswith(".") or p == "*UND*"), None)
            if sec:
                sections[parts[-1]] = sec
    return syms, sections


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    lib, header_dir = argv[1], argv[2]
    funcs, data, inline = declared(header_dir)
    syms, sections = exported(lib)
    problems = []
    # AddressSanitizer builds add an ODR indicator beside each exported global
    for name in [n for n in syms if n.startswith("__odr_asan.")]:
        if name[len("__odr_asan."):] in syms:
            del syms[name]
    for name, kind in sorted(syms.items()):
        if not name.startswith("floe_"):
            problems.append(f"{name}: exported without the floe_ prefix ({kind})")
        elif kind in "Tt":
            if name not in funcs:
                problems.append(f"{name}: exported function no installed header declares")
        elif name not in data:
            problems.append(f"{name}: exported data no installed header declares ({kind})")
        elif not sections.get(name, "").startswith(READ_ONLY):
            problems.append(f"{name}: exported writable global (section "
                            f"{sections.get(name, '?')})")
    for name in sorted((funcs | data) - set(syms)):
        problems.append(f"{name}: declared in {header_dir} but not exported by the library")
    for where in undocumented(header_dir):
        problems.append(f"{where}: declared without a comment saying what it does")
    for p in problems:
        print(p)
    n_func = sum(1 for k in syms.values() if k in "Tt")
    print(f"check_exports: {len(syms)} exported symbols ({n_func} functions, "
          f"{len(syms) - n_func} read-only data), {len(inline)} static inline; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
