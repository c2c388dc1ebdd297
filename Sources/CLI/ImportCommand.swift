import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum ImportCommand {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var files: [String] = []
        var location = LocationOption()
        var fetchedAt: String?
        var issuedAt: String?
        var model: String?
        var force = false

        static var arguments: [ArgumentSpec] {
            [
                ArgumentSpec(
                    name: "file", help: "Open-Meteo forecast responses (JSON, one location each).", variadic: true)
            ]
        }

        static var table: [Opt<Options>] {
            LocationOption.options(\.location, help: "The saved location the responses are for.")
                + [
                    .string(
                        "fetched-at", "time",
                        "When the responses were fetched (ISO 8601; without offset: the location's zone).",
                        required: true, \.fetchedAt),
                    .string(
                        "issued-at", "time",
                        "The model run's initialisation time (ISO 8601; without offset: the location's zone), so leads are measured from it, not from --fetched-at.",
                        \.issuedAt),
                    ModelOption.option(
                        \.model,
                        help: "Model name of an unsuffixed response, or the one model to take from a multi-model one.",
                        default: "the location's first model"),
                    ForceOption.option(
                        \.force,
                        help:
                            "Store a response whose grid point is more than \(Int(GridDistance.maxKilometres)) km from the location."
                    )
                ]
                + DatabaseOption.options(\.database)
        }

        mutating func take(_ positionals: [String]) throws { files = positionals }

        func validate() throws {
            if let fetchedAt, fetchedAt != "now", CivilTime.parse(fetchedAt) == nil {
                throw TimeInput.notATime(fetchedAt, option: "fetched-at")
            }
            if let issuedAt, CivilTime.parse(issuedAt) == nil {
                throw TimeInput.notATime(issuedAt, option: "issued-at")
            }
        }
    }

    static var command: Command {
        Command(
            name: "import",
            abstract: "Store saved Open-Meteo JSON responses as if they had been fetched at a given time.",
            discussion: "Every file is checked before anything is stored: one bad file stores nothing.",
            options: Options.self, run: run)
    }

    /// How far (seconds) `--fetched-at` may be ahead of this machine's clock.
    static let futureMargin: Int64 = 600

    static func run(_ args: Options, _ context: Context) throws {
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        let fetchedAt = try TimeInput.resolve(
            args.fetchedAt!, timezone: location.timezone, now: context.nowUnix, option: "fetched-at")
        // A fetch time in the future would stand as the location's last fetch and the runs' issue
        // time; a few minutes of clock difference between machines are allowed.
        guard fetchedAt <= context.nowUnix + futureMargin else {
            throw CLIError(
                "--fetched-at \(CivilTime.isoUTC(fetchedAt)) is in the future (now is \(CivilTime.isoUTC(context.nowUnix))); give the time the responses were fetched. Nothing was imported"
            )
        }
        let model = args.model
        let issuedAt = try args.issuedAt.map {
            try TimeInput.resolve($0, timezone: location.timezone, now: context.nowUnix, option: "issued-at")
        }
        // A run is initialised before anyone can fetch it.
        if let issuedAt, issuedAt > fetchedAt {
            throw CLIError(
                "--issued-at \(CivilTime.isoUTC(issuedAt)) is after --fetched-at \(CivilTime.isoUTC(fetchedAt)); a run is initialised before it is fetched. Nothing was imported"
            )
        }
        var outOfRange = RangeFilter()

        // One transaction for every file, each decoded just before it is stored: memory stays
        // flat however many files there are, and one bad file rolls everything back.
        let outcomes = try store.storeAll(
            args.files, for: location,
            make: { path in
                let data = try readInput(path, nothingDone: "Nothing was imported")
                let response: ForecastResponse
                do {
                    response = try ForecastDecoder.decodeSingle(
                        data, defaultModel: location.defaultModel, onlyModel: model)
                } catch let error as DecodeError {
                    throw CLIError("\(path): \(error.description). Nothing was imported")
                }
                // The same check as a fetched answer's (`GridDistance`), which a saved file can skip with --force.
                if !args.force,
                    let problem = GridDistance.mismatch(
                        location: location.name, latitude: location.latitude, longitude: location.longitude,
                        gridLatitude: response.latitude, gridLongitude: response.longitude)
                {
                    throw CLIError(
                        "\(path): \(problem). Nothing was imported; check --location, or pass --force to store it anyway"
                    )
                }
                outOfRange.merge(RangeFilter(refused: response.outOfRange))
                let issued = issuedAt.map { time in
                    Dictionary(response.models.map { ($0.model, time) }, uniquingKeysWith: { a, _ in a })
                }
                return (
                    response,
                    FetchRecord(fetchedAt: fetchedAt, origin: .import, request: path, issuedAt: issued ?? [:])
                )
            },
            stored: { path, outcomes in
                if context.verbose {
                    for outcome in outcomes {
                        let what = outcome.continued ? "continued" : outcome.kind.rawValue
                        context.err(
                            "\(path): \(outcome.model) \(what) run \(outcome.runID) (\(outcome.hours) hours\(outcome.continued ? ", +\(outcome.addedHours) new" : ""))"
                        )
                    }
                }
            })
        let stored = outcomes.filter { $0.kind == .stored }
        // A run continued through a moved window grew: say by how much, not just "repeated".
        let continued = outcomes.filter { $0.continued }
        let repeated = outcomes.count - stored.count - continued.count
        var line =
            "Imported \(args.files.count) file(s) for \(location.name): \(stored.count) new run(s) (\(stored.map(\.hours).reduce(0, +)) hours)"
        if !continued.isEmpty {
            line += ", \(continued.count) run(s) continued (+\(continued.map(\.addedHours).reduce(0, +)) hours)"
        }
        context.note(line + ", \(repeated) repeated" + (outOfRange.note.map { "; " + $0 } ?? ""))
    }
}
