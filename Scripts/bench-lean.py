"""The lean-binary section of Scripts/bench (issue 33): this build beside the build before it (a
release of the baseline commit, built by Scripts/bench in a git worktree under .build/baseline) and
the self-contained package binary (Scripts/package), in the same run. CPU is user + sys of the
measured process alone, from wait4 (no GNU time wrapper: its own CPU would be a third of a start-up).

Rows: start-up (`--version`) beside `sqlite3 --version`; `query verify` on the verify database
beside the sqlite3 CLI running the same summary SELECT; ingest per invocation beside the Python
peer; an ingest cycle of many locations through the replay server, answering at once and with every
answer delayed, to show what waiting costs.
"""
import os
import shutil
import signal
import statistics
import subprocess
import time
import urllib.request


def cpu_run(cmd, env=None, stdin=None):
    """(cpu seconds, wall seconds, exit code, stderr) of `cmd`, the child reaped with wait4."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - start, p.returncode, err


class Lean:
    def __init__(self, bench, d, baseline, static, baseline_rev):
        self.b, self.d = bench, d
        self.quick = bench.quick
        self.builds = [("this build", bench.wxdb)]
        if static and os.access(static, os.X_OK):
            self.builds.append(("this build, static", static))
        if baseline and os.access(baseline, os.X_OK):
            self.builds.append(("before (%s)" % baseline_rev, baseline))
        self.replay = os.path.join(os.path.dirname(bench.wxdb), "wxdb-replay")

    def row(self, measure, ours, base="", ratio="", target="", ok=None):
        self.b.row("Lean binary", measure, ours, base, ratio, target, ok)
        self.b.log("lean: %s: %s | %s | %s" % (measure, ours, base, ratio))

    def run(self):
        self.startup()
        self.verify()
        self.ingest()
        self.cycle()

    def startup(self):
        k = 20 if self.quick else 50
        # Interleaved, so a busy machine slows every program alike.
        cpu = {name: [] for name, _ in self.builds}
        sq = []
        for _ in range(k):
            sq.append(cpu_run(["sqlite3", "--version"])[0])
            for name, path in self.builds:
                cpu[name].append(cpu_run([path, "--version"])[0])
        base = statistics.median(sq)
        for name, path in self.builds:
            m = statistics.median(cpu[name])
            target, ok = "", None
            if name == "this build":
                target, ok = "≤ 3x sqlite3", m <= 3 * base
            elif name == "this build, static":
                target, ok = "≤ 2x sqlite3", m <= 2 * base
            self.row("wxdb --version CPU, median of %d: %s" % (k, name), "%.2f ms" % (m * 1000),
                     "sqlite3 --version %.2f ms" % (base * 1000), "%.1fx" % (m / base), target, ok)
        for name, path in self.builds:
            if name == "this build, static":
                stripped = os.path.getsize(path)
                self.row("static binary, stripped", "%.1f MB" % (stripped / 1e6), "", "", "≤ 25 MB", stripped <= 25e6)

    def verify(self):
        path = os.path.join(self.b.work, "verify-%d.sqlite" % self.b.verify_days)
        if not os.path.exists(path):
            self.b.verify()
        k = 10 if self.quick else 20
        sq = statistics.median(cpu_run(["sqlite3", "-batch", "-csv", path, self.d.VERIFY_SQL])[0] for _ in range(k))
        for name, wxdb in self.builds:
            runs = [cpu_run([wxdb, "--db", path, "query", "verify", "--location", self.d.LOC, "--format", "json"]) for _ in range(k)]
            if any(r[2] != 0 for r in runs):
                # The build before cannot open a database of this build's newer schema.
                self.row("query verify CPU: %s" % name, "not measured: %s" % runs[0][3].decode(errors="replace")[-120:].strip())
                continue
            m = statistics.median(r[0] for r in runs)
            target, ok = ("≤ 3x sqlite3", m <= 3 * sq) if name.startswith("this build") else ("", None)
            self.row("query verify CPU, verify database (%d days), median of %d: %s" % (self.b.verify_days, k, name),
                     "%.1f ms" % (m * 1000), "sqlite3, same summary SELECT %.1f ms" % (sq * 1000), "%.1fx" % (m / sq), target, ok)

    def ingest(self):
        n = min(30 if self.quick else 100, len(self.b.files))
        files = list(zip(self.b.files[:n], self.b.manifest[:n]))
        dbs = {}
        for name, wxdb in self.builds:
            p = os.path.join(self.b.work, "lean-%s.sqlite" % name.split()[0 if name == "this build" else -1].strip("()"))
            self.d.rm_db(p)
            self.d.measured([wxdb, "--db", p, "--quiet", "locations", "add", self.d.LOC, "--lat", "52.52", "--lon", "13.41",
                             "--timezone", "Europe/Berlin"])
            dbs[name] = p
        py = os.path.join(self.b.work, "lean-python.sqlite")
        self.b.new_python(py)
        walls = {name: 0.0 for name in dbs}
        cpus = {name: 0.0 for name in dbs}
        pw = pc = 0.0
        for f, m in files:
            for name, wxdb in self.builds:
                c, w, rc, err = cpu_run([wxdb, "--db", dbs[name], "--quiet", "import", f, "--location", self.d.LOC,
                                         "--fetched-at", self.d.iso(m["fetched_at"])])
                walls[name] += w
                cpus[name] += c
            c, w, _, _ = cpu_run([self.d.PY, self.d.BASELINE, py, "import", "--location", self.d.LOC, "--fetched-at",
                                  str(m["fetched_at"]), f])
            pw += w
            pc += c
        for name in dbs:
            target, ok = ("≥ 4x python", pw / walls[name] >= 4) if name.startswith("this build") else ("", None)
            self.row("ingest per invocation, %d processes: %s, wall (CPU)" % (n, name),
                     "%.0f ms (%.0f ms)" % (walls[name] * 1000, cpus[name] * 1000),
                     "python %.0f ms (%.0f ms)" % (pw * 1000, pc * 1000), "%.1fx faster" % (pw / walls[name]), target, ok)

    def cycle(self):
        """`wxdb ingest` of L locations through the replay server, once answering at once and once
        with every answer delayed: the CPU the wait costs is the difference."""
        locations = self.b.a.lean_locations or (20 if self.quick else 200)
        delay = 1.0 if self.quick else 2.0
        d = self.d
        proc = subprocess.Popen([self.replay, "--fixtures", os.path.join(d.ROOT, "Fixtures")],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            base = proc.stdout.readline().decode().strip()
            env = dict(os.environ, WXDB_FORECAST_URL=base + "/v1/forecast", WXDB_ARCHIVE_URL=base + "/v1/archive",
                       WXDB_GEOCODING_URL=base + "/v1/search", WXDB_META_URL=base + "/data", WXDB_API_KEY="bench")
            # One set of locations per build (each adds them, in its own schema), copied for each run.
            templates = {}
            for name, wxdb in self.builds:
                template = os.path.join(self.b.work, "lean-cycle-template-%d.sqlite" % len(templates))
                d.rm_db(template)
                for i in range(locations):
                    d.measured([wxdb, "--db", template, "--quiet", "locations", "add", "L%04d" % (i + 1),
                                "--lat", "%.4f" % (-60 + (i * 0.37) % 120), "--lon", "%.4f" % (-170 + (i * 1.13) % 340),
                                "--timezone", "UTC"])
                templates[name] = template
            p = os.path.join(self.b.work, "lean-cycle.sqlite")
            for name, wxdb in self.builds:
                figures = []
                for wait in (0.0, delay):
                    d.rm_db(p)
                    shutil.copyfile(templates[name], p)
                    urllib.request.urlopen(base + "/_control/reset").read()
                    if wait:
                        urllib.request.urlopen(base + "/_control/fault?kind=delay&seconds=%g&times=1000" % wait).read()
                    c, w, rc, err = cpu_run([wxdb, "--db", p, "--quiet", "ingest"], env=env)
                    figures.append((c, w, rc))
                (c0, w0, r0), (c1, w1, r1) = figures
                self.row("ingest of %d locations through the replay server: %s; answers at once, then each delayed %g s" % (locations, name, delay),
                         "%.2f s CPU (%.1f s wall); delayed: %.2f s CPU (%.1f s wall)" % (c0, w0, c1, w1),
                         "exit %d / %d" % (r0, r1), "waiting cost %+.2f s CPU" % (c1 - c0),
                         "waiting costs no CPU" if name.startswith("this build") else "",
                         (c1 - c0) < 0.25 * max(c0, 0.1) + 0.05 if name.startswith("this build") else None)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
