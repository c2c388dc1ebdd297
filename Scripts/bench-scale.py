#!/usr/bin/env python3
"""The scale section of Scripts/bench: many locations in one database.

A database of N locations x 1 model x D days of hourly fetches of a model updating every 3 h is
written with SQL (one transaction, INSERT ... SELECT over small helper tables, rows in key order),
shaped like what `wxdb ingest` leaves: runs with their content hashes, 384 hourly and 16 daily rows
per run, one fetch_log row per location and hourly fetch (two in three `repeated`, the location's
own request URL, its share of the batch's API weight), `analysis` and `current` observations as
ingest keeps them and `station` observations as `observe import` would. Run ids interleave the locations, as an hourly
ingest of all of them does. Then each command is measured beside its target (issue #15).

Run through `Scripts/bench --scale` (1,000 x 30 days) or, small, inside `Scripts/bench --quick`.
"""
import datetime
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import time
import urllib.request

HOURLY = ["temperature_2m", "relative_humidity_2m", "dew_point_2m", "apparent_temperature",
          "precipitation_probability", "precipitation", "weather_code", "cloud_cover",
          "pressure_msl", "wind_speed_10m", "wind_direction_10m", "wind_gusts_10m"]
DAILY = ["weather_code", "temperature_2m_max", "temperature_2m_min", "precipitation_sum",
         "precipitation_probability_max", "wind_speed_10m_max", "sunrise", "sunset"]

# Time zones without daylight saving, so a generated history is the same in every season; each
# holds a quarter of the locations on a 0.1 degree grid (a multiple of the forecast grid) near it.
ZONES = [("Africa/Lagos", 3600, 6.4, 3.3), ("Asia/Dubai", 14400, 24.1, 54.3),
         ("Asia/Tokyo", 32400, 35.1, 139.1), ("America/Bogota", -18000, 3.9, -74.9)]
EVERY = 3            # the model updates every 3 h; fetches are hourly
HOURS, DAYS = 384, 16
SEED = 15


