#!/usr/bin/env python3
"""readme_examples.py - runs README.md's own shell examples against the built floe.

Every fenced block in README.md has an info string (sh, text, ini, ...), and every sh
block is marked by an HTML comment on the line before it (invisible on GitHub):

    <!-- test: NAME -->            run it in scenario NAME
    <!-- test: NAME, exit N -->    ... where it must fail with exit status N
    <!-- test: output -->          (a text block) what the sh block just before it prints
    <!-- not tested: REASON -->    not run, and why

A scenario is one bash session in a scratch folder of its own (cwd), with `floe` on PATH
pointing at the build under test: its blocks run in README order, each must succeed (the
session stops at the first failing command), and an output block's lines must appear in
that order in the block's output (stdout and stderr; `...` matches anything but a
newline, and a line may match within a longer one, as curl's answers share lines). A line
that starts a server (`floe serve`, `floe catalog serve`, with or without `&`) runs in
the background until the server answers, and the server is stopped (SIGTERM, must exit 0)
when the scenario ends. curl runs with --fail-with-body, so an HTTP error fails the line.

The scenarios run in a network and mount namespace of their own (unshare), so the
README's fixed ports and /tmp paths touch nothing outside; without unshare the scenarios
that need it are skipped and the test exits 77 once everything else has passed.

Inputs the README takes for granted (an events file, Parquet files written elsewhere)
are made by SETUP before the line that needs them, and literals that cannot run as
written (a 1 GB size, a snapshot id) are replaced by SUBST. An entry of either that no
longer matches the README fails the test, so neither can outlive the text it serves.

Usage: readme_examples.py [README]   (FLOE_BIN: the floe to run; --self-test: the checks
that a broken example, an unmarked block and a wrong output do fail)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get('FLOE_SOURCE_DIR') or os.path.abspath(
    os.path.join(os.path.dirname(__file__), '..', '..', '..'))
FLOE = os.path.abspath(os.environ.get('FLOE_BIN') or os.path.join(SRC, 'build', 'floe'))
CONFORMANCE = os.environ.get('FLOE_CONFORMANCE') or os.path.join(SRC, '..', 'shared', 'conformance')

# Shell run in scenario NAME before the first line that starts with KEY: the inputs the
# README assumes the reader has.
SETUP = {
    ('schema', 'floe schema infer'): r'''
floe gen --seed 7 --count 2000 -o events.ndjson --schema-out gen.schema.json >/dev/null
floe namespace create demo >/dev/null
floe table create demo.events --schema gen.schema.json >/dev/null
''',
    ('convert', 'floe convert --schema events.schema.json'): r'''
floe gen --seed 7 --count 3000 -o events.ndjson --schema-out events.schema.json >/dev/null
cp events.schema.json s.json
floe gen --seed 8 --count 1000 -o logs-1.ndjson >/dev/null && gzip logs-1.ndjson
floe gen --seed 9 --count 1000 -o logs-2.ndjson >/dev/null && gzip logs-2.ndjson
gzip -k events.ndjson
''',
    # a Parquet file of another writer (parquet-testing's, written by Impala)
    ('convert', 'floe inspect out/part-00000.parquet'): r'''
cp "$FLOE_CONFORMANCE"/parquet-testing/data/alltypes_plain.parquet some-spark-file.parquet
cp out/part-00000.parquet file.parquet
''',
    ('tables', 'floe namespace create demo'): r'''
floe gen --seed 42 --count 4000 -o events.ndjson --schema-out events.schema.json >/dev/null
# Parquet files from elsewhere, one partition (event_type, day) each
floe gen --seed 43 --count 600 -o other.ndjson >/dev/null
floe convert --schema events.schema.json --partition "event_type, day(ts)" other.ndjson -o other >/dev/null
mkdir spark-output exports
n=0; for f in $(find other -name 'part-*.parquet' | sort | head -4); do
  n=$((n + 1)); cp "$f" spark-output/part-100$n.parquet; mv "$f" exports/e$n.parquet
done
# table folders outside the catalog (a filesystem catalog's tables)
for t in any spark; do
  FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=path/to floe namespace create $t >/dev/null
  FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=path/to floe table create $t.table --schema events.schema.json >/dev/null
  FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=path/to floe append $t.table other.ndjson >/dev/null
  FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=path/to floe append $t.table other.ndjson >/dev/null
done
''',
    # a file spanning partitions, as an engine that ignores the spec writes one
    ('tables', 'floe append demo.events spark-output/part-0001.parquet'): r'''
floe convert --schema events.schema.json other.ndjson -o mixed >/dev/null
cp mixed/part-00000.parquet spark-output/part-0001.parquet
''',
    # a batch of the table's current schema (the README has just evolved it)
    ('tables', 'floe append demo.events batch.ndjson --branch audit'): r'''
floe scan demo.events --limit 300 > batch.ndjson
''',
    # an append made on another branch, to be picked into main
    ('tables', 'floe snapshots cherrypick'): r'''
floe ref create demo.events dev >/dev/null
floe scan demo.events --limit 100 > dev.ndjson
floe append demo.events dev.ndjson --branch dev >/dev/null
''',
    ('v3', 'floe table create logs.events'): r'''
floe gen --seed 7 --count 200 -o events.ndjson --schema-out events.schema.json >/dev/null
floe namespace create logs >/dev/null
floe table create logs.old_events --schema events.schema.json >/dev/null
floe append logs.old_events events.ndjson >/dev/null
''',
    ('v3', 'floe scan logs.events'): r'''
floe append logs.events events.ndjson >/dev/null
''',
    ('serve', 'floe serve '): r'''
floe gen --seed 42 --count 500 -o events.ndjson --schema-out events.schema.json >/dev/null
''',
}

# README literal -> what runs instead, per scenario.
SUBST = {
    'gen': [
        ('--count 1000000', '--count 20000'),
        ('--bytes 1GB', '--bytes 4MB'),
        ('--count 100000 ', '--count 5000 '),
    ],
    'catalog-serve': [
        # offline: iceberg-js from the test tools' node_modules (tests/js, linked by run())
        ('npm install iceberg-js', 'ln -s "$FLOE_TEST_NODE_MODULES" node_modules'),
    ],
    'tables': [
        # a time: the README's is before any snapshot a reader makes today
        ('--to 2026-10-06T12:00:00Z', '--to "$(__snapshot_time demo.events 1)"'),
        # ids of snapshots that exist only at run time
        ('set-current demo.events 5781947118336215154',
         'set-current demo.events "$(__snapshot_id demo.events 2)"'),
        ('cherrypick demo.events 3055729675574597004',
         'cherrypick demo.events "$(__ref_snapshot demo.events dev)"'),
        ('--compare 547165917443754069', '--compare "$(__snapshot_id demo.events 1)"'),
    ],
}

PRELUDE = r'''
set -eEo pipefail
# README examples call curl to show a request; an HTTP error must fail them
curl() { command curl --fail-with-body "$@"; }
__servers=()
# a README line that starts a server: run it in the background until it answers
__serve() {
  local addr= prev= a
  [ "$2" = catalog ] && addr=127.0.0.1:8181 || addr=127.0.0.1:8080
  for a in "$@"; do
    case $prev in
      --listen) addr=$a ;;
      --config) addr=$(sed -n 's/^listen *= *\([^ #]*\).*/\1/p' "$a" 2>/dev/null | head -1 || true) ;;
    esac
    prev=$a
  done
  [ -n "$addr" ] || addr=127.0.0.1:8080
  __stop_server "$addr"
  local log=.server-${#__servers[@]}.log
  "$@" >"$log" 2>&1 &
  local pid=$! i
  __servers+=("$addr=$pid")
  for i in $(seq 600); do
    [ "$(command curl -s -o /dev/null -w '%{http_code}' "http://$addr/")" != 000 ] && return 0
    kill -0 $pid 2>/dev/null || { echo "server exited: $*"; cat "$log"; return 1; }
    sleep 0.1
  done
  echo "server did not answer on $addr: $*"; cat "$log"; return 1
}
# stop the server on address $1 (all of them without one); it must exit 0
__stop_server() {
  local e pid rc=0 keep=()
  for e in "${__servers[@]}"; do
    if [ -z "$1" ] || [ "${e%=*}" = "$1" ]; then
      pid=${e#*=}
      kill -TERM "$pid" 2>/dev/null || true
      wait "$pid" || { rc=$?; echo "server $e exited with $rc"; cat .server-*.log; }
    else
      keep+=("$e")
    fi
  done
  __servers=("${keep[@]}")
  return $rc
}
trap '__rc=$?; __stop_server "" || __rc=1; exit $__rc' EXIT
trap 'echo "@@readme: failed with status $? at script line $LINENO: $BASH_COMMAND@@"' ERR
# snapshot N (1 = oldest) of table $1: its id, its commit time (to the millisecond)
__snapshot_id() { floe snapshots "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[int(sys.argv[1]) - 1]["snapshot_id"])' "$2"; }
__snapshot_time() {
  floe snapshots "$1" --json | python3 -c '
import datetime, json, sys
ms = json.load(sys.stdin)[int(sys.argv[1]) - 1]["timestamp_ms"]
t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
print(t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000))' "$2"
}
# the snapshot of ref $2 of table $1
__ref_snapshot() { floe ref list "$1" --json | python3 -c '
import json, sys
print([r for r in json.load(sys.stdin) if r["name"] == sys.argv[1]][0]["snapshot_id"])' "$2"; }
'''

SHELL_INFO = {'sh', 'bash', 'shell', 'console', 'shell-session', 'zsh'}
MARK = re.compile(r'^<!--\s*(test:\s*(?P<name>[\w-]+)(,\s*exit\s+(?P<exit>\d+))?|not tested:\s*(?P<why>.*?))\s*-->\s*$')
SERVER = re.compile(r'^(\s*)(floe\s+(?:catalog\s+)?serve\b(?!.*--example-config)(?!.*--help)[^#&]*?)\s*&?\s*(#.*)?$')


class Block:
    def __init__(self, line, info, text, mark):
        self.line, self.info, self.text, self.mark = line, info, text, mark
        self.scenario = self.why = self.exit = None
        self.output = None  # the output block that follows it


def parse(path):
    """The README's fenced blocks and the problems with their marks."""
    lines = open(path, encoding='utf-8').read().split('\n')
    blocks, problems = [], []
    k = 0
    while k < len(lines):
        m = re.match(r'^(\s*)(`{3,}|~{3,})\s*(\S*)', lines[k])
        if not m:
            k += 1
            continue
        fence, info, start = m.group(2), m.group(3).lower(), k
        k += 1
        body = []
        while k < len(lines) and not lines[k].strip().startswith(fence):
            body.append(lines[k])
            k += 1
        k += 1
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        mark = lines[j].strip() if j >= 0 and lines[j].strip().startswith('<!--') else None
        b = Block(start + 1, info, '\n'.join(body) + '\n', mark)
        blocks.append(b)
        where = f'README.md:{b.line}'
        if not info:
            problems.append(f'{where}: a fenced block without a language: tag it sh (commands, '
                            'then mark them), text, ini, ...')
            continue
        mm = MARK.match(mark) if mark else None
        if mark and not mm:
            problems.append(f'{where}: unknown mark {mark!r}')
            continue
        if info in SHELL_INFO:
            if not mm:
                problems.append(f'{where}: an unmarked {info} block: put <!-- test: SCENARIO --> '
                                'or <!-- not tested: REASON --> on the line before it')
            elif mm.group('why') is not None:
                if not mm.group('why'):
                    problems.append(f'{where}: <!-- not tested: --> needs a reason')
                b.why = mm.group('why')
            elif mm.group('name') == 'output':
                problems.append(f'{where}: an output mark on a {info} block (use text)')
            else:
                b.scenario = mm.group('name')
                b.exit = mm.group('exit') and int(mm.group('exit'))
        elif mm:
            if mm.group('name') != 'output':
                problems.append(f'{where}: a {info} block marked {mark!r} (only sh blocks run)')
            else:
                prev = blocks[-2] if len(blocks) > 1 else None
                if not prev or not prev.scenario:
                    problems.append(f'{where}: an output block that does not follow a run block')
                else:
                    prev.output = b
    return blocks, problems


