import FoundationEssentials
import WxCore
import WxFetcher
import WxQueries
import WxStore
import WxStoreSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Option groups that several commands share (swift-argument-parser's `@OptionGroup`): each is a
// struct with its fields, its table, and the methods that turn its values into what commands use.

/// How a command prints rows.
enum OutputFormat: String, CaseIterable, Sendable {
    case table, csv, json
    /// The text format of the `verif` tool (`export pairs` only).
    case verif
    /// The chart alone, as one SVG document (`query verify|trend|forecast`).
    case svg
}

/// `--db`.
struct DatabaseOption {
    var path: String?

    static func options<R>(_ key: @autoclosure @escaping () -> WritableKeyPath<R, DatabaseOption>) -> [Opt<R>] {
        var db = Opt<DatabaseOption>.string(
            "db", "path", "The SQLite database (env WXDB_DB).", default: "$XDG_DATA_HOME/wxdb/wxdb.sqlite", \.path)
        db.spec.repeatable = true  // the last one wins, so a wrapper's --db can be overridden
        return [db.lifted(key())]
    }

    /// `--db`, else `WXDB_DB`, else the default under `$XDG_DATA_HOME`.
    func path(_ context: Context) -> String {
        if let path { return path }
        if let db = context.environment["WXDB_DB"], !db.isEmpty { return db }
        return defaultDatabasePath(environment: context.environment)
    }

    /// Opens the database. Only commands that store something pass `create`, and even they do not
    /// make a folder the user named that does not exist (a typo would silently start a new history);
    /// the default folder is wxdb's own and is made on first use. Reading commands pass `.read`: a
    /// database the user cannot write is then read without changing anything, and a note says so.
    func open(_ context: Context, create: Bool = false, access: StoreAccess = .write) throws -> any Store {
        let path = path(context)
        // A PostgreSQL connection string names no folder (StoreEngines.open takes it).
        if create, PostgresTarget.conninfo(path) == nil, !FileManager.default.fileExists(atPath: path) {
            let folder = PathText.folder(of: path)
            let chosen = self.path != nil || !(context.environment["WXDB_DB"] ?? "").isEmpty
            var isFolder = false
            if chosen, !folder.isEmpty,
                !FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) || !isFolder
            {
                throw CLIError(
                    "the folder \(folder) does not exist, so the database \(path) cannot be created there; create the folder first (mkdir -p '\(folder)') or pass another --db"
                )
            }
        }
        let store = try StoreEngines.open(
            path, create: create, busyTimeoutMilliseconds: Context.busyTimeoutMilliseconds, access: access)
        if let reason = store.readOnlyReason {
            context.note("Note: \(store.path) is read-only for you (\(reason)); reading it without changing anything")
        }
        return store
    }

    /// Where a command's `--output` goes (stdout when nil): every command that writes a file opens it
    /// here, so none can overwrite the database or follow a planted link.
    func outputFile(_ output: String?, _ context: Context) throws -> OutputFile {
        let db = path(context)
        let real =
            realpath(db, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? db
        // Both spellings: SQLite names the -wal, -shm and journal after the file a symlinked --db
        // resolves to, the lock is named after --db as given.
        let protected = [db, real].flatMap { name in
            ["", "-wal", "-shm", "-journal", ".ingest-lock"].map { name + $0 }
        }
        return try OutputFile(path: output, stdout: context.stdoutFD, protected: protected)
    }
}

/// `--api-key`, `--timeout`, `--attempts`: for commands that talk to Open-Meteo.
struct NetworkOptions {
    var apiKey: String?
    var timeout: Double?
    var attempts: Int?

    static func options<R>(_ key: @autoclosure @escaping () -> WritableKeyPath<R, NetworkOptions>) -> [Opt<R>] {
        var apiKey = Opt<NetworkOptions>.string(
            "api-key", "key", "Open-Meteo commercial API key (env WXDB_API_KEY); never printed or stored.", \.apiKey)
        apiKey.spec.repeatable = true  // the last one wins
        return [
            apiKey,
            .double(
                "timeout", "seconds", "Time allowed for each HTTP request (env WXDB_TIMEOUT).", in: 0.1...600,
                default: "30", \.timeout),
            .int(
                "attempts", "n", "Attempts per request on transport errors, 429 and 5xx.", in: 1...10, default: "4",
                \.attempts)
        ].map { $0.lifted(key()) }
    }

    /// Endpoints from the environment, with `--api-key` over `WXDB_API_KEY`.
    func endpoints(_ context: Context) -> Endpoints {
        let endpoints = Endpoints.from(environment: context.environment, apiKey: apiKey)
        context.apiKey = endpoints.apiKey
        return endpoints
    }

    func httpClient(_ context: Context) -> HTTPClient {
        let timeout = self.timeout ?? context.environment["WXDB_TIMEOUT"].flatMap(Double.init) ?? 30
        var retry = RetryPolicy()
        if let attempts { retry.attempts = attempts }
        if let base = context.environment["WXDB_RETRY_BASE_DELAY"].flatMap(Double.init) { retry.baseDelay = base }
        retry.maxTotal = max(retry.maxTotal, timeout * Double(retry.attempts) + 30)
        return HTTPClient(
            timeout: timeout, retry: retry, userAgent: "wxdb/\(WXDB.version)",
            sleep: context.sleep, now: context.now)
    }
}

/// `--location NAME`: the saved location a command works on (or narrows to).
struct LocationOption {
    var name: String?

    static func options<R>(
        _ key: @autoclosure @escaping () -> WritableKeyPath<R, LocationOption>, required: Bool = true,
        help: String = "The saved location."
    ) -> [Opt<R>] {
        [Opt<LocationOption>.string("location", "name", help, required: required, \.name).lifted(key())]
    }

    /// The named location; an unknown name is an error that suggests a close one.
    func resolve(_ store: any Store) throws -> Location {
        try Self.resolve(name ?? "", in: store)
    }

    static func resolve(_ name: String, in store: any Store) throws -> Location {
        if let location = try store.location(named: name) { return location }
        let names = try store.locations().map(\.name)
        // `berlin` is Berlin when no other name differs from it only in case.
        let sameLetters = names.filter { $0.lowercased() == name.lowercased() }
        if sameLetters.count == 1, let location = try store.location(named: sameLetters[0]) { return location }
        if let close = Suggest.closest(name, among: names) {
            throw CLIError("no location named \"\(name)\"; did you mean \"\(close)\"? See 'wxdb locations list'")
        }
        throw LocationError.unknown(name)
    }
}

/// `--from` and `--to`, both inclusive. What they filter on differs per command, so each says so.
struct TimeRangeOptions {
    var from: String?
    var to: String?

    static func options<R>(_ key: @autoclosure @escaping () -> WritableKeyPath<R, TimeRangeOptions>, on what: String)
        -> [Opt<R>]
    {
        [
            Opt<TimeRangeOptions>.string(
                "from", "time",
                "Only \(what) at or after this time (ISO 8601; a bare date is the location's local midnight).", \.from),
            .string(
                "to", "time", "Only \(what) up to this time, inclusive (a bare date includes that whole local day).",
                \.to)
        ].map { $0.lifted(key()) }
    }

    /// Checks the times' form, and their order where that needs no time zone.
    func validate() throws {
        var parsed: [CivilTime.Parsed] = []
        for (option, text) in [("from", from), ("to", to)] {
            guard let text, text != "now", !TimeInput.isRelativeDate(text) else { continue }
            guard let time = CivilTime.parse(text) else { throw TimeInput.notATime(text, option: option) }
            parsed.append(time)
        }
        if parsed.count == 2 {
            let (start, end) = (parsed[0], parsed[1])
            // --to is inclusive: a time includes its second, a bare date its whole day.
            let endWall = end.wallSeconds + (end.hasTime ? 1 : 86400)
            if start.offset == nil && end.offset == nil && start.wallSeconds >= endWall {
                throw UsageError("--from must be before --to")
            }
            if let a = start.offset, let b = end.offset, start.wallSeconds - Int64(a) >= endWall - Int64(b) {
                throw UsageError("--from must be before --to")
            }
        }
    }

    /// The half-open `[from, to)` span of instants in `timezone`.
    func resolve(timezone: String, now: Int64) throws -> TimeRange {
        let (from, to) = try TimeInput.range(from: from, to: to, timezone: timezone, now: now)
        return TimeRange(from: from, to: to)
    }
}

/// `--var NAME`: one hourly variable.
struct VariableOption {
    var name: String?

    static func options<R>(
        _ key: @autoclosure @escaping () -> WritableKeyPath<R, VariableOption>, required: Bool = false
    ) -> [Opt<R>] {
        [
            Opt<VariableOption>.string(
                "var", "variable", "Hourly variable, as Open-Meteo names it.", required: required,
                default: required ? nil : "temperature_2m", completions: Variables.hourlyNames, \.name
            ).lifted(key())
        ]
    }

    var variable: Variable { Variables.hourlyVariable(named: name ?? "temperature_2m")! }

    func validate() throws {
        guard let name else { return }
        if name.contains(","),
            name.split(separator: ",").allSatisfy({ Variables.hourlyVariable(named: String($0)) != nil })
        {
            throw UsageError(
                "--var takes one variable here; run the command once per variable (\(name.split(separator: ",").joined(separator: ", ")))"
            )
        }
        _ = try Self.hourly(name)
    }

    /// The hourly variable called `name`, or a usage error that suggests the closest one.
    static func hourly(_ name: String) throws -> Variable {
        if let variable = Variables.hourlyVariable(named: name) { return variable }
        throw UsageError(
            "--var '\(name)' is not an hourly variable wxdb keeps" + Suggest.phrase(name, among: Variables.hourlyNames)
                + "; the hourly variables are: \(Variables.hourlyNames.joined(separator: ", "))")
    }
}

/// `--format`: the formats a command can print, and its default.
struct FormatOption {
    var format: OutputFormat

    init() { format = .table }

    static func options<R>(
        _ key: @autoclosure @escaping () -> WritableKeyPath<R, FormatOption>,
        _ allowed: [OutputFormat] = [.table, .csv, .json],
        help: String? = nil
    ) -> [Opt<R>] {
        let names = allowed.map(\.rawValue)
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
        return [
            Opt<FormatOption>.choice(
                "format", "format", help ?? "\(list).", allowed: allowed, default: allowed[0], \.format
            ).lifted(key())
        ]
    }
}

/// `--units`: metric or imperial at display time.
struct UnitsOption {
    var units: UnitSystem = .metric

    static func options<R>(_ key: @autoclosure @escaping () -> WritableKeyPath<R, UnitsOption>) -> [Opt<R>] {
        [
            Opt<UnitsOption>.choice(
                "units", "system", "metric or imperial (°F, mph, inch), applied when printing.", default: .metric,
                \.units
            )
            .lifted(key())
        ]
    }
}

// Options that several commands take with the same name and value: each is declared once here,
// on a command's own field, with the help that command's meaning needs.

/// `--model NAME`: one forecast model, a filter or the one to take.
enum ModelOption {
    static func option<R>(
        _ path: @autoclosure @escaping () -> WritableKeyPath<R, String?>, help: String = "Only this model's runs.",
        default defaultValue: String? = nil
    ) -> Opt<R> {
        .string("model", "model", help, default: defaultValue, path())
    }
}

/// `--models A,B` (backfill's `--model A,B`): several forecast models.
enum ModelListOption {
    static func option<R>(
        _ path: @autoclosure @escaping () -> WritableKeyPath<R, [String]>, name: String = "models", help: String,
        default defaultValue: String? = nil, completions: [String] = []
    ) -> Opt<R> {
        .list(name, "model", help, default: defaultValue, completions: completions, path())
    }
}

/// `--source NAME`: an observation source, the one to pair forecasts with (reading commands) or the
/// name to store under (``ObservationSourceOption``, the station imports).
enum SourceOption {
    /// What the query commands choose without `--source`.
    static let ranked =
        "the first of imported sources, era5, analysis:<model> (of another model), current that has observations at the forecast hours asked for"

    static func option<R>(
        _ path: @autoclosure @escaping () -> WritableKeyPath<R, String?>, help: String = "Observation source.",
        default defaultValue: String? = ranked
    ) -> Opt<R> {
        .string("source", "name", help, default: defaultValue, path())
    }
}

/// `--timezone TZ`: a tz database name.
enum TimezoneOption {
    static func option<R>(
        _ path: @autoclosure @escaping () -> WritableKeyPath<R, String?>, help: String,
        default defaultValue: String? = nil
    ) -> Opt<R> {
        .string("timezone", "tz", help, default: defaultValue, path())
    }
}

/// `--force`: go ahead where wxdb would refuse; the help says what is accepted.
enum ForceOption {
    static func option<R>(_ path: @autoclosure @escaping () -> WritableKeyPath<R, Bool>, help: String) -> Opt<R> {
        .flag("force", help, path())
    }
}

/// `--output FILE`: a file written instead of stdout, replaced only when complete.
enum OutputPathOption {
    static func option<R>(_ path: @autoclosure @escaping () -> WritableKeyPath<R, String?>, help: String)
        -> Opt<R>
    {
        .string("output", "file", help, path())
    }
}

/// `--var A,B`: several variables.
enum VariableListOption {
    static func option<R>(
        _ path: @autoclosure @escaping () -> WritableKeyPath<R, [String]>, help: String, default defaultValue: String,
        completions: [String]
    ) -> Opt<R> {
        .list("var", "variable", help, default: defaultValue, completions: completions, path())
    }
}

/// `--at TIME`: the hour a command looks at.
enum AtOption {
    static func option<R>(
        _ path: @autoclosure @escaping () -> WritableKeyPath<R, String?>, help: String, required: Bool = false,
        default defaultValue: String? = nil
    ) -> Opt<R> {
        .string("at", "time", help, required: required, default: defaultValue, path())
    }
}

/// `--confidence PERCENT`: the level of a score's intervals, 0 for none.
enum ConfidenceOption {
    static func option<R>(_ path: @autoclosure @escaping () -> WritableKeyPath<R, Double?>, help: String)
        -> Opt<R>
    {
        .double("confidence", "percent", help, in: 0...99.9, default: "95", path())
    }
}

/// `--lead-from` and `--lead-to`, in hours; what they bound differs per command, so each says so.
enum LeadRangeOptions {
    static func options<R>(
        _ from: @autoclosure @escaping () -> WritableKeyPath<R, Double?>,
        _ to: @autoclosure @escaping () -> WritableKeyPath<R, Double?>,
        help: (from: String, to: String), in range: ClosedRange<Double>,
        default defaults: (from: String, to: String)? = nil
    ) -> [Opt<R>] {
        [
            .double("lead-from", "hours", help.from, in: range, default: defaults?.from, from()),
            .double("lead-to", "hours", help.to, in: range, default: defaults?.to, to())
        ]
    }
}

/// `--from DATE` and `--to DATE`, both required: whole local days, for commands that fetch by day.
enum DateRangeOptions {
    /// `of` names what the dates are of in the help ("observations"), or nothing.
    static func options<R>(
        _ from: @autoclosure @escaping () -> WritableKeyPath<R, String?>,
        _ to: @autoclosure @escaping () -> WritableKeyPath<R, String?>, of what: String? = nil
    ) -> [Opt<R>] {
        let of = what.map { " of " + $0 } ?? ""
        return [
            .string("from", "date", "First date\(of), YYYY-MM-DD (the location's local date).", required: true, from()),
            .string("to", "date", "Last date\(of), YYYY-MM-DD, inclusive.", required: true, to())
        ]
    }
}

/// Turns command-line times into UTC instants.
enum TimeInput {
    static func notATime(_ text: String, option: String) -> UsageError {
        UsageError(
            "--\(option) '\(text)' is not a time; use ISO 8601 like 2026-11-30, 2026-11-30T12:00Z or 2026-11-30T13:00+01:00"
        )
    }

    /// ISO 8601 with `Z` or an offset is absolute; a bare date or a time without offset is read in
    /// `timezone` (a tz-database name). `now` is also accepted.
    /// `today`, `yesterday` or `-Nd` (N days ago): a date relative to the clock.
    static func isRelativeDate(_ text: String) -> Bool { relativeDays(text) != nil }

    private static func relativeDays(_ text: String) -> Int64? {
        switch text {
        case "today": return 0
        case "yesterday": return 1
        default:
            guard text.hasPrefix("-"), text.hasSuffix("d"), let days = Int64(text.dropFirst().dropLast()),
                (0...36_500).contains(days)
            else { return nil }
            return days
        }
    }

    /// A relative date as the bare local date it names in `timezone` (`2026-11-23`); other text as given.
    static func absolute(_ text: String, timezone: String, now: Int64) -> String {
        guard let days = relativeDays(text) else { return text }
        let zone = ZoneTime.isKnown(timezone) ? timezone : "UTC"
        let today = ZoneTime.date(of: now, timezone: zone)
        guard let midnight = CivilTime.parseLabel(today) else { return text }
        return String(CivilTime.isoUTC(midnight - days * 86400).prefix(10))
    }

    static func resolve(_ text: String, timezone: String, now: Int64, option: String) throws -> Int64 {
        if text == "now" { return now }
        let text = absolute(text, timezone: timezone, now: now)
        guard let parsed = CivilTime.parse(text) else { throw notATime(text, option: option) }
        if let offset = parsed.offset { return parsed.wallSeconds - Int64(offset) }
        guard ZoneTime.isKnown(timezone) else {
            // `auto` until the first fetch tells wxdb the zone: guessing would shift times by hours.
            throw CLIError(
                "--\(option) '\(text)' has no UTC offset and the location's time zone is not known yet (\(timezone.clippedForMessage())); write it with Z or an offset (e.g. \(text.count == 10 ? text + "T00:00Z" : text + "Z")), or set it with 'wxdb locations set NAME --timezone TZ' (an ingest also learns it)"
            )
        }
        return localToUTC(parsed.wallSeconds, timezone: timezone)
    }

    /// `--from` (inclusive) and `--to` (inclusive; a bare date includes its whole local day) as a
    /// half-open `[from, to)` span of instants, the same for every command.
    static func range(from fromText: String?, to toText: String?, timezone: String, now: Int64) throws -> (
        from: Int64?, to: Int64?
    ) {
        var from: Int64?
        var to: Int64?
        if let text = fromText {
            from = try resolve(text, timezone: timezone, now: now, option: "from")
        }
        if let toText {
            let text = absolute(toText, timezone: timezone, now: now)
            let end = try resolve(text, timezone: timezone, now: now, option: "to")
            if let parsed = CivilTime.parse(text), !parsed.hasTime {
                to = localToUTC(parsed.wallSeconds + 86400, timezone: timezone)
            } else {
                to = end + 1
            }
        }
        if let from, let to, from >= to {
            throw UsageError("--from must be before --to")
        }
        return (from, to)
    }

    static func localToUTC(_ wall: Int64, timezone: String) -> Int64 {
        ZoneTime.instant(ofWall: wall, timezone: timezone)
    }

    /// Local wall time for display: `2026-11-30 13:00` in the zone (falls back to UTC).
    static func local(_ instant: Int64, timezone: String) -> String {
        CivilTime.localString(instant, offset: ZoneTime.offset(at: instant, timezone: timezone))
    }
}
