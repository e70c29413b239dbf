# tests/lib/pg.sh - a throwaway PostgreSQL server for tests. Source it, then:
#
#   pg_start || exit $?     # 77 = PostgreSQL's server binaries are not installed (skip)
#   ... $FLOE_PG_URI ...    # postgresql://floe:<password>@127.0.0.1:<port>/floe_test
#   pg_sql 'SELECT 1'       # psql as the superuser, unaligned tuples only
#   pg_psql -c '\d t'       # psql as the superuser, normal output
#   pg_crash; pg_resume     # stop it as a crash would (immediate), start it again on
#                           # the same port (outage tests)
#
# The server comes from Debian's package (apt-get install postgresql; scripts/setup
# --test installs it): initdb into a fresh temporary folder, listening only on 127.0.0.1
# on a free port (and a unix socket inside that folder), password authentication over
# TCP, fsync off (the tests are about logic, not durability). PostgreSQL refuses to run
# as root: as root the server runs as the system user floe-test (created when missing).
# pg_stop (installed as an EXIT trap by pg_start, chained after any trap already set)
# stops it and removes the folder.

pg_bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

pg_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# pg_start_test NAME: pg_start for a test script: exit 77 (ctest's skip) without
# PostgreSQL's server binaries, 1 when the server does not start.
pg_start_test() {
  local rc=0
  pg_start || rc=$?
  if [ $rc = 77 ]; then echo "$1: SKIPPED (no PostgreSQL server binaries)"; exit 77; fi
  [ $rc = 0 ] || { echo "$1: could not start PostgreSQL" >&2; exit 1; }
}

pg_start() {
  PG_BIN=$(pg_bindir) || { echo "skip: no PostgreSQL server binaries (apt-get install -y postgresql)"; return 77; }
  PG_TMP=$(mktemp -d /tmp/floe-pg.XXXXXX)
  chmod 755 "$PG_TMP"
  PG_RUN=()
  if [ "$(id -u)" = 0 ]; then
    if ! id floe-test >/dev/null 2>&1; then
      useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin floe-test
    fi
    chown floe-test "$PG_TMP"
    PG_RUN=(runuser -u floe-test --)
  fi
  PG_PASSWORD="pw-$RANDOM$RANDOM"
  printf '%s\n' "$PG_PASSWORD" > "$PG_TMP/pwfile"
  [ "$(id -u)" = 0 ] && chown floe-test "$PG_TMP/pwfile"
  "${PG_RUN[@]}" "$PG_BIN/initdb" -D "$PG_TMP/data" -U floe --pwfile="$PG_TMP/pwfile" \
    --auth-host=scram-sha-256 --auth-local=trust -E UTF8 --locale=C --no-sync \
    > "$PG_TMP/initdb.log" 2>&1 || { cat "$PG_TMP/initdb.log"; return 1; }
  local try
  for try in 1 2 3; do
    PG_PORT=$(pg_free_port)
    pg_ctl_start && break
    PG_PORT=
  done
  [ -n "$PG_PORT" ] || { cat "$PG_TMP/pg_ctl.log" "$PG_TMP/server.log" 2>/dev/null; return 1; }
  PG_PREV_TRAP=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
  trap 'pg_stop; eval "$PG_PREV_TRAP"' EXIT
  "${PG_RUN[@]}" "$PG_BIN/createdb" -h "$PG_TMP" -p "$PG_PORT" -U floe floe_test || return 1
  export FLOE_PG_URI="postgresql://floe:$PG_PASSWORD@127.0.0.1:$PG_PORT/floe_test"
  export PG_PORT PG_TMP PG_BIN
}

pg_ctl_start() {
  "${PG_RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_TMP -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60" \
    start > "$PG_TMP/pg_ctl.log" 2>&1
}

# Stops the server at once (open connections are cut, as in a crash); pg_resume starts
# it again on the same port with the same data.
pg_crash() {
  "${PG_RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m immediate -w stop > /dev/null 2>&1
}
pg_resume() {
  pg_ctl_start || { cat "$PG_TMP/pg_ctl.log" >&2; return 1; }
}

# psql through the unix socket (trust), as the superuser floe, on floe_test.
pg_sql() {
  "${PG_RUN[@]}" "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$PG_TMP" -p "$PG_PORT" -U floe \
    -d floe_test -c "$1"
}

# psql as the superuser on floe_test with its normal (aligned) output; arguments passed on.
pg_psql() {
  "${PG_RUN[@]}" "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -h "$PG_TMP" -p "$PG_PORT" -U floe \
    -d floe_test "$@"
}

pg_stop() {
  [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP" ] || return 0
  "${PG_RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m immediate -w stop > /dev/null 2>&1 || true
  rm -rf "$PG_TMP"
  PG_TMP=
}
