#!/usr/bin/env python3
"""check_env.py - the library reads no environment and no configuration file by itself.

Settings reach libfloe through the options of the calls that use them; the floe command
(src/cli) is where they come from the environment, .pyiceberg.yaml, floe.conf and the
command line (docs/CONFIG.md). Checked in every src/**/*.{c,h} outside src/cli, with
comments removed:

  - no call of getenv or secure_getenv, and no use of environ / __environ;
  - no call of a loader (a function that reads settings from files or the environment
    through a lookup the caller passes: LOADERS below); the program calls them;
  - no configuration file named as a path literal (".pyiceberg.yaml", "floe.conf",
    "%s/.aws/config"; a message that mentions one is fine) outside the
    loaders' own files (LOADER_FILES), which read only the files their caller's lookup or
    arguments point them to.
Every loader must still be defined in its file, so a rename cannot make the check vacuous.

Usage: check_env.py [ROOT]            check the tree at ROOT (default: this checkout)
       check_env.py --planted [ROOT]  copy ROOT's src/ to a temporary folder, plant each
                                      kind of violation in turn and fail unless it is caught.
Exit 0 when clean, 1 on a violation (each printed as file:line: reason).
"""
import os
import re
import shutil
import sys
import tempfile

ENV_RE = re.compile(r"\b(getenv|secure_getenv)\s*\(|\b(__environ|environ)\b")
# loader -> the file that defines it (relative to src/)
LOADERS = {
    "floe_catalog_config_load": "catalog/config.c",
    "floe_io_options_from_env": "io/s3_config.c",
    "floe_server_config_load": "server/config.c",
}
LOADER_FILES = set(LOADERS.values())
# a literal that is a file name or path (no spaces: messages that mention one are fine)
CONFIG_NAME_RE = re.compile(r'"[^"\s]*(\.pyiceberg\.yaml|floe\.conf|\.aws/)[^"\s]*"')
ALLOWED_DIRS = ("cli",)


def strip_comments(text):
    """Text with comments blanked (newlines kept), string and char literals kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank_strings(code):
    return re.sub(r'"(\\.|[^"\\\n])*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', code)


def check(root):
    src = os.path.join(root, "src")
    errors = []
    defined = set()
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, src)
        top = rel_dir.split(os.sep)[0]
        for fn in sorted(filenames):
            if not fn.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            with open(path, encoding="utf-8", errors="replace") as f:
                code = strip_comments(f.read())
            bare = blank_strings(code)
            for name, where in LOADERS.items():
                if rel == where and re.search(r"^\w[^;{]*\b" + name + r"\s*\(", bare, re.M):
                    defined.add(name)
            if top in ALLOWED_DIRS:
                continue
            for lineno, (line, bline) in enumerate(zip(code.split("\n"), bare.split("\n")), 1):
                where = f"src/{rel}:{lineno}"
                m = ENV_RE.search(bline)
                if m:
                    errors.append(f"{where}: reads the environment ({m.group(1) or m.group(2)}); "
                                  "take the setting as an option and set it in src/cli")
                for name, home in LOADERS.items():
                    if rel != home and re.search(r"\b" + name + r"\s*\(", bline):
                        errors.append(f"{where}: calls the loader {name}; only the program "
                                      "(src/cli) loads settings")
                if rel not in LOADER_FILES:
                    m = CONFIG_NAME_RE.search(line)
                    if m:
                        errors.append(f"{where}: names a configuration file ({m.group(1)}); "
                                      "only the loaders read them")
    for name, where in LOADERS.items():
        if name not in defined:
            errors.append(f"src/{where}: the loader {name} is not defined there any more "
                          "(update LOADERS in tests/check_env.py)")
    return errors


PLANTS = [
    ("table/table.c", "int floe_env_plant(void) { return getenv(\"HOME\") != 0; }\n",
     "reads the environment (getenv)"),
    ("io/local.c", "int floe_env_plant(void) { return secure_getenv(\"X\") != 0; }\n",
     "reads the environment (secure_getenv)"),
    ("common/util.c", "extern char **environ;\nint floe_env_plant(void) { return environ != 0; }\n",
     "reads the environment (environ)"),
    ("server/server.c",
     "int floe_env_plant(void) { return floe_catalog_config_load(0, 0, 0, 0, 0, 0); }\n",
     "calls the loader floe_catalog_config_load"),
    ("maint/scheduler.c",
     "int floe_env_plant(void) { return fopen(\"floe.conf\", \"r\") != 0; }\n",
     "names a configuration file (floe.conf)"),
]


def planted(root):
    failures = 0
    base = check(root)
    if base:
        print("check_env --planted: the tree itself is not clean:")
        print("\n".join(base))
        return 1
    for rel, text, expect in PLANTS:
        tmp = tempfile.mkdtemp(prefix="floe-env-")
        try:
            shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
            target = os.path.join(tmp, "src", rel)
            if not os.path.exists(target):
                print(f"check_env --planted: src/{rel} is gone; update PLANTS")
                failures += 1
                continue
            with open(target, "a", encoding="utf-8") as f:
                f.write(text)
            errs = check(tmp)
            if not any(f"src/{rel}:" in e and expect in e for e in errs):
                print(f"NOT CAUGHT: {expect} planted in src/{rel}; got: {errs}")
                failures += 1
            else:
                print(f"caught: {expect} in src/{rel}")
        finally:
            shutil.rmtree(tmp)
    # comments and the command's own folder are not violations
    tmp = tempfile.mkdtemp(prefix="floe-env-")
    try:
        shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
        with open(os.path.join(tmp, "src", "table", "table.c"), "a", encoding="utf-8") as f:
            f.write("/* getenv(\"X\") is not called here */\n")
        with open(os.path.join(tmp, "src", "cli", "main.c"), "a", encoding="utf-8") as f:
            f.write("int floe_env_plant(void) { return getenv(\"X\") != 0; }\n")
        errs = check(tmp)
        if errs:
            print(f"FALSE ALARM on a comment or on src/cli: {errs}")
            failures += 1
    finally:
        shutil.rmtree(tmp)
    return 1 if failures else 0


def main(argv):
    args = argv[1:]
    if args and args[0] == "--planted":
        root = args[1] if len(args) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return planted(root)
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check(root)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
