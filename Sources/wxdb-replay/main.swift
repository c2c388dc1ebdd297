// `wxdb-replay`: runs the replay server as its own process so CLI tests and the offline demo can
// point wxdb at it. The only stdout output is the base URL line, so a parent process can read
// exactly one line and know the server is ready.
// Foundation: ISO8601DateFormatter for --now and the generator's dates (the test server, not wxdb).
import Foundation
import WxReplay

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let usage = """
    usage: wxdb-replay [--env] [--fixtures DIR] [--port N] [--run-interval SECONDS] [--now TIME]
                       [--ensemble-dispersion D] [--forecast LAT,LON,FILE ...]

    Serves a local imitation of the Open-Meteo API on 127.0.0.1 for tests and offline demos.
    Prints one line, the base URL (http://127.0.0.1:PORT), then serves until SIGTERM or SIGINT.

      --env                   start the server in the background and print the shell exports that
                              point wxdb at it, for: eval "$(wxdb-replay --env)"
                              (stop it with: kill $WXDB_REPLAY_PID)

      --fixtures DIR          folder with sample responses (default: ./Fixtures)
      --port N                port to bind (default 0: any free port)
      --run-interval SECONDS  run length of best_match and unknown models (default 10800)
      --now TIME              fix the server's clock: Unix seconds or YYYY-MM-DDTHH:MM (UTC)
      --ensemble-dispersion D the Ensemble API's spread next to a calibrated one (default 1;
                              below 1 under-dispersive, above 1 over-dispersive)
      --forecast LAT,LON,FILE serve FILE for forecast requests at LAT,LON (repeatable)

    Endpoints (base URL + path):
      /v1/forecast                 live forecast: each model's latest run available at the clock
      /single-runs/v1/forecast     Single Runs API: run=YYYY-MM-DDTHH:MM (UTC) required; same
                                   parameters; forecast_days defaults to 16; a run before the
                                   archive's start, off the model's cadence or a full 3 hours, or
                                   not yet available at the clock is a 400 naming the run
                                   (WXDB_SINGLE_RUNS_URL=BASE/single-runs/v1/forecast)
      /data/<domain>/static/meta.json  model run metadata (WXDB_META_URL=BASE/data)
      /v1/ensemble                 Ensemble API: every member of an ensemble model's latest run,
                                   drawn around /v1/archive's truth (WXDB_ENSEMBLE_URL=BASE/v1/ensemble)
      /v1/archive, /v1/search      observed weather (ERA5-like) and geocoding
      /cgi-bin/request/asos.py     IEM's METAR archive (WXDB_IEM_ASOS_URL=BASE/cgi-bin/request/asos.py)
      /pub/data/noaa/isd-lite/Y/ID-Y.gz, /pub/data/noaa/isd-history.csv
                                   ISD-Lite station-years and the station list (WXDB_ISD_LITE_URL=
                                   BASE/pub/data/noaa/isd-lite, WXDB_ISD_HISTORY_URL=BASE/pub/data/noaa/isd-history.csv);
                                   a few real stations (EDDH, EDDB, KDSM ...), synthetic values

    Control endpoints (not logged): /_control/fault?path=&kind=&times=..., /_control/requests,
    /_control/stats (requests per path), /_control/reset, /_control/meta?model=&init=,
    /_control/run-interval?seconds=, /_control/now?t=UNIX|YYYY-MM-DDTHH:MM|real,
    /_control/ensemble?dispersion=

    Fault kinds: status&code=&reason=, delay&seconds=, truncated, reset, ratelimit,
    toomany&reason=minutely|hourly|daily|TEXT&retry_after=SECONDS|HTTP-DATE, echokey&code=,
    redirect&to=, wrongtype, trickle&bps=, empty, notjson, swapped (multi-location elements
    reversed), wrongid (location_id of the next location), fargrid&lat=&lon= (first element's grid
    point moved), hugetz&length= (timezone name of that length), endless (chunked body without end),
    bomb&encoding=gzip|br|zstd (a compressed body of 0.5 MB or less that unpacks to 512 MiB-1 GiB)
    """

