import Foundation
import WxCore
import WxStore

enum ImportCommand {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var files: [String] = []
        var location = LocationOption()
        var fetchedAt: String?
        var model: String?

        static var arguments: [ArgumentSpec] {
            [ArgumentSpec(name: "file", help: "Open-Meteo forecast responses (JSON, one location each).", variadic: true)]
        }

        static var table: [Opt<Options>] {
            LocationOption.options(\.location, help: "The saved location the responses are for.")
                + [.string("fetched-at", "time", "When the responses were fetched (ISO 8601; without offset: the location's zone).",
                           required: true, \.fetchedAt),
                   .string("model", "model", "Model name of an unsuffixed response, or the one model to take from a multi-model one.",
                           default: "the location's first model", \.model)]
                + DatabaseOption.options(\.database)
        }

        mutating func take(_ positionals: [String]) throws { files = positionals }

        func validate() throws {
            if let fetchedAt, fetchedAt != "now", CivilTime.parse(fetchedAt) == nil { throw TimeInput.notATime(fetchedAt, option: "fetched-at") }
        }
    }

    static var command: Command {
        Command(
            name: "import",
            abstract: "Store saved Open-Meteo JSON responses as if they had been fetched at a given time.",
            discussion: "Every file is checked before anything is stored: one bad file stores nothing.",
            options: Options.self, run: run)
    }

    static func run(_ args: Options, _ context: Context) throws {
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        let fetchedAt = try TimeInput.resolve(args.fetchedAt!, timezone: location.timezone, now: context.nowUnix, option: "fetched-at")
        let model = args.model

        // One transaction for every file, each decoded just before it is stored: memory stays
        // flat however many files there are, and one bad file rolls everything back.
        let outcomes = try store.storeAll(args.files, for: location, make: { path in
            let data = try readInput(path, nothingDone: "Nothing was imported")
            let response: ForecastResponse
            do {
                response = try ForecastDecoder.decodeSingle(data, defaultModel: location.defaultModel, onlyModel: model)
            } catch let error as DecodeError {
                throw CLIError("\(path): \(error.description). Nothing was imported")
            }
            return (response, FetchRecord(fetchedAt: fetchedAt, origin: .import, request: path))
        }, stored: { path, outcomes in
            if context.verbose {
                for outcome in outcomes { context.err("\(path): \(outcome.model) \(outcome.kind.rawValue) run \(outcome.runID) (\(outcome.hours) hours)") }
            }
        })
        let stored = outcomes.filter { $0.kind == .stored }
        let repeated = outcomes.count - stored.count
        context.note("Imported \(args.files.count) file(s) for \(location.name): \(stored.count) new run(s) (\(stored.map(\.hours).reduce(0, +)) hours), \(repeated) repeated")
    }
}
