import Foundation
import WxFetcher
import WxStore

enum IngestCommand {
    static var command: Command {
        Command(
            name: "ingest",
            abstract: "Fetch the forecast for every saved location now and store each response as a run.",
            discussion: """
                Locations with the same models share one request (up to 100 per request). A response equal
                to the latest stored run adds a fetch-log entry and nothing else. Exit status 0 when every
                location was stored, 1 when anything failed; one summary line goes to stderr.
                """,
            options: [
                .option("location", "name", "Only this location.", repeatable: true),
                .option("forecast-days", "n", "Days of forecast to ask for, 1-16.", default: "16"),
                .option("past-days", "n", "Past days to ask for (kept as analysis observations), 0-92.", default: "1"),
                .option("wait", "seconds", "How long to wait for another running ingest to finish.", default: "300"),
            ] + networkOptions,
            run: { args, context in try await run(args, context) }
        )
    }

    static func run(_ args: ParsedArguments, _ context: Context) async throws {
        var options = IngestOptions()
        options.forecastDays = try args.int("forecast-days", in: 1...16) ?? 16
        options.pastDays = try args.int("past-days", in: 0...92) ?? 1
        let wait = try args.double("wait", in: 0...86400) ?? 300
        let store = try context.openStore(create: false)
        // One ingest at a time per database: a second one waits, then gives up with a message.
        let lock = try ProcessLock(databasePath: store.path, timeout: wait)
        defer { withExtendedLifetime(lock) {} }
        var locations = try store.locations()
        let wanted = args.values("location")
        if !wanted.isEmpty {
            locations = try wanted.map { try store.requireLocation(named: $0) }
        }
        guard !locations.isEmpty else {
            throw CLIError("no saved locations to ingest; add one with 'wxdb locations add NAME --lat DEG --lon DEG'")
        }
        let ingestor = Ingestor(store: store, client: try context.httpClient(), endpoints: context.endpoints,
                                now: { [context] in context.now() })
        if context.stderrIsTerminal && !context.quiet && locations.count > 10 {
            ingestor.progress = { done, total in
                let line = "\rIngesting: \(done)/\(total) locations" + (done == total ? "\r\u{1B}[K" : "")
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
        ingestor.notice = { [context] line in context.note(line) }
        if context.verbose {
            ingestor.log = { [context] line in context.err(line) }
        }
        let summary = await ingestor.run(locations, options: options)
        if summary.succeeded {
            context.note(summary.line)
        } else {
            context.err(summary.line)
            throw IngestFailed()
        }
    }
}

/// Ingest already printed its summary; exit 1 without another message.
struct IngestFailed: Error {}