def scenarios(blocks):
    """{name: [blocks in README order]} in order of first appearance."""
    out = {}
    for b in blocks:
        if b.scenario:
            out.setdefault(b.scenario, []).append(b)
    return out


def check_tables(scen, problems):
    """SETUP and SUBST entries must still match the README."""
    for (name, key) in SETUP:
        if name not in scen:
            problems.append(f'SETUP: no scenario {name!r} in the README')
        elif key and not any(any(l.strip().startswith(key) for l in b.text.split('\n')) for b in scen[name]):
            problems.append(f'SETUP: no line starting {key!r} in scenario {name!r}')
    for name, subs in SUBST.items():
        for old, _ in subs:
            if name not in scen or not any(old in b.text for b in scen[name]):
                problems.append(f'SUBST: {old!r} is not in scenario {name!r}')


def script(name, blocks):
    """The bash session of one scenario, and its line -> README line map."""
    out = PRELUDE.split('\n')
    where = {}
    setups = [(key, sh) for (sname, key), sh in SETUP.items() if sname == name]
    for i, b in enumerate(blocks):
        text = b.text
        for old, new in SUBST.get(name, []):
            text = text.replace(old, new)
        out.append(f'echo "@@readme-block {i}@@"')
        if b.exit is not None:
            out.append('__rc=0; (trap - ERR; set -e')
        for n, l in enumerate(text.rstrip('\n').split('\n')):
            for k, (key, sh) in enumerate(setups):
                if key and l.strip().startswith(key):
                    out += sh.strip('\n').split('\n')
                    setups[k] = (False, sh)
            m = SERVER.match(l)
            if m:
                l = f'{m.group(1)}__serve {m.group(2)}'
            out.append(l)
            where[len(out)] = b.line + 1 + n
        if b.exit is not None:
            out.append(f') || __rc=$?; [ $__rc = {b.exit} ] || '
                       f'{{ echo "README.md:{b.line}: exit $__rc, not {b.exit}"; false; }}')
    out.append('echo "@@readme-block end@@"')
    return '\n'.join(out) + '\n', where