def location_rows(n, created_at):
    rows = []
    for i in range(n):
        name, offset, lat0, lon0 = ZONES[i % len(ZONES)]
        m = i // len(ZONES)
        lat = round(lat0 + (m % 25) * 0.1, 4)
        lon = round(lon0 + (m // 25) * 0.1, 4)
        rows.append((i + 1, "S%04d" % (i + 1), lat, lon, 20.0 + i % 300, name, created_at, offset))
    return rows


def coordinate(value):
    """As wxdb writes a coordinate into a request (ForecastRequest.coordinate)."""
    text = "%.5f" % value
    text = text.rstrip("0")
    return text[:-1] if text.endswith(".") else text


def request_url(locs):
    """The URL wxdb logs for a request about `locs` (as HTTPClient.redacted prints it)."""
    hourly = ",".join(HOURLY)
    return ("https://api.open-meteo.com/v1/forecast?latitude=%s&longitude=%s&hourly=%s&daily=%s&current=%s"
            "&models=best_match&timezone=%s&timeformat=unixtime&forecast_days=16&past_days=1"
            "&temperature_unit=celsius&wind_speed_unit=kmh&precipitation_unit=mm&elevation=%s") % (
        ",".join(coordinate(r[2]) for r in locs), ",".join(coordinate(r[3]) for r in locs), hourly, ",".join(DAILY),
        hourly, ",".join(r[5] for r in locs), ",".join(coordinate(r[4]) for r in locs))


def generate(path, n, days, end, sums_marker=True):
    """Writes the history into the wxdb database at `path` (created by `wxdb locations add` so its
    schema is wxdb's own). `end` is the first hour not fetched (a multiple of 3 h). Returns seconds."""
    started = time.perf_counter()
    t0 = end - days * 86400
    runs = days * 24 // EVERY
    fetches = days * 24
    # 3.886: Open-Meteo's weight of one location's request (32 variables x 1 model, 17 days).
    weight = round(max(1, 32 / 10 * 17 / 14), 6)
    locs = location_rows(n, t0 - 3600)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144; PRAGMA foreign_keys=OFF;")
    db.execute("BEGIN")
    db.execute("DELETE FROM locations")
    db.executemany("INSERT INTO locations (id, name, latitude, longitude, elevation, timezone, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", [r[:7] for r in locs])
    db.execute("CREATE TEMP TABLE zone (location_id INTEGER PRIMARY KEY, offset INTEGER, batch INTEGER)")
    db.executemany("INSERT INTO zone VALUES (?, ?, ?)", [(r[0], r[7], (r[0] - 1) // 100) for r in locs])
    db.execute("CREATE TEMP TABLE url (location_id INTEGER PRIMARY KEY, request TEXT)")
    db.executemany("INSERT INTO url VALUES (?, ?)", [(r[0], request_url([r])) for r in locs])
    db.execute("CREATE TEMP TABLE seq (i INTEGER PRIMARY KEY)")
    db.executemany("INSERT INTO seq VALUES (?)", [(i,) for i in range(max(HOURS, fetches + 48))])
    h = ", ".join(HOURLY)
    # Runs: k-th run of every location in turn (ids interleave the locations, as ingest does);
    # issued at its first fetch; 384 hours from local midnight of the issue day.
    db.execute(f"""
INSERT INTO forecast_runs (id, location_id, model, issued_at, issued_at_source, fetched_at, grid_latitude, grid_longitude,
    grid_elevation, utc_offset_seconds, timezone, content_hash, first_valid_time, last_valid_time, hour_count, day_count)
SELECT k.i * {n} + l.id, l.id, 'best_match', {t0} + k.i * {EVERY * 3600} + 120, 'first_fetch', {t0} + k.i * {EVERY * 3600} + 120,
    l.latitude, l.longitude, l.elevation, z.offset, l.timezone, ((k.i * {n} + l.id) * 2654435761) % 9223372036854775807,
    (({t0} + k.i * {EVERY * 3600} + 120 + z.offset) / 86400) * 86400 - z.offset,
    (({t0} + k.i * {EVERY * 3600} + 120 + z.offset) / 86400) * 86400 - z.offset + {(HOURS - 1) * 3600}, {HOURS}, {DAYS}
FROM seq k CROSS JOIN locations l CROSS JOIN zone z
WHERE k.i < {runs} AND z.location_id = l.id ORDER BY 1""")
    db.execute("INSERT INTO run_content_hashes (location_id, model, content_hash, run_id) "
               "SELECT location_id, model, content_hash, id FROM forecast_runs")
    # Hourly rows in key order (run by run, hour by hour): each insert appends to the b-tree.
    # Integer arithmetic in tenths divided by 10.0 gives the same doubles as one-decimal text and is
    # many times cheaper than round() (which formats and parses); the forecast drifts from the
    # 'truth' (TRUTH, tenths of a degree) by an error that grows with lead time.
    # Values depend on the location's zone (ZZ) and the run's number (kk), not on the location: the
    # locations of a zone hold the same weather, so their verification sums are equal and are
    # computed once per zone by wxdb (see Scale.add_sums).
    truth = ("(225 + (ZZ % 13) * 5 - 6 * abs(((T + OFF) % 86400) / 3600 - 15) + ((T / 86400 + ZZ) % 9) * 3)")
    tv = truth.replace("ZZ", "zz").replace("T", "v").replace("OFF", "off")
    db.execute(f"""
INSERT INTO hourly_forecasts (run_id, valid_time, {h})
SELECT id, v, (tv + ((kk * 7 + j * 13) % 41 - 20) * (10 + j) / 100) / 10.0,
    55 + (v / 3600 * 7 + zz) % 40, (tv - 30 - v / 3600 % 9) / 10.0, (tv - 23 + j % 7) / 10.0,
    (v / 3600 * 3 + kk) % 101, CASE WHEN (v / 3600 + zz) % 11 = 0 THEN ((kk + j) % 300) / 100.0 ELSE 0 END,
    CASE WHEN (v / 3600 + zz) % 11 = 0 THEN 61 ELSE (v / 3600 + kk) % 4 END, (v / 3600 * 17 + kk) % 101,
    (10000 + (v / 3600 * 37 + kk) % 400) / 10.0, (50 + (v / 3600 * 29 + j) % 250) / 10.0,
    (v / 3600 * 11 + kk) % 360, (90 + (v / 3600 * 31 + j) % 400) / 10.0
FROM (SELECT id, kk, zz, j, v, {tv} AS tv
      FROM (SELECT r.id AS id, (r.id - 1) / {n} AS kk, (r.location_id - 1) % {len(ZONES)} AS zz, r.utc_offset_seconds AS off,
                   s.i AS j, r.first_valid_time + s.i * 3600 AS v
            FROM forecast_runs r NOT INDEXED CROSS JOIN seq s WHERE s.i < {HOURS}))""")
    db.execute(f"""
INSERT INTO daily_forecasts (run_id, date, {", ".join(DAILY)})
SELECT r.id, date(r.first_valid_time + r.utc_offset_seconds + s.i * 86400, 'unixepoch'), ((r.id - 1) / {n} + s.i) % 4,
    (260 + (r.id - 1) / {n} % 50) / 10.0, (170 + (r.id - 1) / {n} % 40) / 10.0, (((r.id - 1) / {n} * 7 + s.i) % 500) / 100.0,
    ((r.id - 1) / {n} + s.i) % 101,
    (200 + s.i * 3 % 70) / 10.0, r.first_valid_time + s.i * 86400 + 22200, r.first_valid_time + s.i * 86400 + 65400
FROM forecast_runs r NOT INDEXED CROSS JOIN seq s WHERE s.i < {DAYS}""")
    # One row per location and hourly fetch, in the order an hourly ingest writes them.
    db.execute(f"""
INSERT INTO fetch_log (attempted_at, location_id, model, origin, outcome, http_status, duration_ms, run_id, request, api_weight)
SELECT {t0} + f.i * 3600 + 120, l.id, 'best_match', 'fetch', CASE WHEN f.i % {EVERY} = 0 THEN 'stored' ELSE 'repeated' END,
    200, 700 + (f.i * 37 + z.batch * 11) % 600, (f.i / {EVERY}) * {n} + l.id, u.request, {weight}
FROM seq f CROSS JOIN locations l CROSS JOIN zone z CROSS JOIN url u
WHERE f.i < {fetches} AND z.location_id = l.id AND u.location_id = l.id ORDER BY f.i, l.id""")
    # Observations: `analysis` (the past hours of each response: every hour up to the last fetch,
    # all 12 variables), `current` (one per fetch), and a `station` CSV's 5 variables.
    obs = ", ".join(HOURLY)
    truth = truth.replace("ZZ", "zz").replace("OFF", "off").replace("T", "t") + " + (t / 3600 * 7 + zz) % 13 - 6"
    hours = "SELECT l.id AS lid, (l.id - 1) % " + str(len(ZONES)) + " AS zz, z.offset AS off, {start} + o.i * 3600 AS t " \
            "FROM locations l CROSS JOIN zone z CROSS JOIN seq o WHERE z.location_id = l.id AND o.i < {count}"
    db.execute(f"""
INSERT INTO observations (location_id, source, time, {obs}, recorded_at)
SELECT lid, s.source, t, ({truth}) / 10.0, 50 + (t / 3600 + zz) % 45, ({truth} - 40) / 10.0, ({truth} - 15) / 10.0,
    NULL, CASE WHEN (t / 3600 + zz) % 11 = 0 THEN ((t / 3600) % 300) / 100.0 ELSE 0 END,
    CASE WHEN (t / 3600 + zz) % 11 = 0 THEN 61 ELSE (t / 3600) % 4 END, (t / 3600 * 13 + zz) % 101,
    (10050 + (t / 3600 + zz) % 200) / 10.0, (40 + t / 3600 % 180) / 10.0, (t / 3600 * 7) % 360,
    (80 + t / 3600 % 250) / 10.0, t + 120
FROM ({hours.format(start=t0 - 86400, count=fetches + 24)}) x
    CROSS JOIN (SELECT 'analysis' AS source UNION ALL SELECT 'current') s
WHERE s.source = 'analysis' OR t >= {t0}
ORDER BY lid, t, s.source""")
    db.execute(f"""
INSERT INTO observations (location_id, source, time, temperature_2m, relative_humidity_2m, precipitation, pressure_msl,
    wind_speed_10m, recorded_at)
SELECT lid, 'station', t, ({truth} + (t / 3600 * 3 + zz) % 7 - 3) / 10.0, 52 + (t / 3600 + zz) % 43,
    CASE WHEN (t / 3600 + zz) % 11 = 0 THEN ((t / 3600) % 280) / 100.0 ELSE 0 END, (10040 + (t / 3600 + zz) % 210) / 10.0,
    (35 + t / 3600 % 190) / 10.0, {end}
FROM ({hours.format(start=t0, count=fetches)}) x
ORDER BY lid, t""")
    # Rows written with SQL have no verification sums yet: where this schema keeps them, the marker
    # makes the next wxdb that opens the file add them, as after an upgrade (timed by the caller).
    if sums_marker and db.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'verification_sums_pending'").fetchone()[0]:
        db.execute("INSERT OR IGNORE INTO verification_sums_pending (id) VALUES (1)")
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    return time.perf_counter() - started


VERIFY_SQL = """
WITH p AS (
  SELECT lead_hours AS lead, forecast_temperature_2m - observed_temperature_2m AS d
  FROM forecast_observation_pairs
  WHERE location_id = %d AND source = 'station'
    AND forecast_temperature_2m IS NOT NULL AND observed_temperature_2m IS NOT NULL AND lead_hours < 384),
b AS (
  SELECT CASE WHEN lead < 6 THEN 0 WHEN lead < 12 THEN 6 WHEN lead < 24 THEN 12 ELSE CAST(lead / 24 AS INTEGER) * 24 END AS lo, d FROM p)
SELECT lo AS lead_from_h, CASE lo WHEN 0 THEN 6 WHEN 6 THEN 12 WHEN 12 THEN 24 ELSE lo + 24 END AS lead_to_h,
       count(*) AS n, avg(d) AS bias, avg(abs(d)) AS mae, sqrt(avg(d * d)) AS rmse
FROM b GROUP BY lo ORDER BY lo;
"""


def pct(values, p):
    """The p-th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-len(ordered) * p // 100) - 1))]


class Scale:
    """Builds the databases and measures; `d` is the bench driver module (measured, sql, ...)."""

    def __init__(self, bench, d, locations, days, keep=False):
        self.b, self.d = bench, d
        self.n, self.days, self.keep = locations, days, keep
        self.label = "%s locations x %d days" % (f"{locations:,}", days)
        self.wxdb = bench.wxdb
        self.replay = os.path.join(os.path.dirname(bench.wxdb), "wxdb-replay")

    def row(self, measure, ours, base="", ratio="", target="", ok=None):
        self.b.row("Scale", measure, ours, base, ratio, target, ok)
        # Each figure as soon as it is measured: a long run stopped partway still tells something.
        self.b.log("scale: %s: %s | %s | %s" % (measure, ours, base, ratio))

    def build(self, path, n, end, sums_marker=True):
        """Generates the database; returns seconds for the SQL."""
        self.d.rm_db(path)
        self.d.measured([self.wxdb, "--db", path, "--quiet", "locations", "add", "seed", "--lat", "0", "--lon", "0"])
        return generate(path, n, self.days, end, sums_marker)

    def add_sums(self, paths, end):
        """The verification sums of the generated rows, as wxdb keeps them: wxdb itself computes
        them (its first open after the marker, as after an upgrade) for one location of each zone in a
        database of its own, and they are copied to every location of that zone, whose rows hold the
        same values. Returns the run of that first open, or None where the schema keeps no sums."""
        d = self.d
        template = os.path.join(os.path.dirname(paths[0]), "scale-zones.sqlite")
        self.build(template, min(self.n, len(ZONES)), end)
        if not d.sql(template, "SELECT count(*) FROM sqlite_schema WHERE name = 'verification_sums_pending';") == "1":
            d.rm_db(template)
            return None
        rebuild = d.measured([self.wxdb, "--db", template, "--quiet", "stats"])
        info = [line.split("|") for line in d.sql(template, "SELECT name, pk FROM pragma_table_info('verification_summaries');").splitlines()]
        columns = [name for name, _ in info]
        select = ", ".join("l.id" if name == "location_id" else "s." + name for name in columns)
        key = [str(columns.index(name) + 1) for name, pk in sorted((c for c in info if c[1] != "0"), key=lambda c: int(c[1]))]
        for path in paths:
            d.sql(path, f"""ATTACH '{template}' AS z; BEGIN;
INSERT INTO main.verification_summaries ({", ".join(columns)})
SELECT {select} FROM main.locations l CROSS JOIN z.verification_summaries s WHERE s.location_id = (l.id - 1) % {len(ZONES)} + 1
ORDER BY {", ".join(key)};
COMMIT;""")
        d.rm_db(template)
        return rebuild

    def run(self):
        b, d = self.b, self.d
        work = os.path.join(b.work, "scale")
        os.makedirs(work, exist_ok=True)
        big, one = os.path.join(work, "scale-%d.sqlite" % self.n), os.path.join(work, "scale-1.sqlite")
        # The history ends at the current 3-hour model run, so the ingest cycle below continues it.
        end = int(time.time()) // (EVERY * 3600) * (EVERY * 3600)
        b.log("scale: generating %s (one transaction, INSERT ... SELECT)" % self.label)
        took = self.build(big, self.n, end, sums_marker=False)
        self.build(one, 1, end, sums_marker=False)
        b.log("scale: adding the verification sums")
        sums = self.add_sums([big, one], end)
        c, c1 = d.counts(big), d.counts(one)
        size, size1 = d.db_bytes(big), d.db_bytes(one)
        b.notes.append("Scale: %s generated with SQL in %.0f s (%s runs, %s hourly rows, %s observations, %s fetch_log rows)." % (
            self.label, took, f"{c['runs']:,}", f"{c['hours']:,}", f"{c['obs']:,}", f"{c['log']:,}"))
        if sums:
            k = min(self.n, len(ZONES))
            self.row("adding the sums of rows stored before the sums existed (upgrade), per location-month",
                     "%.1f s CPU" % (sums.cpu / k * 30 / self.days), "%d locations: %s wall, %.1f s CPU, %s" % (
                         k, d.ms(sums.wall), sums.cpu, d.mb(sums.rss_kb)), "", "", None)
        # dbstat's aggregate left the largest tables out on the 11 GB file (SQLite 3.40): per table
        # only where it was checked to add up.
        if self.n < 100:
            self.b.breakdown = d.sql(big, "SELECT name, sum(pgsize), sum(payload), sum(ncell) FROM dbstat WHERE aggregate = TRUE "
                                      "GROUP BY name ORDER BY 2 DESC LIMIT 10;")
            self.b.breakdown_of = "the %s database with its sums, before the measurements" % self.label
        self.storage(big, c, size)
        self.verify(big, one)
        for name, args in (("stats", ["stats", "--format", "json"]), ("doctor", ["doctor"]),
                           ("doctor --quick", ["doctor", "--quick"]),
                           ("export pairs, one location", ["export", "pairs", "--location", "S0001", "--source", "station"])):
            self.command(name, args, big, one)
        self.ingest(big)
        self.prune(big)
        if not self.keep:
            for path in (big, one):
                d.rm_db(path)
                if os.path.exists(path + ".ingest-lock"):
                    os.remove(path + ".ingest-lock")

    def storage(self, path, c, size):
        values = c["values"]
        pages = {line.split("|")[0]: int(line.split("|")[1]) for line in getattr(self.b, "breakdown", "").splitlines()}
        forecast = pages.get("hourly_forecasts", 0) + pages.get("daily_forecasts", 0)
        self.row("database size, %s (%s forecast values)" % (self.label, f"{values:,}"), d_human(size),
                 "", "", "", None)
        if forecast:
            self.row("bytes per stored forecast value: hourly and daily tables", "%.2f" % (forecast / values),
                     "whole file (observations, fetch log, sums too) %.2f" % (size / values), "",
                     "≤ 7.9 (7.2 + 10 %)", forecast / values <= 7.2 * 1.1)
        else:
            self.row("bytes per stored forecast value: whole file (observations, fetch log, sums too)",
                     "%.2f" % (size / values), "", "", "", None)
        self.row("growth per location-model-day", d_human(size / (self.n * self.days)), "", "", "", None)

    def verify(self, big, one):
        d = self.d
        k = min(50, self.n)
        picks = random.Random(SEED).sample(range(1, self.n + 1), k)
        ours, base = [], []
        for loc in picks:
            r = d.measured([self.wxdb, "--db", big, "query", "verify", "--location", "S%04d" % loc, "--source", "station",
                            "--var", "temperature_2m", "--format", "json"], capture=True)
            ours.append(r.wall)
            r = d.measured(["sqlite3", "-batch", "-csv", big, VERIFY_SQL % loc], capture=True)
            base.append(r.wall)
        single = [d.measured([self.wxdb, "--db", one, "query", "verify", "--location", "S0001", "--source", "station",
                              "--var", "temperature_2m", "--format", "json"], capture=True).wall for _ in range(5)]
        single_base = [d.measured(["sqlite3", "-batch", "-csv", one, VERIFY_SQL % 1], capture=True).wall for _ in range(5)]
        s1 = statistics.median(single)
        p50, p95, b50, b95 = pct(ours, 50), pct(ours, 95), pct(base, 50), pct(base, 95)
        self.row("query verify, %d random locations: p50" % k, d.ms(p50), "sqlite3 CLI, same SQL over raw pairs: p50 %s" % d.ms(b50),
                 "%.2fx the time" % (p50 / b50), "", None)
        self.row("query verify, %d random locations: p95" % k, d.ms(p95),
                 "one-location database of the same shape: %s (sqlite3 %s)" % (d.ms(s1), d.ms(statistics.median(single_base))),
                 "%.2fx the one location" % (p95 / s1), "≤ 2x one location", p95 / s1 <= 2)

    def command(self, name, args, big, one):
        d = self.d
        if name.endswith("--quick") and d.measured([self.wxdb, "doctor", "--help"], capture=True).out.find(b"--quick") < 0:
            return
        r = d.measured([self.wxdb, "--db", big, *args], check=False)
        r1 = d.measured([self.wxdb, "--db", one, *args], check=False)
        fails = "" if r.rc == 0 else " (exit %d)" % r.rc
        before = ""
        if name == "stats":
            # What stats did before: count(*) of every table, which reads every page of each.
            tables = ("locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations",
                      "verification_summaries")
            counted = d.measured(["sqlite3", "-batch", big, " ".join("SELECT count(*) FROM %s;" % t for t in tables)], capture=True)
            before = "; sqlite3 counting every table's rows (what stats did) %s" % d.ms(counted.wall)
        self.row("%s: time, peak RSS" % name, "%s, %s%s" % (d.ms(r.wall), d.mb(r.rss_kb), fails),
                 "one-location database %s, %s%s" % (d.ms(r1.wall), d.mb(r1.rss_kb), before),
                 "%.1fx the time" % (r.wall / r1.wall), "< 64 MB", r.rss_kb < 64 * 1024)

    def ingest(self, big):
        """Two hourly cycles through the replay server, whose live forecast stitches the hours
        before a run's initialisation from the earlier runs, as Open-Meteo does. The first, with the
        server's clock 3 h back, catches up: every past hour's `analysis` value differs from what the
        generator wrote. The second, at the real clock, is the steady hourly cycle after the model's
        next run: every location gets a new run and 3 new past hours."""
        d = self.d
        now = int(time.time())
        proc = subprocess.Popen([self.replay, "--fixtures", os.path.join(d.ROOT, "Fixtures"), "--now", str(now - 3 * 3600)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            base = proc.stdout.readline().decode().strip()
            env = dict(os.environ, WXDB_FORECAST_URL=base + "/v1/forecast", WXDB_ARCHIVE_URL=base + "/v1/archive",
                       WXDB_GEOCODING_URL=base + "/v1/search", WXDB_META_URL=base + "/data",
                       # A key lifts the free limits (1,000 locations weigh 3,886 calls an hour; the free
                       # minute allows 600), so the cycle is measured without waiting for the next minute.
                       WXDB_API_KEY="bench")
            first = d.measured([self.wxdb, "--db", big, "ingest"], env=env, capture=True, check=False)
            urllib.request.urlopen(base + "/_control/now?t=real").read()
            r = d.measured([self.wxdb, "--db", big, "ingest"], env=env, capture=True, check=False)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait()

        def summary(run):
            lines = run.err.decode(errors="replace").strip().splitlines()
            return next((l for l in reversed(lines) if l.startswith("ingest:")), lines[-1] if lines else "?")
        n = f"{self.n:,}"
        self.row("ingest, catching up (server clock 3 h back: every past hour of yesterday and today new for every location): wall, CPU, peak RSS",
                 "%s wall, %.2f s CPU, %s" % (d.ms(first.wall), first.cpu, d.mb(first.rss_kb)), summary(first), "", "", None)
        self.row("ingest, one hourly cycle of %s locations (batched, replay server; a new run and 3 new past hours each): wall, CPU" % n,
                 "%s wall, %.2f s CPU" % (d.ms(r.wall), r.cpu), summary(r), "", "≤ 10 s CPU at 1,000 locations",
                 (r.cpu <= 10 and r.rc == 0) if self.n >= 1000 else None)
        self.row("ingest, one hourly cycle: peak RSS", d.mb(r.rss_kb), "", "", "< 64 MB", r.rss_kb < 64 * 1024)

    def prune(self, big):
        d = self.d
        r = d.measured([self.wxdb, "--db", big, "prune", "--keep-days", "7"], check=False, capture=True)
        line = r.err.decode(errors="replace").strip().splitlines()
        self.row("prune --keep-days 7 (whole database): time, peak RSS", "%s, %s" % (d.ms(r.wall), d.mb(r.rss_kb)),
                 line[-1] if line else "", "", "< 64 MB", r.rss_kb < 64 * 1024 and r.rc == 0)


def d_human(b):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return "%.2f %s" % (b / scale, unit)
    return "%.0f B" % b
