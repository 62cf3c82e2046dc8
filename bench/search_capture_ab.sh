#!/usr/bin/env bash
# What the search index costs captures at scale: alternating rounds of wrk on new
# working notes (bench/wrk/working_notes.lua, c=16) against copies of one database
# of SA_SOURCES Sources that differ only in their search indexes
# (docs/performance.md, "Search"), one server per copy, started as production
# starts it (python -m powercontext.serve).
#
# Arms (SA_ARMS, default "none trigram two"):
#   none     no search index
#   trigram  the trigram index alone, as migration sources.0014 leaves it
#   two      the trigram index and the words (simple tsvector) index of
#            sources.0012, the design before 0014, built here for comparison
# The Sources are seeded into a database without the search indexes; each arm is
# a CREATE DATABASE ... TEMPLATE copy with its indexes then built. Each round runs
# every arm once, in every order of the arms in turn, so a drift in the machine's
# load falls on every arm alike. Per run: requests/s and the CPU of the PostgreSQL
# backends serving that copy (/proc), per capture. A round waits for a quiet
# machine and is run again when other work took more than SA_OTHER_MAX cores
# beside one of its runs (the machine's busy time less the arm's server, its
# backends and PostgreSQL's background processes; wrk itself is about 0.1). The
# summary gives, per arm, the median of each round's ratio to the first arm named
# in SA_ARMS.
#
# Knobs: SA_SOURCES (1000000), SA_ROUNDS (8), SA_SECONDS (12), SA_WARMUP (3),
# SA_WORKERS (3), SA_THREADS (3), SA_PORT_BASE (18610), SA_PG
# (postgres://postgres@127.0.0.1:5432), SA_REDIS_URL (redis://127.0.0.1:6379/13),
# SA_OTHER_MAX (0.3), SA_QUIET_MAX (0.2, cores busy before a round may start),
# SA_KEEP_SEED=1 reuses the seeded template database of an earlier run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SOURCES=${SA_SOURCES:-1000000}
ROUNDS=${SA_ROUNDS:-8}
SECONDS_PER_RUN=${SA_SECONDS:-12}
WARMUP=${SA_WARMUP:-3}
ARMS=(${SA_ARMS:-none trigram two})
PORT_BASE=${SA_PORT_BASE:-18610}
PG=${SA_PG:-postgres://postgres@127.0.0.1:5432}
REDIS_URL=${SA_REDIS_URL:-redis://127.0.0.1:6379/13}
OTHER_MAX=${SA_OTHER_MAX:-0.3}
QUIET_MAX=${SA_QUIET_MAX:-0.2}
SEED_DB=pc_search_ab_seed
RUN=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$ROOT/var/search-ab/$RUN
mkdir -p "$OUT"
say() { echo ">>> $(date -u +%H:%M:%S) $*" >&2; }
sql() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

environment() {  # environment DB: the server's environment for one copy
  echo env -i PATH=/usr/bin:/bin HOME="$OUT" LANG=C.UTF-8 POWERCONTEXT_ENV_FILE= \
    DJANGO_SETTINGS_MODULE=powercontext.settings.production \
    DJANGO_SECURE_SSL_REDIRECT=false DJANGO_ALLOWED_HOSTS=127.0.0.1 \
    DJANGO_SECRET_KEY="$SECRET" DATABASE_URL="$PG/$1" DJANGO_STATIC_ROOT="$OUT/static" \
    POWERCONTEXT_CACHE_URL="$REDIS_URL" POWERCONTEXT_RATE_LIMIT_WRITE=1000000/s \
    POWERCONTEXT_RATE_LIMIT_READ=1000000/s POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES=30/min \
    POWERCONTEXT_WORKERS="${SA_WORKERS:-3}" POWERCONTEXT_THREADS="${SA_THREADS:-3}"
}
SECRET=$("$ROOT/.venv/bin/python" -c 'import secrets; print(secrets.token_urlsafe(50))')
WORDS_INDEX=$("$ROOT/.venv/bin/python" -c '
import importlib
print(importlib.import_module("sources.migrations.0014_words_through_trigrams").WORDS_INDEX)')
TRIGRAM_INDEX=$("$ROOT/.venv/bin/python" -c '
import importlib
print(importlib.import_module("sources.migrations.0012_search").TRIGRAM_INDEX)')

if [ "${SA_KEEP_SEED:-}" != 1 ] || [ -z "$(sql "$PG/postgres" -c "SELECT 1 FROM pg_database WHERE datname = '$SEED_DB'")" ]; then
  say "seeding $SOURCES Sources into $SEED_DB (migrated, search index dropped)"
  sql "$PG/postgres" -c "DROP DATABASE IF EXISTS $SEED_DB WITH (FORCE)" -c "CREATE DATABASE $SEED_DB"
  $(environment $SEED_DB) "$ROOT/.venv/bin/python" manage.py migrate --noinput -v 0
  sql "$PG/$SEED_DB" -c "DROP INDEX sources_source_trigram_idx"
  start=$(date +%s)
  $(environment $SEED_DB) "$ROOT/.venv/bin/python" manage.py seed_sources "$SOURCES" \
    --create-scope "search bench" --no-progress >/dev/null
  say "seeded in $(( $(date +%s) - start )) s"
  sql "$PG/$SEED_DB" -c "VACUUM ANALYZE"
fi
$(environment $SEED_DB) "$ROOT/.venv/bin/python" manage.py collectstatic --noinput -v 0
TOKEN=$($(environment $SEED_DB) "$ROOT/.venv/bin/python" manage.py createtoken \
  --name "search-ab-$RUN" --grant '*:admin' 2>/dev/null | tail -n 1)

declare -A PORT SCOPE DB SERVER
i=0
for arm in "${ARMS[@]}"; do
  DB[$arm]=pc_search_ab_$arm
  sql "$PG/postgres" -c "DROP DATABASE IF EXISTS ${DB[$arm]} WITH (FORCE)" \
    -c "CREATE DATABASE ${DB[$arm]} TEMPLATE $SEED_DB"
  indexes=()
  case $arm in
    trigram) indexes=("$TRIGRAM_INDEX") ;;
    two) indexes=("$TRIGRAM_INDEX" "$WORDS_INDEX") ;;
  esac
  for index in "${indexes[@]}"; do
    start=$(date +%s.%N)
    sql "$PG/${DB[$arm]}" -c "SET maintenance_work_mem = '256MB'" -c "$index"
    say "$arm: built in $(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)") s: ${index:0:60}..."
  done
  sql "$PG/${DB[$arm]}" -c "VACUUM ANALYZE sources_contentsource"
  PORT[$arm]=$((PORT_BASE + i)); i=$((i + 1))
  $(environment "${DB[$arm]}") POWERCONTEXT_BIND="127.0.0.1:${PORT[$arm]}" \
    "$ROOT/.venv/bin/python" -m powercontext.serve \
    >"$OUT/$arm.log" 2>&1 &
  PIDS+=($!)
  SERVER[$arm]=$!
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORT[$arm]}/health/ready")" = 200 ] && break
    sleep 0.5
  done
  SCOPE[$arm]=$(curl -s -X POST "http://127.0.0.1:${PORT[$arm]}/v1/scopes" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d "{\"title\": \"search ab $arm\", \"summary\": \"index cost\", \"idempotency_key\": \"sa-$RUN-$arm\"}" |
    "$ROOT/.venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["scope_id"])')
  say "$arm on port ${PORT[$arm]} (database ${DB[$arm]})"
done

cpu_snapshot() {  # cpu_snapshot ARM: "machine_busy server backends background" (s)
  # The machine and the server's process tree as bench/procstats.py counts them;
  # backends: the client backends connected to the arm's database; background:
  # PostgreSQL's own processes (WAL writer, checkpointer, autovacuum), which work
  # for whichever arm is running.
  local backends background
  backends=$(sql "$PG/postgres" -c "SELECT pid FROM pg_stat_activity
    WHERE datname = '${DB[$1]}' AND backend_type = 'client backend'" | tr '\n' ,)
  background=$(sql "$PG/postgres" -c "SELECT pid FROM pg_stat_activity
    WHERE backend_type <> 'client backend'" | tr '\n' ,)
  PYTHONPATH="$ROOT/bench" "$ROOT/.venv/bin/python" - "${SERVER[$1]}" "$backends" "$background" <<'PY'
import sys
from pathlib import Path
from procstats import CLK_TCK, cpu_snapshot
def cpu(pids):
    total = 0
    for pid in filter(None, pids.split(",")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK
snapshot = cpu_snapshot(int(sys.argv[1]))
print(snapshot["busy"] / CLK_TCK, snapshot["server"] / CLK_TCK, cpu(sys.argv[2]), cpu(sys.argv[3]))
PY
}

quiet() {  # quiet: succeeds when the machine used at most SA_QUIET_MAX cores over 2 s
  PYTHONPATH="$ROOT/bench" "$ROOT/.venv/bin/python" -c '
import sys
from procstats import wait_for_quiet
sys.exit(0 if wait_for_quiet(float(sys.argv[1]), 0) <= float(sys.argv[1]) else 1)' "$QUIET_MAX"
}

measure() {  # measure ARM ROUND: one wrk run; prints "rps pg_ms_per_capture other_cores"
  local arm=$1 env=(BENCH_WRK_DIR="$ROOT/bench/wrk" BENCH_SCOPE="${SCOPE[$1]}"
    BENCH_TOKEN="$TOKEN" BENCH_EXPECT=202)
  env "${env[@]}" BENCH_NONCE="$RUN-$arm-$2w" wrk -t1 -c16 -d"${WARMUP}s" \
    -s "$ROOT/bench/wrk/working_notes.lua" "http://127.0.0.1:${PORT[$arm]}" >/dev/null
  local before after
  before=$(cpu_snapshot "$arm")
  env "${env[@]}" BENCH_NONCE="$RUN-$arm-$2" wrk -t1 -c16 -d"${SECONDS_PER_RUN}s" \
    -s "$ROOT/bench/wrk/working_notes.lua" "http://127.0.0.1:${PORT[$arm]}" >"$OUT/wrk.out"
  after=$(cpu_snapshot "$arm")
  "$ROOT/.venv/bin/python" - "$OUT/wrk.out" $before $after <<'PY'
import json, sys
busy0, server0, pg0, bg0, busy1, server1, pg1, bg1 = map(float, sys.argv[2:])
for line in open(sys.argv[1]):
    if line.startswith("BENCH_JSON "):
        result = json.loads(line[len("BENCH_JSON "):])
        bad = {k: v for k, v in result["statuses"].items() if k != "202"}
        errors = {k: v for k, v in result["errors"].items() if v}
        assert not bad and not errors, result
        seconds = result["duration_us"] / 1e6
        # What the machine did besides this arm's server and PostgreSQL: wrk
        # itself (about a tenth of a core here), and any other work.
        ours = (server1 - server0) + (pg1 - pg0) + (bg1 - bg0)
        other = ((busy1 - busy0) - ours) / seconds
        print(result["requests"] / seconds, (pg1 - pg0) * 1000 / result["requests"], other)
PY
}

printf 'round\tarm\trps\tpg_ms_per_capture\tother_cores\n' >"$OUT/runs.tsv"
round=1
while [ "$round" -le "$ROUNDS" ]; do
  # Every order of the arms in turn (for three arms, all six in six rounds), so
  # that each arm follows each other arm as often: what one run leaves behind (a
  # checkpoint, the operating system's caches) falls on every arm alike.
  read -r -a order < <("$ROOT/.venv/bin/python" -c '
import itertools, sys
orders = list(itertools.permutations(sys.argv[2:]))
print(" ".join(orders[(int(sys.argv[1]) - 1) % len(orders)]))' "$round" "${ARMS[@]}")
  # A round starts on a quiet machine, and is run again if other work used more
  # than SA_OTHER_MAX cores beside any of its runs (wrk itself uses about 0.1).
  until quiet; do say "waiting for a quiet machine"; sleep 10; done
  lines=() disturbed=""
  for arm in "${order[@]}"; do
    read -r rps pg other < <(measure "$arm" "$round")
    lines+=("$(printf '%s\t%s\t%s\t%s\t%s' "$round" "$arm" "$rps" "$pg" "$other")")
    say "round $round $arm: $(printf '%.1f' "$rps")/s, PostgreSQL $(printf '%.3f' "$pg") ms/capture, other work $(printf '%.2f' "$other") cores"
    if awk -v o="$other" -v max="$OTHER_MAX" 'BEGIN {exit !(o > max)}'; then disturbed=$arm; fi
  done
  if [ -n "$disturbed" ]; then
    say "round $round disturbed by other work (beside $disturbed): run again"
    printf '%s\n' "${lines[@]}" >>"$OUT/disturbed.tsv"
    continue
  fi
  printf '%s\n' "${lines[@]}" >>"$OUT/runs.tsv"
  round=$((round + 1))
done
"$ROOT/.venv/bin/python" - "$OUT/runs.tsv" "${ARMS[@]}" <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys
from collections import defaultdict
runs = defaultdict(dict)
arms = sys.argv[2:]
for row in csv.DictReader(open(sys.argv[1]), delimiter="\t"):
    runs[row["arm"]][int(row["round"])] = (float(row["rps"]), float(row["pg_ms_per_capture"]))
first = arms[0]
for arm in arms:
    rps = [v[0] for v in runs[arm].values()]
    pg = [v[1] for v in runs[arm].values()]
    ratios = [runs[arm][r][0] / runs[first][r][0] for r in runs[arm] if r in runs[first]]
    print(f"{arm:8} req/s median {statistics.median(rps):7.1f} ({min(rps):.1f}-{max(rps):.1f})"
          f"  PostgreSQL ms/capture {statistics.median(pg):.3f}"
          f"  ratio to {first} per round: median {statistics.median(ratios):.2f}"
          f" [{' '.join(f'{x:.2f}' for x in ratios)}]")
PY