def match_output(expected, got):
    """Each line of `expected` (`...` = anything but a newline) is found in `got`, each
    after the one before; the first that is not, or None."""
    k = 0
    for w in (l.strip() for l in expected.split('\n')):
        if not w:
            continue
        m = re.compile('[^\n]*?'.join(re.escape(p) for p in w.split('...'))).search(got, k)
        if not m:
            return w
        k = m.end()
    return None


def needs_namespaces(blocks):
    """Whether a scenario starts a server (on the README's fixed ports) or uses /tmp."""
    return any(SERVER.match(l) or '/tmp/' in l or re.search(r'(?<!&)&\s*(#.*)?$', l)
               for b in blocks for l in b.text.split('\n'))


def run_scenario(name, blocks, root, env):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, 'home'))
    sh, where = script(name, blocks)
    with open(os.path.join(d, '.readme.sh'), 'w') as f:
        f.write(sh)
    p = subprocess.run(['bash', '.readme.sh'], cwd=d, env=dict(env, HOME=os.path.join(d, 'home')),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = p.stdout.decode('utf-8', 'replace')
    parts = re.split(r'^@@readme-(block|setup) (\d+|end)@@$', out, flags=re.M)
    per_block = {}
    for k in range(1, len(parts) - 1, 3):
        if parts[k] == 'block' and parts[k + 1] != 'end':
            per_block[int(parts[k + 1])] = parts[k + 2]
    errs = []
    if os.environ.get('README_EXAMPLES_VERBOSE'):
        print(out)
    if p.returncode != 0:
        m = re.search(r'@@readme: failed with status (\d+) at script line (\d+): (.*)@@', out)
        at = f'README.md:{where.get(int(m.group(2)), "?")}: {m.group(3)} (exit {m.group(1)})' if m else \
            f'exit {p.returncode}'
        errs.append(f'{name}: {at}\n--- output ---\n{out[-6000:]}')
    else:
        for i, b in enumerate(blocks):
            if b.output:
                miss = match_output(b.output.text, per_block.get(i, ''))
                if miss:
                    errs.append(f'{name}: README.md:{b.output.line}: output line {miss!r} not in the '
                                f'output of README.md:{b.line}:\n{per_block.get(i, "")}')
    return errs


def namespaces_work():
    if os.environ.get('README_EXAMPLES_NO_NAMESPACES'):  # to try the fallback
        return False
    try:
        return subprocess.run(['unshare', '-rnm', 'true'], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def lo_up():
    """Bring the loopback interface of this (new) network namespace up."""
    import fcntl
    import socket
    import struct
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    fcntl.ioctl(s, 0x8914, struct.pack('16sH22x', b'lo', 0x1 | 0x8 | 0x40))  # SIOCSIFFLAGS
    s.close()


def inner(root, isolated, only):
    """Runs the scenarios in ROOT (/tmp inside the namespaces when isolated), from the
    copies main() put there; returns the exit status."""
    if isolated:
        lo_up()
    blocks, _ = parse(os.path.join(root, '.in', 'README.md'))
    scen = scenarios(blocks)
    bindir = os.path.join(root, '.in', 'bin')
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('FLOE_') and not k.startswith('AWS_') and k != 'PYICEBERG_HOME'}
    env['PATH'] = bindir + ':' + os.environ.get('PATH', '/usr/bin:/bin')
    env['FLOE_CONFORMANCE'] = os.path.join(root, '.in', 'conformance')
    env['FLOE_TEST_NODE_MODULES'] = os.path.join(root, '.in', 'node_modules')
    env['ASAN_OPTIONS'] = ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'), 'exitcode=99']))
    env['UBSAN_OPTIONS'] = ':'.join(filter(None, [os.environ.get('UBSAN_OPTIONS'), 'halt_on_error=1:exitcode=98']))
    errs, skipped = [], []
    for name, bl in scen.items():
        if only and name not in only:
            continue
        if not isolated and needs_namespaces(bl):
            skipped.append(name)
            continue
        e = run_scenario(name, bl, root, env)
        print(f'readme_examples: {name}: {len(bl)} blocks {"FAIL" if e else "ok"}', flush=True)
        errs += e
    for e in errs:
        print(f'readme_examples: FAIL: {e}', file=sys.stderr)
    if errs:
        return 1
    if skipped:
        print(f'readme_examples: SKIP: scenarios {", ".join(skipped)} need unshare (fixed ports, /tmp)')
        return 77
    return 0


FLOE_CALL = re.compile(r'(?:^|[|;&(]\s*|\$\(\s*)floe\s+([a-z][a-z-]*)(?:\s+([a-z][a-z-]*)(?=\s|$))?')


def check_help(readme):
    """The README says every command takes --help: each one its sh blocks call (run or
    not) must print its usage and exit 0. A list of problems."""
    blocks, _ = parse(readme)
    cmds = {}
    for b in blocks:
        if b.info in SHELL_INFO:
            for n, l in enumerate(b.text.split('\n')):
                for m in FLOE_CALL.finditer(l.split(' #')[0]):
                    cmds.setdefault(' '.join(filter(None, m.groups())), b.line + 1 + n)
    problems = []
    for cmd, line in cmds.items():
        p = subprocess.run([FLOE] + cmd.split() + ['--help'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out = p.stdout.decode('utf-8', 'replace')
        if p.returncode != 0 or not out.startswith('usage:'):
            problems.append(f'README.md:{line}: floe {cmd} --help: exit {p.returncode}: {out[:200]}')
    return problems


def check(readme):
    """The README's marks and the SETUP/SUBST tables: a list of problems."""
    blocks, problems = parse(readme)
    check_tables(scenarios(blocks), problems)
    return problems


def run(readme, only=(), capture=False):
    """Runs the README's scenarios in a scratch folder; the exit status (and output)."""
    # Everything the scenarios use is copied into the scratch folder, which becomes /tmp
    # inside the namespaces (so the README's /tmp paths land in it, and a build or
    # checkout under /tmp is out of sight there).
    root = tempfile.mkdtemp(prefix='floe-readme.')
    try:
        os.makedirs(os.path.join(root, '.in', 'bin'))
        shutil.copy(FLOE, os.path.join(root, '.in', 'bin', 'floe'))
        shutil.copy(readme, os.path.join(root, '.in', 'README.md'))
        me = shutil.copy(os.path.abspath(__file__), os.path.join(root, '.in', 'readme_examples.py'))
        modules = os.path.join(SRC, 'tests', 'js', 'node_modules')
        isolated = namespaces_work()
        if isolated:
            # bound in: a checkout under /tmp is out of sight once root is /tmp
            os.makedirs(os.path.join(root, '.in', 'node_modules'))
        else:
            os.symlink(modules, os.path.join(root, '.in', 'node_modules'))
        os.makedirs(os.path.join(root, '.in', 'conformance', 'parquet-testing', 'data'))
        shutil.copy(os.path.join(CONFORMANCE, 'parquet-testing', 'data', 'alltypes_plain.parquet'),
                    os.path.join(root, '.in', 'conformance', 'parquet-testing', 'data'))
        if isolated:
            cmd = ['unshare', '-rnm', 'sh', '-c',
                   'mount --bind "$1" "$0/.in/node_modules" && mount --rbind "$0" /tmp && '
                   'shift && exec "$@"', root, modules,
                   sys.executable, '/tmp/.in/readme_examples.py', '--inner', '/tmp', '1'] + list(only)
        else:
            cmd = [sys.executable, me, '--inner', root, '0'] + list(only)
        p = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None,
                           stderr=subprocess.STDOUT if capture else None)
        return p.returncode, p.stdout.decode('utf-8', 'replace') if capture else ''
    finally:
        if os.environ.get('README_EXAMPLES_KEEP'):
            print(f'readme_examples: kept {root}')
        else:
            shutil.rmtree(root, ignore_errors=True)


PLANTED_PASS = """<!-- test: planted -->
```sh
echo "hello from $(floe --version >/dev/null && echo floe)"
```
<!-- test: output -->
```text
hello from ...
```
"""
# (what is planted, a README that must fail, what the failure must say)
PLANTED_FAIL = [
    ('a failing command', '<!-- test: planted -->\n```sh\nfloe scan nosuch.table\necho after\n```\n',
     'README.md:3: floe scan nosuch.table'),
    ('output that is not printed', '<!-- test: planted -->\n```sh\necho hello\n```\n'
     '<!-- test: output -->\n```text\nhello world\n```\n', "output line 'hello world'"),
    ('a block that should fail but succeeds', '<!-- test: planted, exit 1 -->\n```sh\ntrue\n```\n',
     'exit 0, not 1'),
    ('a server that does not start', '<!-- test: planted -->\n```sh\nfloe serve --config missing.conf\n```\n',
     'server exited: floe serve --config missing.conf'),
]


def self_test():
    """The harness fails on what it should: planted problems in small READMEs."""
    fails = 0
    d = tempfile.mkdtemp(prefix='floe-readme-planted.')
    try:
        def write(text):
            p = os.path.join(d, 'README.md')
            with open(p, 'w') as f:
                f.write(text)
            return p
        real = open(os.path.join(SRC, 'README.md'), encoding='utf-8').read()
        for what, text, expect in [
                ('an unmarked sh block', real + '\n```sh\nfloe gen\n```\n', 'an unmarked sh block'),
                ('a block without a language', real + '\n```\nfloe gen\n```\n', 'without a language'),
                ('a reasonless exclusion', real + '\n<!-- not tested: -->\n```sh\nfloe gen\n```\n', 'needs a reason'),
                ('a SUBST literal gone from the README', real.replace('--bytes 1GB', '--bytes 2GB'), "'--bytes 1GB' is not in"),
                ('a SETUP line gone from the README', real.replace('floe snapshots cherrypick', 'floe snapshots cherry-pick'),
                 "no line starting 'floe snapshots cherrypick'")]:
            got = check(write(text))
            if not any(expect in p for p in got):
                print(f'readme_examples: FAIL: self-test: {what} is not reported ({got})', file=sys.stderr)
                fails += 1
        got = check_help(write('<!-- test: planted -->\n```sh\nfloe nosuch thing\n```\n'))
        if not any('floe nosuch thing --help' in p for p in got):
            print(f'readme_examples: FAIL: self-test: a command without --help is not reported ({got})',
                  file=sys.stderr)
            fails += 1
        rc, out = run(write(PLANTED_PASS), capture=True)
        if rc != 0:
            print(f'readme_examples: FAIL: self-test: the passing README fails:\n{out}', file=sys.stderr)
            fails += 1
        for what, text, expect in PLANTED_FAIL:
            if 'floe serve' in text and not namespaces_work():
                continue  # skipped without the namespaces
            rc, out = run(write(text), capture=True)
            if rc != 1 or expect not in out or (what == 'a failing command' and '\nafter' in out):
                print(f'readme_examples: FAIL: self-test: {what}: exit {rc}, want 1 and {expect!r}:\n{out}',
                      file=sys.stderr)
                fails += 1
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return fails


def main(argv):
    if len(argv) > 1 and argv[1] == '--inner':
        return inner(argv[2], argv[3] == '1', argv[4:])
    args = argv[1:]
    if not os.access(FLOE, os.X_OK):
        print(f'readme_examples: FAIL: no floe at {FLOE}', file=sys.stderr)
        return 1
    if not os.path.isfile(os.path.join(CONFORMANCE, 'parquet-testing', 'data', 'alltypes_plain.parquet')):
        print(f'readme_examples: FAIL: no conformance files in {CONFORMANCE}', file=sys.stderr)
        return 1
    if args and args[0] == '--self-test':
        fails = self_test()
        print(f'readme_examples: self-test {"FAIL" if fails else "ok"}')
        return 1 if fails else 0
    readme = args.pop(0) if args and not args[0].startswith('-') else os.path.join(SRC, 'README.md')
    problems = check(readme)
    if problems:
        for p in problems:
            print(f'readme_examples: FAIL: {p}', file=sys.stderr)
        return 1
    blocks, _ = parse(readme)
    shell = [b for b in blocks if b.info in SHELL_INFO]
    ran = [b for b in shell if b.scenario]
    print(f'readme_examples: {len(shell)} sh blocks: {len(ran)} run in {len(scenarios(blocks))} '
          f'scenarios, {len(shell) - len(ran)} not tested:')
    for b in shell:
        if b.why is not None:
            print(f'  README.md:{b.line}: {b.why}')
    problems = check_help(readme)
    for p in problems:
        print(f'readme_examples: FAIL: {p}', file=sys.stderr)
    rc = run(readme, args)[0]
    return 1 if problems else rc


if __name__ == '__main__':
    sys.exit(main(sys.argv))
