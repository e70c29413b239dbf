# bench/lib/common.sh - shared helpers for the benchmark scripts (sourced).
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC_DIR=$(cd "$BENCH_DIR/.." && pwd)
OUT_DIR=${BENCH_OUT:-$BENCH_DIR/out}
mkdir -p "$OUT_DIR"
FLOE=${FLOE:-$SRC_DIR/build/floe}
RESULTS=$BENCH_DIR/RESULTS.md

# cc_floe OUT SRC...: a C program against the libfloe.a next to $FLOE, with floe's Debian
# libraries (the list in CMakeLists.txt and scripts/floe.pc.in; ICU when the build found
# it, as CMakeLists.txt does: a libfloe.a built with ICU needs it)
cc_floe() {
  local out=$1; shift
  local build; build=$(cd "$(dirname "$FLOE")" && pwd)
  local icu=""
  if pkg-config --exists icu-uc; then icu=$(pkg-config --libs icu-uc); fi
  cc -O2 -std=c11 -D_GNU_SOURCE -I"$SRC_DIR/include" -o "$out" "$@" "$build/libfloe.a" \
    $(pkg-config --libs zlib libzstd liblz4 libbrotlienc libbrotlidec jansson sqlite3 libcurl \
      libmicrohttpd libpq libcrypto libdeflate rdkafka) $icu -lsnappy -lpthread -lm
}

# run_timed LOGFILE CMD... : runs CMD, appends "seconds peak_rss_kib user_s sys_s" to
# LOGFILE. On a shared machine the CPU seconds (user + sys) are the steadier measure.
# BENCH_RT=PRIO (root only): CMD runs in the real-time class (chrt -f PRIO), ahead of every
# ordinary task, so wall seconds mean what they would on an idle machine (the kernel's
# sched_rt_runtime_us still leaves others 5%). For a figure in wall seconds, such as
# threads against one thread; keep the runs short, they hold the cores while they run.
bench_rt() {
  case ${BENCH_RT:-} in
    "") ;;
    *[!0-9]*) echo "bench: BENCH_RT=$BENCH_RT is not a priority (1-99)" >&2; return 1 ;;
    *) [ "$(id -u)" = 0 ] || { echo "bench: BENCH_RT needs root (chrt -f)" >&2; return 1; }
       echo "chrt -f $BENCH_RT" ;;
  esac
}
run_timed() {
  local log=$1; shift
  local rt; rt=$(bench_rt) || return 1
  # shellcheck disable=SC2086 # rt is empty or "chrt -f N"
  /usr/bin/time -f '%e %M %U %S' -o "$log.t" $rt "$@" > "$log.out" 2> "$log.err" ||
    { echo "bench: command failed: $*" >&2; cat "$log.err" >&2; return 1; }
  cat "$log.t" >> "$log"
}

# CPU seconds (user + sys, columns 3 and 4) of each run in a run_timed log
cpu_col() { awk '{print $3 + $4}' "$1" > "$1.cpu"; echo "$1.cpu"; }

# median of the first column / of column N in a file of numbers
median() { sort -g -k"${2:-1},${2:-1}" "$1" | awk -v c="${2:-1}" '{v[NR]=$c} END {print v[int((NR+1)/2)]}'; }

# replace the section between <!-- NAME:begin --> and <!-- NAME:end --> in RESULTS.md
put_results() {
  local name=$1 body=$2
  [ -f "$RESULTS" ] || printf '# Benchmark results\n\nRun with `make bench` (or one script in bench/). Machines are shared and noisy: every figure is\nmeasured side by side with its peer, alternating runs, and the ratio is what counts.\n' > "$RESULTS"
  python3 - "$RESULTS" "$name" "$body" <<'PY'
import sys, re
path, name, body = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
block = f"{begin}\n{body.rstrip()}\n{end}"
if begin in text:
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: block, text, flags=re.S)
else:
    text = text.rstrip() + "\n\n" + block + "\n"
open(path, "w").write(text)
PY
}

machine_line() {
  echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m), $(date -u +%F)"
}

# ingest_setup DIR FLOE MAX_PENDING: bench/ingest's server in DIR: batch.ndjson (500 events,
# floe gen --seed 1), schema.json and serve.conf (warehouse DIR/wh, landing backlog cap
# MAX_PENDING, table bench.events partitioned by event_type and day(ts)).
ingest_setup() {
  local dir=$1 floe=$2 max_pending=$3
  "$floe" gen --seed 1 --count 500 -o "$dir/batch.ndjson" > /dev/null
  "$floe" gen --schema-out "$dir/schema.json" > /dev/null
  cat > "$dir/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $dir/wh
max_connections = 512
max_pending_bytes = $max_pending
[defaults]
compact_bytes = 64MB
compact_age = 30s
[table bench.events]
schema = $dir/schema.json
partition = event_type, day(ts)
CONF
}

# srv_threads_cpu PID: CPU ticks of a floe serve process by thread name: MHD-* (HTTP: parse,
# validate, compress), floe-wal, floe-seal, floe-compact (landing compaction), the rest.
# Connection threads exit with their connection: read it while the clients are connected.
srv_threads_cpu() {
  local t s c r
  for t in /proc/"$1"/task/*; do
    s=$(cat "$t/stat" 2>/dev/null) || continue
    c=${s#*(}; c=${c%%)*}; r=${s##*) }
    set -- $r
    echo "$c $(( ${12} + ${13} ))"
  done | awk '{k=$1; if (k ~ /^MHD/) k="http"; else if (k ~ /^floe-(wal|seal|compact)$/) sub(/^floe-/, "", k);
               else k="other";
               n[k]+=$2} END {printf "http=%d wal=%d seal=%d compact=%d other=%d\n",
               n["http"], n["wal"], n["seal"], n["compact"], n["other"]}'
}
