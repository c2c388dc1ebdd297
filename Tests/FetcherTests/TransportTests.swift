// The client's policy over an injected transport (no socket): what each attempt asks for, and how
// answers and failures are retried; then libcurl itself against compression bombs.
import Foundation
import Testing
import WxReplay

@testable import WxFetcher

/// A transport that answers from a script and records what it was asked.
final class ScriptedTransport: @unchecked Sendable {
    private let lock = NSLock()
    private var script: [Result<HTTPResponse, FetchError>]
    private var seen: [HTTPRequest] = []

    init(_ script: [Result<HTTPResponse, FetchError>]) { self.script = script }

    var requests: [HTTPRequest] { lock.withLock { seen } }

    var transport: HTTPTransport {
        { [self] request in
            lock.withLock {
                seen.append(request)
                return script.isEmpty ? .failure(.transport("script ended")) : script.removeFirst()
            }
        }
    }

    static func json(_ status: Int, _ text: String, headers: [String: String] = [:]) -> Result<HTTPResponse, FetchError>
    {
        var all = ["content-type": "application/json; charset=utf-8"]
        all.merge(headers) { $1 }
        return .success(HTTPResponse(status: status, headers: all, body: Data(text.utf8), url: "unused"))
    }
}

@Suite("HTTPClient over an injected transport")
struct TransportTests {
    static func client(
        _ scripted: ScriptedTransport, _ sleeper: RecordingSleeper, attempts: Int = 4, timeout: TimeInterval = 30,
        maxTotal: TimeInterval = 600
    ) -> HTTPClient {
        HTTPClient(
            timeout: timeout,
            retry: RetryPolicy(attempts: attempts, baseDelay: 0.5, maxDelay: 8, maxTotal: maxTotal, jitter: 0),
            userAgent: "wxdb-tests", maxBodyBytes: 1000, sleep: sleeper.sleep, transport: scripted.transport)
    }

    @Test("each attempt sends the User-Agent, asks for JSON, carries the body limit and the per-attempt deadline")
    func requestShape() async throws {
        let scripted = ScriptedTransport([ScriptedTransport.json(200, "{}")])
        let response = try await Self.client(scripted, RecordingSleeper(), timeout: 12)
            .get(URL(string: "http://h/v1/forecast?latitude=1&apikey=K")!)
        #expect(response.url == "http://h/v1/forecast?latitude=1")
        let request = try #require(scripted.requests.first)
        #expect(request.headers.contains { $0.name == "User-Agent" && $0.value == "wxdb-tests" })
        #expect(request.headers.contains { $0.name == "Accept" && $0.value == "application/json" })
        #expect(request.maxBodyBytes == 1000)
        #expect(request.deadline == 12)
    }

    @Test("a deadline never reaches past the call's time budget")
    func deadlineClipped() async throws {
        let scripted = ScriptedTransport([ScriptedTransport.json(200, "{}")])
        _ = try await Self.client(scripted, RecordingSleeper(), timeout: 30, maxTotal: 5).get(URL(string: "http://h/")!)
        #expect(scripted.requests.first?.deadline == 5)
    }

