import FoundationEssentials
import WxFetcher
import WxPostgres
import WxStore
import WxStoreSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum IngestCommand {
    /// Ingest's ensemble half (EnsembleCommands.swift).
    enum Ensembles {}

    struct Options: CommandOptions {
        var database = DatabaseOption()
        var network = NetworkOptions()
        var locations: [String] = []
        var forecastDays: Int?
        var pastDays: Int?
        var wait: Double?
        var shard: Shard?

        static var table: [Opt<Options>] {
            // Repeated only, not comma-separated: a location's name may hold a comma ("Paris, TX").
            [
                Opt(
                    spec: OptionSpec(
                        name: "location", valueName: "name", help: "Only this location. Can be repeated.",
                        repeatable: true)
                ) {
                    $0.locations = $1
                },
                .int(
                    "forecast-days", "n", "Days of forecast to ask for, 1-16.", in: 1...16, default: "16",
                    \.forecastDays),
                .int(
                    "past-days", "n", "Past days to ask for (kept as analysis observations), 0-92.", in: 0...92,
                    default: "1", \.pastDays),
                .double(
                    "wait", "seconds", "How long to wait for another running ingest to finish.", in: 0...86400,
                    default: "300", \.wait),
                Opt(
                    spec: OptionSpec(
                        name: "shard", valueName: "K/N",
                        help: "Only the locations whose id is K modulo N (0 <= K < N), so N ingests share the work.")
                ) {
                    $0.shard = try Shard(parsing: $1.last!)
                }
            ]
                + DatabaseOption.options(\.database) + NetworkOptions.options(\.network)
        }
    }

    static var command: Command {
        Command(
            name: "ingest",
            abstract: "Fetch the forecast for every saved location now and store each response as a run.",
            discussion: """
                Locations with the same models share one request (up to 100 per request). A response equal
                to the latest stored run adds a fetch-log entry and nothing else. Exit status 0 when every
                location was stored, 1 when anything failed; one summary line goes to stderr.
                """,
            options: Options.self, run: run)
    }

    static func run(_ args: Options, _ context: Context) async throws {
        var options = IngestOptions()
        options.forecastDays = args.forecastDays ?? 16
        options.pastDays = args.pastDays ?? 1
        let client = args.network.httpClient(context)
        let store = try await open(args, context, retry: client.retry)
        // One ingest at a time per SQLite file: a second one waits, then gives up with a message. On
        // PostgreSQL the writes take the location's advisory lock in the database instead (no file).
        let lock = store is SQLiteStore ? try ProcessLock(databasePath: store.path, timeout: args.wait ?? 300) : nil
        defer { withExtendedLifetime(lock) {} }
        var locations = try store.locations()
        if !args.locations.isEmpty {
            locations = try args.locations.map { try LocationOption.resolve($0, in: store) }
        }
        guard !locations.isEmpty else {
            throw CLIError("no saved locations to ingest; add one with 'wxdb locations add NAME --lat DEG --lon DEG'")
        }
        if let shard = args.shard {
            let all = locations.count
            locations = locations.filter { shard.holds($0.id) }
            guard !locations.isEmpty else {
                // Not a failure: with more shards than locations some shards are empty, and cron should not mail.
                context.note("Shard \(shard) holds none of the \(all) locations; nothing to ingest")
                return
            }
        }
        let ingestor = Ingestor(
            store: store, client: client, endpoints: args.network.endpoints(context),
            now: { [context] in context.now() })
        ingestor.isUnreachable = isUnreachable
        // One sleeper for every wait a command makes (retries and the minute budget), so tests inject one.
        ingestor.sleep = { [context] seconds in try? await context.sleep(TimeInterval(seconds)) }
        if context.stderrIsTerminal && !context.quiet && locations.count > 10 {
            ingestor.progress = { done, total in
                let line = "\rIngesting: \(done)/\(total) locations" + (done == total ? "\r\u{1B}[K" : "")
                writeToStandardError(line)
            }
        }
        ingestor.notice = { [context] line in context.note(line) }
        if context.verbose {
            ingestor.log = { [context] line in context.err(line) }
        }
        var summary = await ingestor.run(locations, options: options)
        if let reason = summary.databaseUnreachable {
            // Every write would fail the same way: the ensembles are not fetched either.
            context.err(
                "Error: \(summary.line). \(reason). Runs stored before it stopped answering are kept; run 'wxdb ingest' again once the server answers"
            )
            throw IngestFailed()
        }
        let ensembles = await IngestCommand.Ensembles.run(
            locations, forecastDays: options.forecastDays, store: store, network: args.network, context)
        summary.failed += ensembles.failed
        if summary.succeeded {
            context.note(summary.line)
        } else {
            // One voice for failures; the summary says which locations failed and why.
            context.err("Error: \(summary.line); fix the cause and run 'wxdb ingest' again (stored runs are kept)")
            throw IngestFailed()
        }
    }
}

extension IngestCommand {
    /// Whether `error` is a PostgreSQL server that does not answer now (stopped, restarting, the
    /// session ended), which a later try may find back, unlike a refused login or a foreign schema.
    static func isUnreachable(_ error: Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.kind == .serverNotRunning || error.kind == .connectionLost
    }

    /// Opens the database. A PostgreSQL server that does not answer is tried again as a request
    /// is (`--attempts`, the same backoff and sleeper), so an ingest started while it restarts
    /// waits for it; when it never answers nothing is fetched, since nothing could be stored.
    static func open(_ args: Options, _ context: Context, retry: RetryPolicy) async throws -> any Store {
        guard let conninfo = PostgresTarget.conninfo(args.database.path(context)) else {
            return try args.database.open(context)
        }
        var attempt = 1
        while true {
            do {
                // Only a probe: opening the engine also checks and migrates the schema.
                _ = try PostgresConnection(conninfo: conninfo)
                return try args.database.open(context)
            } catch let error as PostgresError where isUnreachable(error) {
                guard attempt < retry.attempts else {
                    throw CLIError(
                        "\(error) (tried \(attempt) time(s)); nothing was fetched, since it could not be stored")
                }
                let wait = retry.delay(beforeRetry: attempt)
                context.note(
                    "The database did not answer (\(error.message.isEmpty ? error.target : error.message)); trying again in "
                        + String(printf: "%.1f", wait) + " s (attempt \(attempt + 1) of \(retry.attempts))")
                try? await context.sleep(wait)
                attempt += 1
            } catch let error as PostgresError {
                throw CLIError(error.description)
            }
        }
    }
}

/// A share of the saved locations for one of N ingest processes: ids congruent to `index` modulo `count`.
struct Shard: CustomStringConvertible {
    let index: Int64
    let count: Int64

    /// Parses `K/N`; anything else (K >= N, N < 1, a sign, not two whole numbers) is a usage error.
    init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int64(parts[0]), let count = Int64(parts[1]),
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        else {
            throw UsageError("--shard must be K/N with whole numbers, such as 0/4, not '\(text)'")
        }
        guard count >= 1 else { throw UsageError("--shard K/N needs N of at least 1, not \(count)") }
        guard index < count else {
            throw UsageError("--shard K/N needs K from 0 to N-1 (\(count - 1) here), not \(index)")
        }
        self.index = index
        self.count = count
    }

    func holds(_ id: Int64) -> Bool { id % count == index }
    var description: String { "\(index)/\(count)" }
}

/// Ingest already printed its summary; exit 1 without another message.
struct IngestFailed: Error {}
