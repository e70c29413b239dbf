#!/usr/bin/env bash
# serve_signal_start.sh - a SIGHUP sent while `floe serve` starts waits for the server (a
# reload once it is up) instead of ending it by the default action (exit 129, nothing
# logged; adversary kadv25: `floe serve --config c.conf & kill -HUP $!`). The start is held
# where it first reads its configuration: the file is a FIFO, written only while floe waits
# in opening it (so each of its reads gets the text once).
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

printf '[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\n' "$tmp/wh" > "$tmp/conf.txt"
mkfifo "$tmp/serve.conf"
"$FLOE" serve --config "$tmp/serve.conf" --port-file "$tmp/port" 2>> "$tmp/server.log" &
pid=$!
# blocked opening the FIFO: the kernel waits for a writer (wait_for_partner)
in_open() { [ "$(cat "/proc/$pid/wchan" 2>/dev/null)" = wait_for_partner ]; }
wait_for 60 in_open || fail "floe serve did not come to read its configuration"
kill -HUP "$pid"
sleep 0.5
if ! kill -0 "$pid" 2>/dev/null; then
  st=0; wait "$pid" || st=$?; pid=
  fail "a SIGHUP during the start ended floe serve (exit $st)"
fi
# from now on every read of the configuration gets it (the start reads it more than once,
# the reload once more)
( while kill -0 "$pid" 2>/dev/null; do
    if in_open; then timeout 10 cp "$tmp/conf.txt" "$tmp/serve.conf" || true; fi
    sleep 0.05
  done ) &
feeder=$!
wait_for 60 '[ -s "$tmp/port" ]' || fail "the server did not start"
port=$(cat "$tmp/port")
# the SIGHUP that waited is a reload once the server is up
wait_for 30 'grep -q "configuration reloaded" "$tmp/server.log"' || fail "the waiting SIGHUP was not taken as a reload"
curl -sf "http://127.0.0.1:$port/healthz" > /dev/null || fail "/healthz after the reload"
stop_server
wait "$feeder" || true
echo "serve_signal_start: ok"
