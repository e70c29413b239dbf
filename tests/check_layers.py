#!/usr/bin/env python3
"""check_layers.py - src/ folders depend one way only: a folder includes only its own
headers and those of folders below it.

The declared order is the layer picture in docs/DESIGN.md ("Modules"): one line per
folder, `src/NAME/ ... -> deps`, highest first. A folder's layer is its position there.
Every folder of src/ must be in the picture and every folder in the picture must exist.

Who owns a public header: include/floe/X.h belongs to the src/ folder that defines most
of the functions it declares (found by their definitions in src/**/*.c). A header that
only includes others (floe/floe.h, the umbrella) belongs to none, and src/ may not
include it. A private
include "F/x.h" belongs to folder F, a bare "x.h" to the including file's own folder.

Checked:
  - every #include "..." in src/F/*.{c,h} names a header of F or of a folder below F;
  - every include/floe header includes only headers of its own layer or below;
  - the "-> deps" of each picture line name only folders whose headers F includes, and
    reach (directly or through their own arrows) every folder F includes;
    "-> everything below" claims only the layer rule.

Usage: check_layers.py [ROOT]          check the tree at ROOT (default: this checkout)
       check_layers.py --planted [ROOT] copy ROOT's src/, include/ and DESIGN.md to a
                                        temporary folder, plant violations one at a time
                                        and fail unless the check catches each one.
Exit 0 when the layers hold, 1 on a violation (each printed as file:line: reason).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

PICTURE_HEADING = "## Modules"
LINE_RE = re.compile(r"^src/([a-z0-9_]+)/\s")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CALL_RE = re.compile(r"\b(floe_[A-Za-z0-9_]+)\s*\(")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def parse_picture(root, errors):
    """[(folder, deps or None for 'everything below', line number)], highest first."""
    path = os.path.join(root, "docs", "DESIGN.md")
    lines = read(path).split("\n")
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith(PICTURE_HEADING))
        fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
        end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    except StopIteration:
        errors.append(f"docs/DESIGN.md: no layer picture (a ``` block after "
                      f"'{PICTURE_HEADING}')")
        return []
    entries = []
    for i in range(fence + 1, end):
        m = LINE_RE.match(lines[i])
        if m:
            entries.append([m.group(1), None, i + 1])
        elif not (entries and lines[i].startswith(" ")):
            if lines[i].strip():
                errors.append(f"docs/DESIGN.md:{i + 1}: not a picture line: {lines[i]!r}")
            continue
        arrows = lines[i].count(" -> ")
        if arrows > 1 or (arrows and entries[-1][1] is not None):
            errors.append(f"docs/DESIGN.md:{i + 1}: more than one ' -> ' in src/"
                          f"{entries[-1][0]}/")
        elif arrows:
            entries[-1][1] = lines[i].split(" -> ", 1)[1].strip()
    out = []
    for folder, arrow, lineno in entries:
        if arrow == "everything below":
            deps = None
        else:
            deps = [d.strip() for d in arrow.split(",") if d.strip()] if arrow else []
        out.append((folder, deps, lineno))
    return out


def definitions(root):
    """function name -> folder, from the non-static definitions in src/**/*.c."""
    owner = {}
    src = os.path.join(root, "src")
    for folder in sorted(os.listdir(src)):
        fdir = os.path.join(src, folder)
        if not os.path.isdir(fdir):
            continue
        for name in sorted(os.listdir(fdir)):
            if not name.endswith(".c"):
                continue
            text = read(os.path.join(fdir, name))
            for m in re.finditer(r"^[A-Za-z_][^\n]*", text, re.M):
                line = m.group(0)
                if line.startswith(("static", "typedef", "extern", "struct", "enum", "union")):
                    continue
                c = CALL_RE.search(line)
                if not c:
                    continue
                rest = text[m.start() + c.end():]
                brace, semi = rest.find("{"), rest.find(";")
                if brace >= 0 and (semi < 0 or brace < semi):
                    owner.setdefault(c.group(1), folder)
    return owner


def header_owners(root, defs, errors, umbrellas):
    owners = {}
    idir = os.path.join(root, "include", "floe")
    for name in sorted(os.listdir(idir)):
        if not name.endswith(".h"):
            continue
        text = read(os.path.join(idir, name))
        declared = set(CALL_RE.findall(text))
        if not declared and re.search(r'^#include "floe/', text, re.M):
            umbrellas.add("floe/" + name)  # floe/floe.h: includes, declares nothing
            continue
        count = {}
        for fn in declared:
            if fn in defs:
                count[defs[fn]] = count.get(defs[fn], 0) + 1
        if not count:
            errors.append(f"include/floe/{name}: declares no function defined in src/, so "
                          "no folder owns it")
            continue
        best = max(count.values())
        top = sorted(f for f, n in count.items() if n == best)
        if len(top) > 1:
            errors.append(f"include/floe/{name}: as many functions defined in "
                          f"{' and '.join(top)}; move declarations so one folder owns it")
            continue
        owners["floe/" + name] = top[0]
    return owners


def check(root):
    errors = []
    picture = parse_picture(root, errors)
    order = [f for f, _, _ in reversed(picture)]  # lowest first
    layer = {f: i for i, f in enumerate(order)}
    src = os.path.join(root, "src")
    folders = sorted(f for f in os.listdir(src) if os.path.isdir(os.path.join(src, f)))
    for f in folders:
        if f not in layer:
            errors.append(f"src/{f}/: not in the layer picture of docs/DESIGN.md")
    for f, _, lineno in picture:
        if f not in folders:
            errors.append(f"docs/DESIGN.md:{lineno}: src/{f}/ does not exist")
    if errors:
        return errors

    defs = definitions(root)
    umbrellas = set()
    owners = header_owners(root, defs, errors, umbrellas)
    uses = {f: set() for f in folders}

    def target_of(inc, here_folder, here_dir):
        if inc in owners:
            return owners[inc]
        if inc.startswith("floe/"):
            return None  # reported with the header
        first = inc.split("/")[0]
        if "/" in inc and first in layer:
            return first
        if "/" not in inc and os.path.exists(os.path.join(here_dir, inc)):
            return here_folder
        return None

    def scan(path, rel, folder, here_dir):
        for i, line in enumerate(read(path).split("\n")):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            inc = m.group(1)
            if inc in umbrellas:
                errors.append(f"{rel}:{i + 1}: \"{inc}\" is the umbrella of the public API; "
                              "library code includes the headers it uses")
                continue
            tgt = target_of(inc, folder, here_dir)
            if tgt is None:
                if inc.startswith("floe/") and os.path.exists(
                        os.path.join(root, "include", inc)):
                    continue  # owner-less header: already reported
                errors.append(f"{rel}:{i + 1}: \"{inc}\" is no header of a src/ folder")
                continue
            if tgt != folder:
                uses[folder].add(tgt)
            if layer[tgt] > layer[folder]:
                errors.append(f"{rel}:{i + 1}: {folder} (layer {layer[folder]}) includes "
                              f"\"{inc}\" of {tgt} (layer {layer[tgt]}), a higher layer")

    for f in folders:
        fdir = os.path.join(src, f)
        for name in sorted(os.listdir(fdir)):
            if name.endswith((".c", ".h")):
                scan(os.path.join(fdir, name), f"src/{f}/{name}", f, fdir)
    idir = os.path.join(root, "include", "floe")
    for name in sorted(os.listdir(idir)):
        h = "floe/" + name
        if h in owners:
            scan(os.path.join(idir, name), f"include/{h}", owners[h], idir)

    # The arrows: each named folder is used, and every used folder is reachable through
    # the arrows (a folder may leave out what a folder it names already uses).
    arrows = {f: (set(deps) if deps is not None else {g for g in folders
                                                       if layer[g] < layer[f]})
              for f, deps, _ in picture}
    for f, deps, lineno in picture:
        if deps is None:
            continue
        for d in deps:
            if d not in layer:
                errors.append(f"docs/DESIGN.md:{lineno}: src/{f}/ -> {d}: no such folder")
            elif d not in uses[f]:
                errors.append(f"docs/DESIGN.md:{lineno}: src/{f}/ -> {d}, but includes "
                              f"no header of {d}")
        seen, todo = set(), list(arrows[f])
        while todo:
            g = todo.pop()
            if g not in seen:
                seen.add(g)
                todo.extend(arrows.get(g, ()))
        for d in sorted(uses[f] - seen):
            errors.append(f"docs/DESIGN.md:{lineno}: src/{f}/ includes headers of {d}, "
                          f"which its '->' list does not reach")
    return errors


def planted(root):
    """Each plant must make the check fail with a message naming the planted place."""
    plants = [
        # a low folder including a public header of a higher one
        ("src/common/util.c", '#include "floe/table.h"\n', "src/common/util.c:1: common"),
        # a model file including a private header of the table operations above it
        ("src/iceberg/transform.c", '#include "table/table_internal.h"\n',
         "src/iceberg/transform.c:1: iceberg"),
        # a public header of a low layer including one of a higher layer
        ("include/floe/schema.h", '#include "floe/scan.h"\n',
         "include/floe/schema.h:1: schema"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="floe-layers-") as tmp:
        for sub in ("src", "include"):
            shutil.copytree(os.path.join(root, sub), os.path.join(tmp, sub))
        os.makedirs(os.path.join(tmp, "docs"))
        shutil.copy(os.path.join(root, "docs", "DESIGN.md"), os.path.join(tmp, "docs"))
        base = check(tmp)
        if base:
            print("planted: the unplanted copy already fails:\n  " + "\n  ".join(base))
            return 1
        for rel, text, expect in plants:
            path = os.path.join(tmp, rel)
            original = read(path)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text + original)
            r = subprocess.run([sys.executable, os.path.abspath(__file__), tmp],
                               capture_output=True, text=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
            if r.returncode != 1 or expect not in r.stdout:
                print(f"planted {text.strip()} in {rel}: check exited {r.returncode} "
                      f"without '{expect}':\n{r.stdout}{r.stderr}")
                failures += 1
            else:
                print(f"planted {text.strip()} in {rel}: caught")
    return 1 if failures else 0


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if argv[1:2] == ["--planted"]:
        return planted(argv[2] if len(argv) > 2 else here)
    root = argv[1] if len(argv) > 1 else here
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} violation(s)")
        return 1
    print("check_layers: the layers of docs/DESIGN.md hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
