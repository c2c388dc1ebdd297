// Shared helpers: a running replay server per test and a client with tiny timeouts and delays
// so the whole suite stays fast.
import Foundation
import WxFetcher
import WxReplay

enum Support {
    /// The repository's Fixtures folder, found from this file's location.
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// A fixed instant (2026-07-26T12:00:00Z) so "today" and the run number never drift.
    static let fixedNow = Date(timeIntervalSince1970: 1_785_067_200)

    static func server() throws -> ReplayServer {
        let server = ReplayServer(fixtures: fixtures)
        server.now = { fixedNow }
        try server.start()
        return server
    }

    /// Tiny backoff, no jitter: retries take milliseconds. The default timeout and maxTotal are
    /// far above any answer's time: a test's await also waits its turn on the cooperative pool
    /// behind the rest of the suite (22-27 s for tests that do nothing, on a loaded 2-core
    /// machine), and that wait counts as attempt time. Tests about deadlines pass their own.
    static func client(timeout: TimeInterval = 60, attempts: Int = 3, maxTotal: TimeInterval = 600) -> HTTPClient {
        HTTPClient(
            timeout: timeout,
            retry: RetryPolicy(attempts: attempts, baseDelay: 0.01, maxDelay: 0.05, maxTotal: maxTotal, jitter: 0),
            userAgent: "wxdb-tests")
    }

    static func url(_ server: ReplayServer, _ pathAndQuery: String) -> URL {
        URL(string: server.baseURL + pathAndQuery)!
    }

    /// Collects attempts from the non-escaping callback.
    final class Attempts: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Attempt] = []
        func add(_ a: Attempt) { lock.withLock { list.append(a) } }
        var all: [Attempt] { lock.withLock { list } }
    }

    /// Runs a GET and returns the result plus every attempt record.
    static func fetch(_ client: HTTPClient, _ url: URL) async -> (Result<HTTPResponse, FetchError>, [Attempt]) {
        let log = Attempts()
        do {
            let r = try await client.get(url) { log.add($0) }
            return (.success(r), log.all)
        } catch {
            return (.failure(error), log.all)
        }
    }

    static func json(_ data: Data) throws -> Any {
        try JSONSerialization.jsonObject(with: data)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
    var success: Success? {
        if case .success(let v) = self { return v }
        return nil
    }
}