    @Test("500, timeout, cut-off body, then 200: four attempts, backoff 0.5, 1, 2 s between them")
    func retriesWithBackoff() async throws {
        let scripted = ScriptedTransport([
            ScriptedTransport.json(500, #"{"error":true,"reason":"Boom"}"#),
            .failure(.timedOut(seconds: 30)),
            ScriptedTransport.json(200, "{}", headers: ["content-length": "10"]),
            ScriptedTransport.json(200, #"{"ok":1}"#)
        ])
        let sleeper = RecordingSleeper()
        let log = Support.Attempts()
        let response = try await Self.client(scripted, sleeper).get(URL(string: "http://h/")!) { log.add($0) }
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok":1}"#)
        #expect(sleeper.waits == [0.5, 1, 2])
        #expect(log.all.map(\.status) == [500, nil, 200, 200])
        #expect(log.all[0].error == .http(status: 500, reason: "Boom"))
        #expect(log.all[2].error == .invalidBody("the body was cut off (2 of 10 bytes)"))
    }

    @Test("Retry-After as an HTTP date is waited out exactly", arguments: [("Sun, 26 Jul 2026 12:00:50 GMT", 30.0)])
    func retryAfterDate(header: String, wait: Double) async throws {
        let scripted = ScriptedTransport([
            ScriptedTransport.json(
                429, #"{"error":true,"reason":"Too many concurrent requests"}"#, headers: ["retry-after": " \(header) "]
            ),
            ScriptedTransport.json(200, "{}")
        ])
        let sleeper = RecordingSleeper()
        let client = HTTPClient(
            retry: RetryPolicy(attempts: 2, baseDelay: 0.5, jitter: 0), userAgent: "t", sleep: sleeper.sleep,
            now: { HostileHTTPTests.twentyPast }, transport: scripted.transport)
        _ = try await client.get(URL(string: "http://h/")!)
        #expect(sleeper.waits == [wait])
    }

    @Test(
        "failures another attempt cannot mend are not retried",
        arguments: [
            FetchError.tooLarge(limit: 1000), .http(status: 404, reason: nil), .redirected("http://elsewhere/")
        ])
    func finalFailures(error: FetchError) async throws {
        let answer: Result<HTTPResponse, FetchError>
        switch error {
        case .http(let status, _): answer = ScriptedTransport.json(status, "{}")
        case .redirected(let location):
            answer = .success(HTTPResponse(status: 302, headers: ["location": location], body: Data(), url: ""))
        default: answer = .failure(error)
        }
        let scripted = ScriptedTransport([answer, ScriptedTransport.json(200, "{}")])
        let sleeper = RecordingSleeper()
        await #expect(throws: error) { try await Self.client(scripted, sleeper).get(URL(string: "http://h/")!) }
        #expect(scripted.requests.count == 1)
        #expect(sleeper.waits.isEmpty)
    }

    @Test("the IMF-fixdate reader reads the dates Retry-After carries and nothing else")
    func httpDates() {
        #expect(HTTPClient.httpDate("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
        #expect(HTTPClient.httpDate("Sun, 26 Jul 2026 12:00:50 GMT")?.timeIntervalSince1970 == 1_785_067_250)
        for bad in ["", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37", "Sun, 32 Nov 1994 08:49:37 GMT"]
        {
            #expect(HTTPClient.httpDate(bad) == nil, "\(bad)")
        }
    }
}

@Suite("libcurl against compression bombs")
struct CompressionBombTests {
    @Test(
        "a gzip, brotli or zstd body that unpacks past the limit is cut off at the limit, once",
        arguments: ["gzip", "br", "zstd"])
    func bombCapped(encoding: String) async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.bomb(encoding: encoding), times: 3)
        let (result, attempts) = await Support.fetch(
            HostileHTTPTests.client(RecordingSleeper()), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.failure == .tooLarge(limit: HTTPClient.defaultMaxBodyBytes))
        #expect(result.failure?.description.contains("grew past 64 MiB") == true)
        #expect(attempts.count == 1, "an oversized answer is not fetched again")
    }

    @Test(
        "the limit counts decoded bytes: a bomb smaller than 1 MiB on the wire trips a 1 MiB limit",
        arguments: ["gzip", "br", "zstd"])
    func decodedBytesCounted(encoding: String) async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.bomb(encoding: encoding))
        let wire = try Support.fixture(try #require(ReplayServer.bombFixtures[encoding])).count
        #expect(wire < 1 << 20)
        let client = HostileHTTPTests.client(RecordingSleeper(), attempts: 1, maxBodyBytes: 1 << 20)
        let (result, _) = await Support.fetch(client, Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.failure == .tooLarge(limit: 1 << 20))
    }
}
