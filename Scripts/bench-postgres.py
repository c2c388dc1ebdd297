#!/usr/bin/env python3
"""The PostgreSQL section of Scripts/bench (issue #30): wxdb on PostgreSQL beside wxdb on SQLite, in
the same run, on the same data. It starts its own throwaway server as the tests do (initdb into a
scratch folder, a free port on 127.0.0.1, the socket in that folder; as root the server runs as the
postgres user), and deletes it at the end. Skipped with one line when PostgreSQL's programs are
missing. A measure whose wxdb command fails on PostgreSQL (an engine piece not built yet) shows the
error instead of a figure.

Rows: ingest, one process, values/s (target: at least half of SQLite's); query verify p50/p95 over 50
of 100 locations; export pairs rows/s; bytes per stored value (target <= 12); `wxdb copy` SQLite ->
PostgreSQL rows/s; the hourly cycle of the same locations through the replay server (CPU and wall for
wxdb, the replay server and the PostgreSQL server). The full run (not --quick) adds the issue's
1,000-location rows (thousand_locations): query verify p50/p95 over 50 of 1,000 locations (target p95
<= 50 ms) and the hourly cycle of 1,000 locations.
"""
import glob
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
import urllib.request


def programs():
    """The folder with initdb and pg_ctl, or None."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(folder, "initdb"), os.X_OK) and os.access(os.path.join(folder, "pg_ctl"), os.X_OK):
            return folder
    return None


class Server:
    """A throwaway PostgreSQL server: trust on the socket and 127.0.0.1, stopped and deleted by stop()."""

    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.folder = tempfile.mkdtemp(prefix="wxdb-bench-pg-")
        self.data = os.path.join(self.folder, "data")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.as_root = os.getuid() == 0
        if self.as_root:
            shutil.chown(self.folder, "postgres")
        self.run([os.path.join(self.bin, "initdb"), "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8"])
        self.run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w", "-l", os.path.join(self.folder, "log"),
                  "-o", "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=on%s" % (self.port, self.folder, self.preload()),
                  "start"])

    def preload(self):
        """pg_stat_statements when the server has it (Debian's postgresql-15 does): the ingest row counts
        the statements, a figure the machine's load does not move."""
        lib = subprocess.run([os.path.join(self.bin, "pg_config"), "--pkglibdir"], capture_output=True, text=True)
        folder = lib.stdout.strip() if lib.returncode == 0 else "/usr/lib/postgresql/%s/lib" % os.path.basename(
            os.path.dirname(self.bin))
        if os.path.exists(os.path.join(folder, "pg_stat_statements.so")):
            self.statements = True
            return " -c shared_preload_libraries=pg_stat_statements"
        self.statements = False
        return ""

    def run(self, cmd):
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def conninfo(self, db):
        return "postgresql://postgres@127.0.0.1:%d/%s" % (self.port, db)

    def psql(self, db, text):
        p = subprocess.run([os.path.join(self.bin, "psql"), "-qAtX", "-h", "127.0.0.1", "-p", str(self.port), "-U",
                            "postgres", "-d", db, "-c", text], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip())
        return p.stdout.strip()

    def create(self, db):
        self.psql("postgres", "CREATE DATABASE %s" % db)
        return self.conninfo(db)

    def cpu(self):
        """CPU seconds of the whole server so far: the postmaster, the backends it has reaped (each
        connection's, counted in its cutime/cstime) and its living children (checkpointer, ...)."""
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            master = int(f.readline())
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(pid) == master:
                total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
            elif int(fields[1]) == master:
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self):
        try:
            self.run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "immediate", "stop"])
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class Postgres:
    def __init__(self, bench, d):
        self.b, self.d = bench, d
        self.quick = bench.quick
        self.wxdb = bench.wxdb
        self.replay = os.path.join(os.path.dirname(bench.wxdb), "wxdb-replay")

    def row(self, measure, ours, base="", ratio="", target="", ok=None):
        self.b.row("PostgreSQL", measure, ours, base, ratio, target, ok)
        self.b.log("postgres: %s: %s | %s | %s" % (measure, ours, base, ratio))

    def failed(self, measure, run):
        first = (run.err.decode(errors="replace").strip().splitlines() or ["exit %d" % run.rc])[-1]
        self.row(measure, "n/a: " + first[:160], "", "", "", False)

    def run(self):
        bin_dir = programs()
        if bin_dir is None:
            line = "PostgreSQL rows skipped: PostgreSQL's programs (initdb, pg_ctl) are not installed (Debian: apt-get install postgresql-15)"
            self.b.log(line)
            self.b.notes.append(line)
            return
        self.server = Server(bin_dir)
        try:
            steps = (self.ingest, self.many_locations) if self.quick else (self.ingest, self.many_locations,
                                                                           self.thousand_locations)
            for step in steps:
                try:
                    step()
                except Exception as e:  # one failing measure must not hide the others
                    self.row(step.__name__, "n/a: %s" % str(e)[:160], "", "", "", False)
        finally:
            self.server.stop()

    def ingest(self):
        """One process storing the same saved responses on SQLite and on PostgreSQL (wxdb import, one
        transaction), and the bytes per stored value each engine then holds."""
        b, d = self.b, self.d
        if not hasattr(b, "files"):
            b.data()
        files = b.files[:100] if self.quick else b.files
        fetched = b.manifest[0]["fetched_at"]
        lite = os.path.join(b.work, "pg-ingest.sqlite")
        best_lite = best_pg = None
        calls = runs = 0
        for rep in range(2):
            b.new_wxdb(lite)
            r = d.measured([self.wxdb, "--db", lite, "--quiet", "import", *files, "--location", d.LOC,
                            "--fetched-at", d.iso(fetched)])
            best_lite = r if best_lite is None or r.wall < best_lite.wall else best_lite
            pg = self.server.create("ingest%d" % rep)
            add = d.measured([self.wxdb, "--db", pg, "--quiet", "locations", "add", d.LOC, "--lat", "52.52", "--lon",
                              "13.41", "--timezone", "Europe/Berlin"], check=False)
            if add.rc != 0:
                return self.failed("ingest, one process (locations add)", add)
            if self.server.statements:
                self.server.psql("ingest%d" % rep, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                self.server.psql("ingest%d" % rep, "SELECT pg_stat_statements_reset()")
            r = d.measured([self.wxdb, "--db", pg, "--quiet", "import", *files, "--location", d.LOC, "--fetched-at",
                            d.iso(fetched)], check=False)
            if self.server.statements and r.rc == 0:
                # Top-level statements the import ran (the reset left out), per stored run.
                calls = int(self.server.psql("ingest%d" % rep, "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements "
                                             "WHERE query NOT LIKE '%pg_stat_statements%'"))
                runs = int(self.server.psql("ingest%d" % rep, "SELECT count(*) FROM forecast_runs"))
            if r.rc != 0:
                return self.failed("ingest, one process, %d responses" % len(files), r)
            best_pg = r if best_pg is None or r.wall < best_pg.wall else best_pg
        c = d.counts(lite)
        v = c["values"]
        ratio = best_lite.wall / best_pg.wall
        self.row("ingest, one process, %d responses (%s values), values/s" % (len(files), f"{v:,}"),
                 d.rate(v, best_pg), "SQLite %s" % d.rate(v, best_lite), "%.2fx SQLite's rate" % ratio,
                 "≥ 0.5x SQLite", ratio >= 0.5)
        if self.server.statements and runs:
            self.row("ingest: statements per stored run (top level, each a round trip; a COPY counts once)",
                     "%.1f" % (calls / runs), "", "", "", None)
        self.bytes_per_value(pg, lite, c)

    def bytes_per_value(self, pg, lite, c):
        db = pg.rsplit("/", 1)[1]
        # Migration 0006: a run's rows are in the float4 tables or the double ones; both count.
        tables = ["hourly_forecasts_f4", "hourly_forecasts_f8", "daily_forecasts_f4", "daily_forecasts_f8"]
        sizes = self.server.psql(db, "SELECT " + " + ".join("pg_relation_size('%s')" % t for t in tables) + ", "
                                     + " + ".join("pg_total_relation_size('%s')" % t for t in tables) + ", "
                                     "(SELECT count(*) FROM hourly_forecasts), (SELECT count(*) FROM daily_forecasts), "
                                     "(SELECT count(*) FROM hourly_forecasts_f4)")
        heap, total, hours, days, hours4 = map(int, sizes.split("|"))
        values = hours * 12 + days * 8
        lite_bytes = self.d.db_bytes(lite)
        per = total / values
        self.row("bytes per stored value, hourly and daily rows with their keys and indexes (%s values)" % f"{values:,}",
                 "%.1f B (heap alone %.1f B; %.0f %% of hours in float4)" % (per, heap / values, 100.0 * hours4 / max(hours, 1)),
                 "SQLite file %.1f B" % (lite_bytes / c["values"]), "", "≤ 12 B", per <= 12)

    def history(self, n, days, name):
        """A history of n locations x days (the scale section's generator, with its sums) on SQLite,
        copied into the PostgreSQL database `name` with wxdb copy (its rows/s and the bytes per value
        each engine holds are rows). Returns (sqlite path, PostgreSQL URL), or None when the copy failed."""
        b, d = self.b, self.d
        scale = d.scale
        lite = os.path.join(b.work, "pg-%s-%d-%d.sqlite" % (name, n, days))
        end = int(time.time()) // 10800 * 10800 - 86400
        s = scale.Scale(b, d, n, days)
        s.build(lite, n, end)
        s.add_sums([lite], end)
        d.measured([self.wxdb, "--db", lite, "--quiet", "stats"])
        pg = self.server.create(name)
        c = d.counts(lite)
        copy = d.measured([self.wxdb, "--quiet", "copy", "--from", lite, "--to", pg], check=False)
        if copy.rc != 0:
            self.failed("wxdb copy SQLite -> PostgreSQL, %s locations x %d days" % (f"{n:,}", days), copy)
            return None
        rows = c["runs"] + c["hours"] + c["days"] + c["log"] + c["obs"]
        self.row("wxdb copy SQLite -> PostgreSQL, %s locations x %d days (%s rows), rows/s" % (f"{n:,}", days, f"{rows:,}"),
                 d.rate(rows, copy), "peak RSS %s" % d.mb(copy.rss_kb), "", "", None)
        self.bytes_per_value(pg, lite, c)
        return lite, pg

    def many_locations(self):
        """A history of many locations (the scale section's generator), copied into PostgreSQL with
        wxdb copy; then query verify over 50 of them and export pairs on both engines, and (--quick)
        the hourly cycle of the same locations through the replay server (the full run's cycle is
        thousand_locations')."""
        b, d = self.b, self.d
        # WXDB_BENCH_PG_LOCATIONS / WXDB_BENCH_PG_DAYS change the size (e.g. 1,000 x 2 days beside --quick).
        n = int(os.environ.get("WXDB_BENCH_PG_LOCATIONS") or 100)
        days = int(os.environ.get("WXDB_BENCH_PG_DAYS") or (2 if self.quick else 7))
        made = self.history(n, days, "many")
        if made is None:
            return
        lite, pg = made
        self.verify_over_50(lite, pg, n)
        # export pairs of every location, rows/s.
        out = {}
        for engine, db in (("lite", lite), ("pg", pg)):
            path = os.path.join(b.work, "pg-pairs-%s.csv" % engine)
            with open(path, "wb") as f:
                r = d.measured([self.wxdb, "--db", db, "export", "pairs", "--source", "station"], stdout=f, check=False)
            lines = sum(1 for _ in open(path, "rb")) - 1
            out[engine] = (r, lines)
            os.remove(path)
        r, lines = out["pg"]
        if r.rc != 0:
            self.failed("export pairs", r)
        else:
            self.row("export pairs, every location (%s rows), rows/s" % f"{lines:,}", d.rate(lines, r),
                     "SQLite %s" % d.rate(out["lite"][1], out["lite"][0]),
                     "same rows" if lines == out["lite"][1] else "**rows differ: SQLite %d**" % out["lite"][1], "", None)
        if self.quick:
            self.cycle(n)

    def thousand_locations(self):
        """The full run's 1,000-location rows (issue #30's size): query verify p50/p95 over 50 of 1,000
        locations on PostgreSQL beside SQLite (target p95 <= 50 ms), and the hourly cycle of 1,000
        locations through the replay server on both engines. The history is 1,000 locations x 2 days
        (WXDB_BENCH_PG_THOUSAND_DAYS changes the days): verify reads only each location's kept sums, so
        more days add copy time, not verify time."""
        n = 1000
        days = int(os.environ.get("WXDB_BENCH_PG_THOUSAND_DAYS") or 2)
        made = self.history(n, days, "thousand")
        if made is not None:
            self.verify_over_50(*made, n)
        self.cycle(n)

    def verify_over_50(self, lite, pg, n):
        """query verify over 50 of the n locations, each a whole process, on both engines."""
        d, scale = self.d, self.d.scale
        names = ["S%04d" % (1 + i * n // 50) for i in range(50)]
        times = {"pg": [], "lite": []}
        # CPU beside the wall time: on a loaded machine the wall time is mostly waiting for a core.
        cpu = {"pg": [], "lite": [], "server": []}
        failure = None
        for name in names:
            for engine, db in (("lite", lite), ("pg", pg)):
                before = self.server.cpu() if engine == "pg" else 0
                r = d.measured([self.wxdb, "--db", db, "query", "verify", "--location", name, "--source", "station",
                                "--format", "json"], check=False, capture=True)
                if engine == "pg":
                    cpu["server"].append(self.server.cpu() - before)
                if r.rc != 0 and failure is None and engine == "pg":
                    failure = r
                times[engine].append(r.wall)
                cpu[engine].append(r.cpu)
        if failure is not None:
            self.failed("query verify over 50 of %s locations" % f"{n:,}", failure)
        else:
            p50, p95 = scale.pct(times["pg"], 50), scale.pct(times["pg"], 95)
            self.row("query verify over 50 of %s locations, p50 / p95 wall (median CPU of wxdb + the PostgreSQL "
                     "server)" % f"{n:,}", "%s / %s (CPU %s + %s)" % (d.ms(p50), d.ms(p95), d.ms(scale.pct(cpu["pg"], 50)),
                                                                   d.ms(scale.pct(cpu["server"], 50))),
                     "SQLite %s / %s (CPU %s)" % (d.ms(scale.pct(times["lite"], 50)), d.ms(scale.pct(times["lite"], 95)),
                                                 d.ms(scale.pct(cpu["lite"], 50))), "",
                     "p95 ≤ 50 ms", p95 <= 0.05)

    def cycle(self, n):
        """The hourly cycle of n locations through the replay server on PostgreSQL beside SQLite: a first
        ingest with the server's clock 3 h back, then the steady cycle at the real clock."""
        d = self.d
        lean = d.lean
        now = int(time.time())
        proc = subprocess.Popen([self.replay, "--fixtures", os.path.join(d.ROOT, "Fixtures"), "--now", str(now - 3 * 3600)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def server_cpu():
            with open("/proc/%d/stat" % proc.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        try:
            base = proc.stdout.readline().decode().strip()
            env = dict(os.environ, WXDB_FORECAST_URL=base + "/v1/forecast", WXDB_ARCHIVE_URL=base + "/v1/archive",
                       WXDB_GEOCODING_URL=base + "/v1/search", WXDB_META_URL=base + "/data", WXDB_API_KEY="bench")
            lite = os.path.join(self.b.work, "pg-cycle.sqlite")
            d.rm_db(lite)
            d.measured([self.wxdb, "--db", lite, "--quiet", "locations", "add", "seed", "--lat", "0", "--lon", "0"])
            db = sqlite3.connect(lite, isolation_level=None)
            db.execute("BEGIN")
            db.execute("DELETE FROM locations")
            db.executemany("INSERT INTO locations (id, name, latitude, longitude, elevation, timezone, created_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)", [r[:7] for r in d.scale.location_rows(n, now - 86400)])
            db.execute("COMMIT")
            db.close()
            pg = self.server.create("cycle")
            copied = d.measured([self.wxdb, "copy", "--from", lite, "--to", pg], check=False)
            if copied.rc != 0:
                return self.failed("hourly cycle (copying the locations)", copied)
            figures = {}
            pg_cpu = {}  # the PostgreSQL server's own CPU during each ingest on it
            for engine, target in (("SQLite", lite), ("PostgreSQL", pg)):
                urllib.request.urlopen(base + "/_control/reset").read()
                urllib.request.urlopen(base + "/_control/now?t=%d" % (now - 3 * 3600)).read()
                s0, p0 = server_cpu(), self.server.cpu()
                first = lean.cpu_run([self.wxdb, "--db", target, "--quiet", "ingest"], env=env)
                s1, p1 = server_cpu(), self.server.cpu()
                urllib.request.urlopen(base + "/_control/now?t=real").read()
                steady = lean.cpu_run([self.wxdb, "--db", target, "--quiet", "ingest"], env=env)
                figures[engine] = (first, s1 - s0, steady, server_cpu() - s1)
                if engine == "PostgreSQL":
                    pg_cpu = {"first": p1 - p0, "steady": self.server.cpu() - p1}
            (first, sf, steady, ss) = figures["PostgreSQL"]
            if first[2] != 0 or steady[2] != 0:
                err = (first[3] if first[2] != 0 else steady[3]).decode(errors="replace").strip().splitlines()
                self.row("hourly cycle of %s locations" % f"{n:,}", "n/a: " + (err[-1] if err else "failed")[:160], "", "",
                         "", False)
                return
            lf, lsf, ls, lss = figures["SQLite"]
            self.row("hourly cycle of %s locations through the replay server: steady / first ingest (wxdb; the replay "
                     "server; the PostgreSQL server)" % f"{n:,}",
                     "%.2f s CPU (%.1f s wall), server %.2f s, PostgreSQL %.2f s / %.2f s CPU (%.1f s wall), server "
                     "%.2f s, PostgreSQL %.2f s" % (steady[0], steady[1], ss, pg_cpu["steady"], first[0], first[1], sf,
                                                    pg_cpu["first"]),
                     "SQLite %.2f s CPU (%.1f s wall), server %.2f s / %.2f s CPU (%.1f s wall), server %.2f s" % (
                         ls[0], ls[1], lss, lf[0], lf[1], lsf), "", "", None)
        finally:
            proc.terminate()
            proc.wait()