/// `generate --out DIR --lat D --lon D [--timezone TZ] --start ISO-UTC-HOUR --days N [--every HOURS]`:
/// writes `DIR/runs.txt` (one `FILE FETCHED_AT` line per forecast response, oldest first), the
/// response files, and `DIR/observations.csv` covering the days fetched.
func generate(_ arguments: [String]) -> Never {
    var options: [String: String] = [:]
    var rest = arguments
    while !rest.isEmpty {
        let key = rest.removeFirst()
        guard key.hasPrefix("--"), !rest.isEmpty else { fail("generate: expected --option value, got \(key)") }
        options[String(key.dropFirst(2))] = rest.removeFirst()
    }
    guard let out = options["out"], let lat = options["lat"].flatMap(Double.init),
        let lon = options["lon"].flatMap(Double.init),
        let startText = options["start"], let days = options["days"].flatMap(Int.init), days > 0
    else {
        fail("generate needs --out DIR --lat D --lon D --start YYYY-MM-DDTHH:00Z --days N")
    }
    let every = options["every"].flatMap(Int.init) ?? 3
    let timezone = options["timezone"] ?? "GMT"
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    guard
        let start = formatter.date(
            from: startText.count == 17 ? startText.replacingOccurrences(of: "Z", with: ":00Z") : startText)
    else {
        fail("generate: --start must look like 2026-11-20T00:00Z")
    }
    let folder = URL(fileURLWithPath: out)
    do {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var index = ""
        var t = start
        let end = start.addingTimeInterval(TimeInterval(days * 86400))
        while t < end {
            // Fetched 4 h after the run started, as global models become available.
            let fetched = t.addingTimeInterval(4 * 3600 + 137)
            let body = try SyntheticHistory.forecast(
                latitude: lat, longitude: lon, timezone: timezone, now: fetched, initTime: Int(t.timeIntervalSince1970))
            let name = "run-\(Int(t.timeIntervalSince1970)).json"
            try body.write(to: folder.appendingPathComponent(name))
            index += "\(name) \(formatter.string(from: fetched))\n"
            t = t.addingTimeInterval(TimeInterval(every * 3600))
        }
        try index.write(to: folder.appendingPathComponent("runs.txt"), atomically: true, encoding: .utf8)
        let dayFormatter = ISO8601DateFormatter()
        dayFormatter.formatOptions = [.withFullDate]
        let csv = try SyntheticHistory.observationsCSV(
            latitude: lat, longitude: lon, startDate: dayFormatter.string(from: start),
            endDate: dayFormatter.string(from: end.addingTimeInterval(-1)))
        try csv.write(to: folder.appendingPathComponent("observations.csv"), atomically: true, encoding: .utf8)
    } catch {
        fail("generate: \(error)")
    }
    exit(0)
}

/// The `export` lines that point wxdb at a replay server at `base`, run as process `pid`.
func environmentExports(base: String, pid: Int32) -> String {
    let urls = [
        ("WXDB_FORECAST_URL", "/v1/forecast"), ("WXDB_ARCHIVE_URL", "/v1/archive"),
        ("WXDB_GEOCODING_URL", "/v1/search"), ("WXDB_META_URL", "/data"),
        ("WXDB_SINGLE_RUNS_URL", "/single-runs/v1/forecast"), ("WXDB_ENSEMBLE_URL", "/v1/ensemble")
    ]
    var text = urls.map { "export \($0.0)='\(base)\($0.1)'\n" }.joined()
    text += "export WXDB_REPLAY_PID=\(pid)\n"
    text += "# wxdb now talks to the replay server at \(base); stop it with: kill $WXDB_REPLAY_PID\n"
    return text
}

/// `--env`: runs the server as a detached child (its stdout a pipe read for the URL line, stdin and
/// stderr /dev/null) and prints the exports. The child must not hold the caller's stdout, or
/// `$(wxdb-replay --env)` would wait for it to exit.
func startInBackground(_ arguments: [String]) -> Never {
    let child = Process()
    // This program's own file (its real path, so `ps` names it), else argv[0].
    let me = URL(fileURLWithPath: "/proc/self/exe")
    child.executableURL =
        FileManager.default.fileExists(atPath: me.path)
        ? me.resolvingSymlinksInPath() : URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = arguments
    let pipe = Pipe()
    child.standardOutput = pipe
    child.standardInput = FileHandle.nullDevice
    child.standardError = FileHandle.nullDevice
    do { try child.run() } catch { fail("cannot start the server: \(error)") }
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = pipe.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
    }
    let base = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard base.hasPrefix("http://") else {
        fail("the server did not start (run wxdb-replay without --env to see why)")
    }
    FileHandle.standardOutput.write(Data(environmentExports(base: base, pid: child.processIdentifier).utf8))
    exit(0)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("wxdb-replay: \(message)\n\n\(usage)\n".utf8))
    exit(2)
}

