#!/usr/bin/env python3
"""Deterministic, Open-Meteo-shaped forecast responses for Scripts/bench.

Each response is what `/v1/forecast?...&timeformat=unixtime&forecast_days=16` returns for one
location: the 12 hourly and 8 daily variables wxdb keeps, with Open-Meteo's key order and fixed
decimals (temperatures, pressure and wind 1 decimal, precipitation 2, percentages, codes and
degrees 0). Response `i` is fetched at T0 + i hours; its content is run `run_of(i)` of the model,
so with `--every 3` two fetches in three repeat the previous run's content byte for byte (except
`generationtime_ms`, which differs in every response as it does in the API).

Everything is seeded: the same arguments give the same bytes on every machine.

    bench-gen.py OUTDIR --count N [--every K] [--csv]

writes OUTDIR/r00000.json ... and OUTDIR/manifest.json (fetched_at of each file); with --csv
also OUTDIR/runs.csv, hourly.csv, daily.csv: the rows wxdb stores for the distinct runs (run ids
1..), for the sqlite3 `.import` floor.
"""
import json
import math
import os
import random
import sys

T0 = 1735689600          # 2025-01-01T00:00:00Z
LAT, LON, ELEV = 52.52, 13.419998, 38.0
OFFSET, TZ, ABBR = 3600, "Europe/Berlin", "GMT+1"
HOURS, DAYS = 384, 16
SEED = 20250101

HOURLY = ["temperature_2m", "relative_humidity_2m", "dew_point_2m", "apparent_temperature",
          "precipitation_probability", "precipitation", "weather_code", "cloud_cover",
          "pressure_msl", "wind_speed_10m", "wind_direction_10m", "wind_gusts_10m"]
HOURLY_UNITS = ["°C", "%", "°C", "°C", "%", "mm", "wmo code", "%", "hPa", "km/h", "°", "km/h"]
HOURLY_DEC = [1, 0, 1, 1, 0, 2, 0, 0, 1, 1, 0, 1]
DAILY = ["weather_code", "temperature_2m_max", "temperature_2m_min", "precipitation_sum",
         "precipitation_probability_max", "wind_speed_10m_max", "sunrise", "sunset"]
DAILY_UNITS = ["wmo code", "°C", "°C", "mm", "%", "km/h", "unixtime", "unixtime"]
DAILY_DEC = [0, 1, 1, 2, 0, 1, None, None]


def fmt(v, d):
    """Open-Meteo's fixed decimals, without '-0.0'."""
    if d == 0:
        s = str(int(round(v)))
        return "0" if s == "-0" else s
    s = "%.*f" % (d, v)
    if s.startswith("-") and float(s) == 0:
        s = s[1:]
    return s


def truth(t):
    """The weather that 'happens' at instant t: smooth seasonal + diurnal + weather systems."""
    day = (t - T0) / 86400.0
    hour = ((t + OFFSET) % 86400) / 3600.0
    temp = 9 - 9 * math.cos(2 * math.pi * (day - 15) / 365.25) + 4.5 * math.sin(2 * math.pi * (hour - 9) / 24) \
        + 3 * math.sin(day * 0.9) + 1.5 * math.sin(day * 2.3 + 1)
    wet = 0.5 + 0.5 * math.sin(day * 1.3 + 0.5) * math.cos(day * 0.37)
    wind = 12 + 8 * math.sin(day * 0.8 + 2) + 3 * math.sin(2 * math.pi * (hour - 14) / 24)
    return temp, wet, wind


def run_of(i, every):
    return i // every


def issued_of_run(run, every):
    return T0 + run * every * 3600


