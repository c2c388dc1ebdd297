#!/usr/bin/env python3
"""The baseline wxdb is measured against: what a competent user would write with Python's `json`
and `sqlite3` modules instead of installing wxdb.

It creates the same schema (it executes Migrations/*.sql), uses the same pragmas as wxdb (WAL,
synchronous=NORMAL, foreign keys on), and stores the same rows per response: a forecast_runs row
(or none when the content equals the location's latest run), the hourly and daily rows with
executemany, a fetch_log row, and the response's past hours as `analysis` observations (upsert).
All files of one invocation go in one transaction, like `wxdb import`.

    bench-baseline.py DB add-location NAME LAT LON TIMEZONE
    bench-baseline.py DB import --location NAME --fetched-at UNIX FILE...
"""
import glob
import hashlib
import json
import os
import sqlite3
import sys
import time

HOURLY = ["temperature_2m", "relative_humidity_2m", "dew_point_2m", "apparent_temperature",
          "precipitation_probability", "precipitation", "weather_code", "cloud_cover",
          "pressure_msl", "wind_speed_10m", "wind_direction_10m", "wind_gusts_10m"]
DAILY = ["weather_code", "temperature_2m_max", "temperature_2m_min", "precipitation_sum",
         "precipitation_probability_max", "wind_speed_10m_max", "sunrise", "sunset"]
METRIC = {"°C", "%", "mm", "hPa", "km/h", "°", "wmo code", "unixtime", "iso8601"}

HOURLY_SQL = "INSERT INTO hourly_forecasts (run_id, valid_time, %s) VALUES (?, ?%s)" % (
    ", ".join(HOURLY), ", ?" * len(HOURLY))
DAILY_SQL = "INSERT INTO daily_forecasts (run_id, date, %s) VALUES (?, ?%s)" % (
    ", ".join(DAILY), ", ?" * len(DAILY))
OBS_SQL = ("INSERT INTO observations (location_id, source, time, %s, recorded_at) VALUES (?, 'analysis', ?%s, ?) "
           "ON CONFLICT (location_id, source, time) DO UPDATE SET %s, recorded_at = excluded.recorded_at "
           "WHERE excluded.recorded_at >= observations.recorded_at") % (
    ", ".join(HOURLY), ", ?" * len(HOURLY), ", ".join("%s = excluded.%s" % (n, n) for n in HOURLY))


def connect(path):
    migrations = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Migrations", "*.sql")))
    fresh = not os.path.exists(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    if fresh:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("BEGIN")
        for m in migrations:
            with open(m) as f:
                for statement in split_sql(f.read()):
                    db.execute(statement)
        db.execute("COMMIT")
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def split_sql(text):
    """Statements of a migration file (executescript would commit our transaction)."""
    out, buf = [], []
    for line in text.splitlines():
        if line.strip().startswith("--"):
            continue
        buf.append(line)
        if sqlite3.complete_statement("\n".join(buf)):
            out.append("\n".join(buf))
            buf = []
    return out


def local_date(t, offset):
    return time.strftime("%Y-%m-%d", time.gmtime(t + offset))


def store(db, loc_id, model, path, fetched_at):
    with open(path, "rb") as f:
        doc = json.load(f)
    if doc.get("error"):
        raise SystemExit("%s: Open-Meteo error: %s" % (path, doc.get("reason")))
    offset = int(doc["utc_offset_seconds"])
    h, d = doc.get("hourly") or {}, doc.get("daily") or {}
    for units in (doc.get("hourly_units") or {}, doc.get("daily_units") or {}):
        for k, u in units.items():
            if k != "time" and u not in METRIC:
                raise SystemExit("%s: unit %s of %s is not metric" % (path, u, k))
    times = h.get("time", [])
    hcols = [h.get(n) or [None] * len(times) for n in HOURLY]
    dtimes = d.get("time", [])
    dates = [local_date(t, offset) for t in dtimes]
    dcols = [d.get(n) or [None] * len(dtimes) for n in DAILY]
    lat, lon, elev = doc["latitude"], doc["longitude"], doc.get("elevation")
    digest = hashlib.blake2b(repr((lat, lon, elev, times, hcols, dates, dcols)).encode(), digest_size=8).digest()
    content_hash = int.from_bytes(digest, "little", signed=True)

    latest = db.execute("SELECT id, content_hash, fetched_at FROM forecast_runs WHERE location_id = ? AND model = ? "
                        "ORDER BY fetched_at DESC, id DESC LIMIT 1", (loc_id, model)).fetchone()
    if latest and latest[1] == content_hash:
        run_id, outcome = latest[0], "repeated"
        if fetched_at < latest[2]:
            db.execute("UPDATE forecast_runs SET fetched_at = ?, issued_at = CASE issued_at_source WHEN 'first_fetch' "
                       "THEN ? ELSE issued_at END WHERE id = ?", (fetched_at, fetched_at, run_id))
    else:
        outcome = "stored"
        cur = db.execute(
            "INSERT INTO forecast_runs (location_id, model, issued_at, issued_at_source, fetched_at, grid_latitude, "
            "grid_longitude, grid_elevation, utc_offset_seconds, timezone, content_hash, first_valid_time, "
            "last_valid_time, hour_count, day_count) VALUES (?, ?, ?, 'first_fetch', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (loc_id, model, fetched_at, fetched_at, lat, lon, elev, offset, doc.get("timezone", "GMT"), content_hash,
             min(times) if times else None, max(times) if times else None, len(times), len(dtimes)))
        run_id = cur.lastrowid
        db.executemany(HOURLY_SQL, [(run_id, t, *v) for t, *v in zip(times, *hcols)])
        db.executemany(DAILY_SQL, [(run_id, t, *v) for t, *v in zip(dates, *dcols)])
    db.execute("INSERT INTO fetch_log (attempted_at, location_id, model, origin, outcome, run_id, request) "
               "VALUES (?, ?, ?, 'import', ?, ?, ?)", (fetched_at, loc_id, model, outcome, run_id, path))
    db.executemany(OBS_SQL, [(loc_id, t, *v, fetched_at) for t, *v in zip(times, *hcols)
                             if t <= fetched_at and any(x is not None for x in v)])


def main(argv):
    db = connect(argv[0])
    if argv[1] == "add-location":
        name, lat, lon, tz = argv[2:6]
        db.execute("INSERT INTO locations (name, latitude, longitude, timezone, created_at) VALUES (?, ?, ?, ?, ?)",
                   (name, float(lat), float(lon), tz, int(time.time())))
        return
    assert argv[1] == "import"
    args = argv[2:]
    location = args[args.index("--location") + 1]
    fetched_at = int(args[args.index("--fetched-at") + 1])
    files = [a for i, a in enumerate(args) if not a.startswith("--") and (i == 0 or args[i - 1] not in ("--location", "--fetched-at"))]
    row = db.execute("SELECT id, models FROM locations WHERE name = ?", (location,)).fetchone()
    if row is None:
        raise SystemExit("no location %s" % location)
    loc_id, model = row[0], row[1].split(",")[0]
    db.execute("BEGIN IMMEDIATE")
    for path in files:
        store(db, loc_id, model, path, fetched_at)
    db.execute("COMMIT")


if __name__ == "__main__":
    main(sys.argv[1:])
