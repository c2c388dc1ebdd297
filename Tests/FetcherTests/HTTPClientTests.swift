// The real HTTPClient against the real replay server over 127.0.0.1: every fault the server can
// inject, and how the client classifies and retries it.
import Foundation
import Testing
import WxFetcher
import WxReplay

@Suite("HTTPClient against ReplayServer")
struct HTTPClientTests {
    @Test("200 returns the registered fixture byte for byte")
    func fixtureOK() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let body = try Support.fixture("forecast-current-hourly-daily-iso8601-copenhagen.json")
        server.registerForecast(latitude: 55.6761, longitude: 12.5683, body: body)

        let (result, attempts) = await Support.fetch(
            Support.client(), Support.url(server, "/v1/forecast?latitude=55.68&longitude=12.57"))
        let response = try #require(result.success)
        #expect(response.status == 200)
        #expect(response.body == body)
        #expect(response.headers["content-type"] == "application/json; charset=utf-8")
        #expect(attempts.count == 1)
        #expect(attempts.first?.error == nil)
        #expect(attempts.first?.status == 200)
        #expect(attempts.first?.bytes == body.count)
    }

    @Test("multi-location: an array; location_id only on elements 1...n")
    func multiLocation() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let body = try Support.fixture("forecast-current-hourly-daily-iso8601-copenhagen.json")
        server.registerForecast(latitude: 55.6761, longitude: 12.5683, body: body)

        // First a registered body, then two synthesized ones, then the registered one again.
        let url = Support.url(
            server,
            "/v1/forecast?latitude=55.6761,52.52,48.85,55.6761&longitude=12.5683,13.41,2.35,12.5683&hourly=temperature_2m"
        )
        let response = try #require(await Support.fetch(Support.client(), url).0.success)
        let array = try #require(try Support.json(response.body) as? [[String: Any]])
        #expect(array.count == 4)
        #expect(array[0]["location_id"] == nil)
        for i in 1..<4 { #expect(array[i]["location_id"] as? Int == i) }
        // Open-Meteo writes location_id right after elevation.
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("\"elevation\":10.0,\"location_id\":3"))
    }

    @Test("500, 500, 200 succeeds on the third attempt and logs all three")
    func serverErrorsThenSuccess() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.status(500, reason: nil), times: 2)

        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 4),
            Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        #expect(result.success?.status == 200)
        #expect(attempts.map(\.status) == [500, 500, 200])
        #expect(attempts[0].error == .http(status: 500, reason: "Something went wrong."))
        #expect(attempts[0].retryAfter != nil && attempts[1].retryAfter != nil && attempts[2].retryAfter == nil)
        #expect(attempts.map(\.number) == [1, 2, 3])
        #expect(server.requests.count == 3)
    }

    @Test("400 with an Open-Meteo reason is not retried and keeps the reason")
    func badRequestNotRetried() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let reason = "Cannot initialize TemperatureUnit from invalid String value x for key temperature_unit"
        server.enqueue(.status(400, reason: reason))

        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 4), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        let error = try #require(result.failure)
        #expect(error == .http(status: 400, reason: reason))
        #expect(!error.isRetryable)
        #expect(error.description.contains(reason))
        #expect(attempts.count == 1)
        #expect(server.requests.count == 1)
    }

    @Test("an unknown variable gets the real 400 from the synthesizer")
    func syntheticBadVariable() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let result = await Support.fetch(
            Support.client(), Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=lksdfj")
        ).0
        guard case .http(400, let reason)? = result.failure else {
            Issue.record("expected HTTP 400, got \(String(describing: result))")
            return
        }
        #expect(reason?.contains("lksdfj") == true)
    }

    @Test("a 429 storm fails after `attempts` tries with rateLimited")
    func rateLimitStorm() async throws {
        let server = try Support.server()
        defer { server.stop() }
        // Retry-After: 0, so the storm is retried at once (a plain minutely 429 waits for the next minute).
        server.enqueue(.tooManyRequests(reason: ReplayServer.minutelyLimitReason, retryAfter: "0"), times: 10)

        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 3), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.failure == .rateLimited(reason: ReplayServer.minutelyLimitReason))
        #expect(attempts.count == 3)
        #expect(server.requests.count == 3)
        #expect(result.failure?.description.contains("rate limit reached") == true)
    }

    // Counted, not timed: each of the two attempts ends in the deadline's own error, and the server
    // saw exactly two requests. Without the deadline the first answer would come after 3000 s and
    // succeed (so the checks fail), and the time limit (half that) ends a hang; an elapsed-time
    // bound also measured the wait for the cooperative pool on a loaded machine, and failed there.
    @Test("a delay longer than the timeout fails with a timeout on every attempt", .timeLimit(.minutes(25)))
    func delayTimesOut() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.delay(seconds: 3000), times: 2)

        let (result, attempts) = await Support.fetch(
            Support.client(timeout: 1, attempts: 2), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.failure == .timedOut(seconds: 1))
        #expect(attempts.count == 2)
        #expect(attempts.allSatisfy { $0.error == .timedOut(seconds: 1) })
        #expect(server.requests.count == 2)
    }

    // Counted, not timed: the one attempt ends in the deadline's error while the body is still
    // coming (a complete body would be a success), and the time limit ends a hang long before the
    // ~5000 s an uncut transfer takes. An elapsed-time bound (500 s) also measured the wait for the
    // cooperative pool on a loaded machine, and failed there at 509 s.
    @Test("a trickling body is cut off by the per-attempt deadline", .timeLimit(.minutes(25)))
    func trickleTimesOut() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.trickle(bytesPerSecond: 2))

        // 7 days × 3 variables is ~10 kB: at 2 B/s the whole body would take ~5000 s.
        let (result, attempts) = await Support.fetch(
            Support.client(timeout: 1, attempts: 1),
            Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m,precipitation,weather_code"))
        #expect(result.failure == .timedOut(seconds: 1))
        #expect(attempts.count == 1)
        #expect(attempts.first?.error == .timedOut(seconds: 1))
        #expect(server.requests.count == 1)
    }

    @Test("a slow but fast-enough trickle still succeeds")
    func trickleCompletes() async throws {
        let server = try Support.server()
        defer { server.stop() }
        // ~3.5 kB at 5 kB/s: under a second of trickling, well inside a deadline that leaves room
        // for a loaded machine.
        server.enqueue(.trickle(bytesPerSecond: 5_000))
        let result = await Support.fetch(
            Support.client(timeout: 30, attempts: 1),
            Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m")
        ).0
        #expect(result.success?.status == 200)
    }

    @Test("a truncated body is an error; the retry then succeeds")
    func truncated() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.truncatedBody)
        let url = Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m")

        let (single, _) = await Support.fetch(Support.client(attempts: 1), url)
        let error = try #require(single.failure)
        #expect(error.isRetryable, "got \(error)")

        server.enqueue(.truncatedBody)
        let (retried, attempts) = await Support.fetch(Support.client(attempts: 2), url)
        #expect(retried.success?.status == 200)
        #expect(attempts.count == 2)
        #expect(attempts[0].error != nil)
    }

    @Test("a connection reset is a transport error and is retried")
    func reset() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.reset)

        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 3), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.success?.status == 200)
        #expect(attempts.count == 2)
        guard case .transport? = attempts.first?.error else {
            Issue.record("expected a transport error first, got \(String(describing: attempts.first?.error))")
            return
        }
        #expect(attempts.first?.status == nil)
    }

    @Test("redirects are not followed, not retried, and the Location is redacted")
    func redirect() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.redirect(to: "https://customer-api.open-meteo.com/v1/forecast?latitude=1&apikey=SECRET123"))

        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 3), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.failure == .redirected("https://customer-api.open-meteo.com/v1/forecast?latitude=1"))
        #expect(attempts.count == 1)
        #expect(attempts.first?.status == 302)
        #expect(server.requests.count == 1)
        #expect(result.failure?.description.contains("SECRET123") == false)
    }

    @Test(
        "unusable 2xx bodies are invalidBody",
        arguments: [
            ReplayServer.Fault.wrongContentType, .emptyBody, .notJSON
        ])
    func invalidBodies(fault: ReplayServer.Fault) async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(fault)

        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 1),
            Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        guard case .invalidBody(let message)? = result.failure else {
            Issue.record("expected invalidBody for \(fault), got \(String(describing: result))")
            return
        }
        #expect(!message.isEmpty)
        #expect(attempts.first?.status == 200)
    }

    @Test("an invalid body is retried like a server error")
    func invalidBodyRetried() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.notJSON)
        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 2),
            Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        #expect(result.success != nil)
        #expect(attempts.count == 2)
    }

    @Test("maxTotal bounds the whole call even with many attempts")
    func maxTotalBound() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.status(503, reason: nil), times: 100)
        let client = HTTPClient(
            timeout: 2, retry: RetryPolicy(attempts: 50, baseDelay: 0.2, maxDelay: 0.2, maxTotal: 0.6, jitter: 0),
            userAgent: "t")

        let (result, attempts) = await Support.fetch(client, Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.failure == .http(status: 503, reason: "The service is overloaded"))
        // Counted, not timed: 0.6 s of budget at 0.2 s between attempts leaves room for at most
        // four attempts, where the policy alone would make fifty.
        #expect(attempts.count <= 4)
        #expect(attempts.count >= 1)
        #expect(attempts.last?.retryAfter == nil)
    }

    @Test("connection refused is a transport error")
    func refused() async throws {
        let server = try Support.server()
        let url = Support.url(server, "/v1/forecast?latitude=1&longitude=2")
        server.stop()
        let result = await Support.fetch(Support.client(attempts: 1), url).0
        guard case .transport? = result.failure else {
            Issue.record("expected transport, got \(String(describing: result))")
            return
        }
    }

    @Test("the API key never appears in errors or attempt records")
    func apiKeyRedaction() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.status(401, reason: "The supplied API key is invalid. apikey=SECRET123"))
        let url = Support.url(server, "/v1/forecast?latitude=1&apikey=SECRET123&longitude=2")

        let (result, attempts) = await Support.fetch(Support.client(attempts: 2), url)
        let error = try #require(result.failure)
        #expect(!error.description.contains("SECRET123"))
        #expect(!"\(error)".contains("SECRET123"))
        #expect(
            attempts.allSatisfy {
                !$0.url.contains("SECRET123") && !"\(String(describing: $0.error))".contains("SECRET123")
            })
        #expect(attempts.first?.url == server.baseURL + "/v1/forecast?latitude=1&longitude=2")

        // Timeouts and transport errors are built without the URL too.
        server.enqueue(.delay(seconds: 2))
        let timedOut = await Support.fetch(Support.client(timeout: 0.2, attempts: 1), url)
        #expect(!"\(String(describing: timedOut.0.failure))".contains("SECRET123"))
    }

    @Test(
        "redacted removes apikey in any position and case",
        arguments: [
            ("https://h/v1/forecast?apikey=K&latitude=1", "https://h/v1/forecast?latitude=1"),
            ("https://h/v1/forecast?latitude=1&APIKEY=K", "https://h/v1/forecast?latitude=1"),
            ("https://h/v1/forecast?latitude=1&apikey=K&longitude=2", "https://h/v1/forecast?latitude=1&longitude=2"),
            ("https://h/v1/forecast?apikey=K", "https://h/v1/forecast"),
            ("https://h/v1/forecast?latitude=52.5%2C48.8", "https://h/v1/forecast?latitude=52.5%2C48.8")
        ])
    func redaction(input: String, expected: String) {
        #expect(HTTPClient.redacted(URL(string: input)!) == expected)
    }

    @Test("backoff doubles, is capped, and jitter only shortens", arguments: [1, 2, 3, 4, 5, 6])
    func backoff(retry: Int) {
        let p = RetryPolicy(attempts: 10, baseDelay: 0.5, maxDelay: 8, maxTotal: 60, jitter: 0.5)
        let full = min(8, 0.5 * pow(2, Double(retry - 1)))
        #expect(p.delay(beforeRetry: retry, random: 0) == full)
        #expect(abs(p.delay(beforeRetry: retry, random: 0.999_999) - full * 0.5) < 1e-5)
        #expect(
            RetryPolicy(jitter: 1).delay(beforeRetry: retry, random: 0.5) == min(8, 0.5 * pow(2, Double(retry - 1)))
                * 0.5)
    }

    @Test("many concurrent requests are all served")
    func concurrent() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let client = Support.client()
        let ok = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<24 {
                group.addTask {
                    let url = Support.url(
                        server, "/v1/forecast?latitude=\(i)&longitude=\(i)&hourly=temperature_2m&forecast_days=1")
                    return (try? await client.get(url))?.status == 200
                }
            }
            var count = 0
            for await r in group where r { count += 1 }
            return count
        }
        #expect(ok == 24)
        #expect(server.requests.count == 24)
    }
}