def response(i, every):
    """The text of response i."""
    fetched = T0 + i * 3600 + 120
    run = run_of(i, every)
    first_day = (fetched + OFFSET) // 86400
    start = first_day * 86400 - OFFSET
    issued = issued_of_run(run, every)
    rng = random.Random(SEED * 1_000_003 + run)
    bias_t = rng.gauss(0, 0.4)
    cols = [[] for _ in HOURLY]
    times = [start + h * 3600 for h in range(HOURS)]
    for t in times:
        lead = max(0.0, (t - issued) / 3600.0)
        s = 0.15 + lead / 60.0
        temp, wet, wind = truth(t)
        temp += bias_t + rng.gauss(0, s)
        wet = min(1.0, max(0.0, wet + rng.gauss(0, 0.05 + lead / 600)))
        wind = max(0.0, wind + rng.gauss(0, 0.5 + lead / 40))
        rh = min(100, max(8, round(55 + 40 * wet - 1.2 * (temp - 10))))
        dew = temp - (100 - rh) / 5.0
        app = temp - wind / 8.0 + (rh - 60) / 40.0
        pp = round(100 * wet * wet)
        precip = max(0.0, (wet - 0.7) * 4 + rng.gauss(0, 0.1)) if wet > 0.7 else 0.0
        cloud = min(100, max(0, round(110 * wet - 10 + rng.gauss(0, 5))))
        code = 0 if cloud < 20 else 1 if cloud < 50 else 2 if cloud < 80 else 3
        if precip >= 0.01:
            code = 61 if precip < 0.5 else 63 if precip < 2 else 65
            if temp < 0.5:
                code = 71 if precip < 0.5 else 73
        pres = 1013 + 12 * math.sin((t - T0) / 86400.0 * 0.7) - 8 * wet + rng.gauss(0, 0.3)
        wdir = int((200 + 90 * math.sin((t - T0) / 86400.0 * 0.5) + rng.gauss(0, 10)) % 360)
        gust = wind * 1.7 + abs(rng.gauss(0, 2))
        for col, v in zip(cols, (temp, rh, dew, app, pp, precip, code, cloud, pres, wind, wdir, gust)):
            col.append(v)
    texts = [[fmt(v, d) for v in col] for col, d in zip(cols, HOURLY_DEC)]

    daily_times = [start + d * 86400 for d in range(DAYS)]
    dcols = [[] for _ in DAILY]
    for d, dt in enumerate(daily_times):
        sl = slice(d * 24, d * 24 + 24)
        hv = [[float(x) for x in texts[k][sl]] for k in range(len(HOURLY))]
        doy = (dt - T0) / 86400.0
        half = 6 * 3600 + 2.5 * 3600 * -math.cos(2 * math.pi * (doy + 10) / 365.25)
        noon = dt + 12 * 3600 + 600
        vals = (max(hv[6]), max(hv[0]), min(hv[0]), sum(hv[5]), max(hv[4]), max(hv[9]),
                int(noon - half) // 60 * 60, int(noon + half) // 60 * 60)
        for col, v in zip(dcols, vals):
            col.append(v)
    dtexts = [[str(v) if dec is None else fmt(v, dec) for v in col] for col, dec in zip(dcols, DAILY_DEC)]

    o = ['{"latitude":%s,"longitude":%s,"generationtime_ms":%s,"utc_offset_seconds":%d,"timezone":"%s",'
         '"timezone_abbreviation":"%s","elevation":%s' % (LAT, LON, "%.6f" % (0.02 + (i % 997) / 10000.0),
                                                          OFFSET, TZ, ABBR, ELEV)]
    o.append(',"hourly_units":{"time":"unixtime"')
    o.extend(',"%s":"%s"' % kv for kv in zip(HOURLY, HOURLY_UNITS))
    o.append('},"hourly":{"time":[' + ",".join(map(str, times)) + "]")
    o.extend(',"%s":[%s]' % (name, ",".join(col)) for name, col in zip(HOURLY, texts))
    o.append('},"daily_units":{"time":"unixtime"')
    o.extend(',"%s":"%s"' % kv for kv in zip(DAILY, DAILY_UNITS))
    o.append('},"daily":{"time":[' + ",".join(map(str, daily_times)) + "]")
    o.extend(',"%s":[%s]' % (name, ",".join(col)) for name, col in zip(DAILY, dtexts))
    o.append("}}")
    return "".join(o), fetched


def date_of(t):
    import time
    return time.strftime("%Y-%m-%d", time.gmtime(t + OFFSET))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--every", type=int, default=1, help="the model updates every K hours (fetches are hourly)")
    ap.add_argument("--csv", action="store_true", help="also write the distinct runs' rows as CSV")
    a = ap.parse_args(argv)
    os.makedirs(a.outdir, exist_ok=True)
    manifest = []
    csvs = None
    if a.csv:
        csvs = [open(os.path.join(a.outdir, n), "w") for n in ("runs.csv", "hourly.csv", "daily.csv")]
    last_run = None
    run_id = 0
    for i in range(a.count):
        text, fetched = response(i, a.every)
        name = "r%05d.json" % i
        with open(os.path.join(a.outdir, name), "w") as f:
            f.write(text)
        manifest.append({"file": name, "fetched_at": fetched})
        if csvs and run_of(i, a.every) != last_run:
            last_run = run_of(i, a.every)
            run_id += 1
            doc = json.loads(text)
            h, d = doc["hourly"], doc["daily"]
            csvs[0].write("%d,1,best_match,%d,first_fetch,%d,%s,%s,%s,%d,%s,%d,%d,%d,%d,%d\n" % (
                run_id, fetched, fetched, LAT, LON, ELEV, OFFSET, TZ, run_id, h["time"][0], h["time"][-1],
                len(h["time"]), len(d["time"])))
            cols = [h[n] for n in HOURLY]
            for k, t in enumerate(h["time"]):
                csvs[1].write("%d,%d,%s\n" % (run_id, t, ",".join(repr(c[k]) for c in cols)))
            dcols = [d[n] for n in DAILY]
            for k, t in enumerate(d["time"]):
                csvs[2].write("%d,%s,%s\n" % (run_id, date_of(t), ",".join(repr(c[k]) for c in dcols)))
    with open(os.path.join(a.outdir, "manifest.json"), "w") as f:
        json.dump({"count": a.count, "every": a.every, "files": manifest}, f)
    if csvs:
        for f in csvs:
            f.close()


if __name__ == "__main__":
    main(sys.argv[1:])
