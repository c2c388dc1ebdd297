#!/usr/bin/env bash
# The offline demo: builds wxdb, starts the local replay server (recorded Open-Meteo responses and
# synthetic forecasts on 127.0.0.1), backfills a new location's last 30 days of runs (Single Runs
# API) and observations and scores them at once, adds two more locations, ingests over HTTP, imports five days of
# generated hourly runs with their fetch times plus observations, and prints a verification table,
# a forecast-evolution table and a CSV. Everything goes to a temporary database it names; your own
# wxdb database is never touched.
#
#   Scripts/demo.sh          runs the demo, then stops the server (the temporary folder stays)
#   Scripts/demo.sh --keep   leaves the server running and writes DIR/env, so you can go on exploring
#                            offline: source DIR/env, then any wxdb command (kill $WXDB_REPLAY_PID to stop)
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "Error: unknown argument '$arg' (Scripts/demo.sh [--keep])" >&2; exit 64 ;;
  esac
done

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if { [ ! -f /usr/include/sqlite3.h ] && ! pkg-config --exists sqlite3 2>/dev/null; } \
  || { ! pkg-config --exists libcurl 2>/dev/null && [ ! -f /usr/include/x86_64-linux-gnu/curl/curl.h ] \
    && [ ! -f /usr/include/curl/curl.h ]; } \
  || { [ ! -f /usr/include/postgresql/libpq-fe.h ] && [ ! -f /usr/include/libpq-fe.h ]; }; then
  if [ "$(id -u)" = 0 ]; then
    say "Installing libsqlite3-dev libcurl4-openssl-dev libpq-dev"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev libcurl4-openssl-dev libpq-dev pkg-config
  else
    echo "Error: wxdb needs SQLite's, libcurl's and libpq's development files: sudo apt-get install -y libsqlite3-dev libcurl4-openssl-dev libpq-dev" >&2
    exit 1
  fi
fi

say "Building wxdb (release)"
swift build -c release --product wxdb 2>&1 | tail -1
swift build -c release --product wxdb-replay 2>&1 | tail -1
bin=$(swift build -c release --show-bin-path)
wxdb() { "$bin/wxdb" "$@"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/wxdb-demo.XXXXXX")
export WXDB_DB="$work/wxdb-demo.sqlite"
unset WXDB_API_KEY

say "Starting the replay server (no internet needed)"
# --env starts it in the background and prints the exports that point wxdb at it.
"$bin/wxdb-replay" --env --fixtures Fixtures > "$work/env" 2> "$work/replay.log" ||
  { echo "Error: the replay server did not start; see $work/replay.log" >&2; exit 1; }
. "$work/env"
printf 'export WXDB_DB=%q\n' "$WXDB_DB" >> "$work/env"
if [ "$keep" = 0 ]; then trap 'kill "$WXDB_REPLAY_PID" 2>/dev/null || true' EXIT; fi
base=${WXDB_FORECAST_URL%/v1/forecast}
echo "replay server: $base"
echo "demo database: $WXDB_DB"

say "A new location with two models, and its last 30 days of forecast runs and observed weather (backfill)"
wxdb locations add Hamburg --lat 53.55 --lon 9.99 --timezone Europe/Berlin --models icon_seamless,ecmwf_ifs025
wxdb backfill --location Hamburg --days 30

say "Scores on the first day: each model by lead time (query verify --by model, first lines)"
wxdb query verify --location Hamburg --by model | head -n 12

say "Adding two more locations (one by name, through the geocoding API)"
wxdb locations add Berlin --lat 52.52 --lon 13.41 --timezone Europe/Berlin
wxdb locations add Hollywood
wxdb locations list

say "Ingesting over HTTP (one request per model list), then again: the same content is recorded, not stored twice"
wxdb ingest
wxdb ingest

say "Importing five days of generated hourly runs (every 3 h, with their fetch times) and station observations"
"$bin/wxdb-replay" generate --out "$work/history" --lat 52.52 --lon 13.41 --timezone Europe/Berlin \
  --start 2026-11-20T00:00Z --days 5 --every 3
count=0
while read -r file fetched; do
  wxdb --quiet import "$work/history/$file" --location Berlin --fetched-at "$fetched"
  count=$((count + 1))
done < "$work/history/runs.txt"
echo "imported $count responses"
wxdb observe import "$work/history/observations.csv" --location Berlin --source station

say "Runs stored for Berlin (first lines)"
wxdb query runs --location Berlin --from 2026-11-20 --to 2026-11-21

say "How good were the forecasts? (query verify)"
wxdb query verify --location Berlin --var temperature_2m --source station

say "How the forecast for 2026-11-24 12:00 (Berlin time) converged, run after run (query forecast)"
wxdb query forecast --location Berlin --at 2026-11-24T12:00 --source station

say "Forecast/observed pairs as CSV (export pairs)"
wxdb export pairs --location Berlin --source station --output "$work/berlin-pairs.csv"
head -n 4 "$work/berlin-pairs.csv"
echo "... $(($(wc -l < "$work/berlin-pairs.csv") - 1)) pairs in $work/berlin-pairs.csv"

say "Charts: one self-contained HTML page (wxdb report), and one chart as SVG (--format svg)"
wxdb report --location Hamburg --output "$work/hamburg-report.html"
wxdb query verify --location Hamburg --by model --format svg > "$work/hamburg-verify.svg"
echo "open $work/hamburg-report.html in a browser (no network needed); $work/hamburg-verify.svg is the first chart alone"

say "Health"
wxdb stats --days 1 | head -n 12

say "Done"
echo "Everything is in $work (database: $WXDB_DB)."
if [ "$keep" = 1 ]; then
  echo "The replay server is still running (pid $WXDB_REPLAY_PID). To explore the demo database offline:"
  echo "  source $work/env     # sets WXDB_DB and the WXDB_*_URL variables"
  echo "  wxdb query verify --location Hamburg --by model"
  echo "When done: kill \$WXDB_REPLAY_PID && rm -r '$work'"
else
  echo "Remove it with: rm -r '$work'   (Scripts/demo.sh --keep leaves the server running to explore)"
fi