var fixtures = URL(fileURLWithPath: "Fixtures")
var port = 0
var runInterval: Int?
var dispersion: Double?
var fixedNow: Date?
var forecasts: [(Double, Double, URL)] = []

var args = Array(CommandLine.arguments.dropFirst())
var background = false

// `wxdb-replay generate`: write a synthetic history (forecast files + observations CSV) and exit.
if args.first == "generate" {
    args.removeFirst()
    generate(args)
}

while !args.isEmpty {
    let arg = args.removeFirst()
    func value() -> String {
        guard !args.isEmpty else { fail("\(arg) needs a value") }
        return args.removeFirst()
    }
    switch arg {
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--env":
        background = true
    case "--fixtures":
        fixtures = URL(fileURLWithPath: value())
    case "--port":
        guard let p = Int(value()), (0...65535).contains(p) else { fail("--port needs a number 0...65535") }
        port = p
    case "--run-interval":
        guard let s = Int(value()), s > 0 else { fail("--run-interval needs a positive number of seconds") }
        runInterval = s
    case "--now":
        let text = value()
        let clock = text.hasSuffix("Z") ? String(text.dropLast()) : text
        guard let seconds = Int(text) ?? ReplayServer.parseTime(clock) else {
            fail("--now needs Unix seconds or YYYY-MM-DDTHH:MM (UTC)")
        }
        fixedNow = Date(timeIntervalSince1970: TimeInterval(seconds))
    case "--ensemble-dispersion":
        guard let d = Double(value()), d >= 0 else { fail("--ensemble-dispersion needs a number 0 or more") }
        dispersion = d
    case "--forecast":
        let parts = value().split(separator: ",", maxSplits: 2).map(String.init)
        guard parts.count == 3, let lat = Double(parts[0]), let lon = Double(parts[1]) else {
            fail("--forecast needs LAT,LON,FILE")
        }
        forecasts.append((lat, lon, URL(fileURLWithPath: parts[2])))
    default:
        fail("unknown argument \(arg)")
    }
}

// Checked first, so a bad argument is reported here rather than lost in the detached child.
if background {
    startInBackground(CommandLine.arguments.dropFirst().filter { $0 != "--env" })
}

// A client that hangs up mid-response must not kill the server (sends also use MSG_NOSIGNAL).
signal(SIGPIPE, SIG_IGN)

let server = ReplayServer(fixtures: fixtures)
if let runInterval { server.runIntervalSeconds = runInterval }
if let dispersion { server.ensembleDispersion = dispersion }
if let fixedNow { server.now = { fixedNow } }
for (lat, lon, file) in forecasts {
    guard let body = try? Data(contentsOf: file) else { fail("cannot read \(file.path)") }
    server.registerForecast(latitude: lat, longitude: lon, body: body)
}
do {
    try server.start(port: port)
} catch {
    fail("cannot start: \(error)")
}

// Write through FileHandle (unbuffered) rather than print(): a pipe-connected stdout is block
// buffered and the parent would wait for a line that never arrives.
FileHandle.standardOutput.write(Data((server.baseURL + "\n").utf8))

// SIGTERM/SIGINT end the process at once. Only async-signal-safe work is allowed in a handler,
// so it just calls _exit: the kernel closes the sockets, and there is no state to flush.
// (A DispatchSource signal source was tried first; on Linux it did not reliably take over the
// default action, and the process died with status 143 instead of exiting cleanly.)
signal(SIGTERM) { _ in _exit(0) }
signal(SIGINT) { _ in _exit(0) }
// A parent may spawn us from a thread that blocks these signals (Foundation's Process on Linux
// passes on the mask of the libdispatch thread that calls run()); the mask is inherited, and a
// blocked SIGTERM would stay pending forever.
var unblock = sigset_t()
sigemptyset(&unblock)
sigaddset(&unblock, SIGTERM)
sigaddset(&unblock, SIGINT)
pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
while true { pause() }
