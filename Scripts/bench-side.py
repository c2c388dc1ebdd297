#!/usr/bin/env python3
"""Two wxdb builds side by side in one run: ingest, verify and export, by CPU time (issue #29's
"within noise of today's build").

    Scripts/bench-side.py --baseline-wxdb OLD/.build/release/wxdb [--wxdb NEW] [--reps 7] [--work DIR]
        [--files 300] [--verify-days 60] [--pairs 1000000] [--only ingest,verify,export]

Each measure runs the two binaries interleaved (old, new, old, new, ...) on the same data and
takes the median of each one's CPU time (user+sys of the process, from wait4): on a shared machine
wall time mostly measures the neighbours, CPU time much less so, and interleaving spreads a busy
moment over both. Each binary works on its own database (an older build refuses a schema newer
than its own), made the same way as Scripts/bench-driver.py makes its data. The outputs of verify
and export are compared byte for byte. Prints a Markdown table; nothing is written elsewhere.

A baseline binary is built the way Scripts/bench builds its own: `git worktree add --detach
.build/baseline/src-REV REV`, then `swift build -c release --product wxdb` there.
"""
import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
driver = __import__("bench-driver")
gen = __import__("bench-gen")
LOC = driver.LOC


class Side:
    """What `Bench.synth_db` needs of a Bench, for one binary."""

    def __init__(self, wxdb):
        self.wxdb = wxdb

    def new_wxdb(self, path):
        driver.Bench.new_wxdb(self, path)

    def synth(self, path, runs, every, obs, **kw):
        driver.Bench.synth_db(self, path, runs, every, obs, **kw)


def interleaved(label, commands, reps, log):
    """Runs each of `commands` (old, new: argument lists, or functions returning a Run) `reps` times,
    interleaved; returns the CPU seconds of each and the last output of each."""
    cpu = [[], []]
    out = [b"", b""]
    for rep in range(reps):
        # Alternate who goes first, so neither always follows the other's cache warm-up.
        order = (0, 1) if rep % 2 == 0 else (1, 0)
        for i in order:
            cmd = commands[i]
            r = cmd() if callable(cmd) else driver.measured(cmd, capture=True)
            cpu[i].append(r.cpu)
            out[i] = r.out
        log("%s: rep %d/%d  old %.3f s  new %.3f s" % (label, rep + 1, reps, cpu[0][-1], cpu[1][-1]))
    return cpu, out


def spread(values):
    """Median and the half-width of the middle half (quartiles), in seconds."""
    m = statistics.median(values)
    q = statistics.quantiles(values, n=4) if len(values) >= 4 else [min(values), m, max(values)]
    return m, (q[2] - q[0]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-wxdb", required=True)
    ap.add_argument("--baseline-rev", default="baseline")
    ap.add_argument("--wxdb", default=os.path.join(driver.ROOT, ".build", "release", "wxdb"))
    ap.add_argument("--rev", default="this build")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--verify-days", type=int, default=60)
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--only", default="ingest,verify,export")
    ap.add_argument("--work", help="folder for the data (default: a temporary one, deleted at the end)")
    a = ap.parse_args()
    only = a.only.split(",")
    work = a.work or tempfile.mkdtemp(prefix="wxdb-bench-side-")
    os.makedirs(work, exist_ok=True)
    sides = [Side(os.path.abspath(a.baseline_wxdb)), Side(os.path.abspath(a.wxdb))]
    names = ["old", "new"]

    def log(msg):
        print("bench-side: " + msg, file=sys.stderr, flush=True)

    rows = []
    try:
        if "ingest" in only:
            d = os.path.join(work, "ingest-%d" % a.files)
            if not os.path.exists(os.path.join(d, "manifest.json")):
                log("generating %d responses" % a.files)
                gen.main([d, "--count", str(a.files)])
            files = sorted(f for f in os.listdir(d) if f.startswith("r") and f.endswith(".json"))
            files = [os.path.join(d, f) for f in files]
            fetched = driver.iso(driver.json.load(open(os.path.join(d, "manifest.json")))["files"][0]["fetched_at"])

            def ingest(i):
                def run():
                    path = os.path.join(work, "ingest-%s.sqlite" % names[i])
                    sides[i].new_wxdb(path)
                    return driver.measured([sides[i].wxdb, "--db", path, "--quiet", "import", *files, "--location",
                                            LOC, "--fetched-at", fetched])
                return run

            cpu, _ = interleaved("ingest", [ingest(0), ingest(1)], a.reps, log)
            counts = [driver.counts(os.path.join(work, "ingest-%s.sqlite" % n)) for n in names]
            rows.append(("ingest: import of %d responses, one process" % len(files), cpu, counts[0] == counts[1]))

        if "verify" in only:
            paths = []
            for i, n in enumerate(names):
                path = os.path.join(work, "verify-%s.sqlite" % n)
                if not os.path.exists(path):
                    log("verify data for %s: %d days" % (n, a.verify_days))
                    sides[i].synth(path, a.verify_days * 8, 3, a.verify_days * 24 + 400)
                    driver.measured([sides[i].wxdb, "--db", path, "--quiet", "stats"])  # adds the sums
                paths.append(path)
            for label, extra in (("verify --confidence 0", ["--confidence", "0"]), ("verify (95% intervals)", [])):
                cmds = [[s.wxdb, "--db", p, "query", "verify", "--location", LOC, "--format", "json", *extra]
                        for s, p in zip(sides, paths)]
                cpu, out = interleaved(label, cmds, a.reps, log)
                rows.append(("%s, %d days" % (label, a.verify_days), cpu, out[0] == out[1]))

        if "export" in only:
            paths = []
            runs = -(-a.pairs // 384)
            for i, n in enumerate(names):
                path = os.path.join(work, "export-%s.sqlite" % n)
                if not os.path.exists(path):
                    log("export data for %s: %d runs" % (n, runs))
                    sides[i].synth(path, runs, 3, runs * 3 + 400, start_at_midnight=False, sums=False)
                paths.append(path)
            pairs = int(driver.sql(paths[1], "SELECT count(*) " + driver.PAIRS_FROM + ";"))
            cmds = [[s.wxdb, "--db", p, "export", "pairs", "--location", LOC, "--source", "station"]
                    for s, p in zip(sides, paths)]
            cpu, out = interleaved("export pairs", cmds, a.reps, log)
            rows.append(("export pairs, %s rows to a pipe" % f"{pairs:,}", cpu, out[0] == out[1]))
            hashes = [hashlib.sha256(o).hexdigest()[:12] for o in out]
            log("export output sha256 old %s new %s (%d bytes)" % (hashes[0], hashes[1], len(out[1])))
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)

    print("| measure | %s CPU s (median ± IQR/2) | %s CPU s | new / old | same output |" % (a.baseline_rev, a.rev))
    print("|---|---|---|---|---|")
    for label, cpu, same in rows:
        (mo, so), (mn, sn) = spread(cpu[0]), spread(cpu[1])
        print("| %s | %.3f ± %.3f | %.3f ± %.3f | %.3f | %s |" % (label, mo, so, mn, sn, mn / mo, "yes" if same else "NO"))
    print("\n%d interleaved repetitions each; CPU time is user+sys of the wxdb process (wait4)." % a.reps)


if __name__ == "__main__":
    main()
