// The failures the replay server can inject: what each is, how the control API names it, and how
// a connection answers with it.
// Foundation: Data and Thread.sleep, like the rest of the test server (not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ReplayServer {
    /// A failure to inject. Faults are queued per path prefix and each one is consumed by the
    /// next matching request, before normal serving.
    public enum Fault: Sendable, Equatable {
        /// Answer with this status and an Open-Meteo error body (`reason` or a default text).
        case status(Int, reason: String?)
        /// Wait, then serve normally (for client timeouts).
        case delay(seconds: Double)
        /// Announce the full Content-Length but send only half the body, then close.
        case truncatedBody
        /// Close with SO_LINGER 0 (TCP RST) right after reading the request.
        case reset
        /// 429 with the Open-Meteo minutely-limit reason.
        case rateLimit
        /// 302 with this Location.
        case redirect(to: String)
        /// 200 with `text/html` and an HTML body (captive portal, misconfigured proxy).
        case wrongContentType
        /// Send the real body at this rate.
        case trickle(bytesPerSecond: Int)
        /// 200 with Content-Length 0 (observed for `latitude=&longitude=`).
        case emptyBody
        /// 200 JSON with "Unexpected error while streaming data: x" appended, as Open-Meteo does
        /// when an error happens after streaming began.
        case notJSON
        /// 429 with this reason and, when given, a `Retry-After` header (seconds or an HTTP date).
        case tooManyRequests(reason: String, retryAfter: String?)
        /// This status with a reason that quotes the request's `apikey` back ("Invalid API key …").
        case echoKey(status: Int)
        /// A multi-location answer with its elements in reverse order (each keeps its `location_id`).
        case swappedOrder
        /// A multi-location answer in request order whose `location_id`s point at the next location.
        case wrongLocationID
        /// The first element's grid point moved to this coordinate (another place's forecast).
        case farGridPoint(latitude: Double, longitude: Double)
        /// Every element's `timezone` replaced by a name of this many characters.
        case hugeTimezone(length: Int)
        /// A Single Runs answer with the window of the run this many seconds from the one asked
        /// for (an archive that answers with another run's hours).
        case otherRun(seconds: Int)
        /// 200 with `Transfer-Encoding: chunked` and a body that never ends (until the client
        /// hangs up, or after `endlessBodyCap` bytes as a safety net for the server).
        case endlessBody
        /// 200 JSON whose body, sent with this `Content-Encoding` (`gzip`, `br` or `zstd`), is at
        /// most 0.5 MB on the wire and unpacks to 512 MiB or more of zeros (`Fixtures/bombs`).
        case bomb(encoding: String)
    }

    /// The compressed bodies `Fault.bomb` sends, by encoding: what each unpacks to is in its name.
    public static let bombFixtures = [
        "gzip": "bombs/zeros-512MiB.gz", "br": "bombs/zeros-1GiB.br", "zstd": "bombs/zeros-1GiB.zst"
    ]

    /// Where an endless body stops if the client never hangs up.
    public static let endlessBodyCap = 4 << 30

    /// The reason texts Open-Meteo uses when a limit is hit.
    public static let minutelyLimitReason = "Minutely API request limit exceeded. Please try again in one minute."
    public static let hourlyLimitReason = "Hourly API request limit exceeded. Please try again in the next hour."
    public static let dailyLimitReason = "Daily API request limit exceeded. Please try again tomorrow."

    /// Answers a request with `fault` instead of (or around) its normal answer. The connection
    /// ends afterwards: closed, or reset for `.reset`.
    func answer(_ fd: Int32, with fault: Fault, path: String, target: String, range: Int? = nil) -> Next {
        switch fault {
        case .tooManyRequests(let reason, let retryAfter):
            write(
                fd,
                Response(
                    status: 429, body: Self.errorBody(reason), headers: retryAfter.map { [("Retry-After", $0)] } ?? []))
        case .echoKey(let status):
            let key = Query(URLComponents(string: target)?.queryItems ?? [])["apikey"] ?? ""
            write(
                fd,
                Response(
                    status: status,
                    body: Self.errorBody("Invalid API key \(key). Please check the key or contact support")))
        case .swappedOrder, .wrongLocationID, .farGridPoint, .hugeTimezone, .otherRun:
            write(fd, route(path: path, target: target, rewrite: fault))
        case .endlessBody:
            endless(fd)
        case .bomb(let encoding):
            let file = Self.bombFixtures[encoding].map { fixtures.appendingPathComponent($0) }
            guard let file, let body = try? Data(contentsOf: file) else {
                write(fd, Response(status: 500, body: Self.errorBody("No bomb fixture for \(encoding)")))
                break
            }
            write(fd, Response(status: 200, body: body, headers: [("Content-Encoding", encoding)]))
        case .status(let code, let reason):
            write(fd, Response(status: code, body: Self.errorBody(reason ?? Self.defaultReason(code))))
        case .delay(let seconds):
            Thread.sleep(forTimeInterval: seconds)
            write(fd, route(path: path, target: target))
        case .truncatedBody:
            let r = Self.ranged(route(path: path, target: target), from: range)
            Socket.sendAll(fd, header(r, contentLength: r.body.count))
            Socket.sendAll(fd, r.body.prefix(r.body.count / 2))
        case .reset:
            return .reset
        case .rateLimit:
            write(fd, Response(status: 429, body: Self.errorBody(Self.minutelyLimitReason)))
        case .redirect(let location):
            write(fd, Response(status: 302, body: Data(), headers: [("Location", location)]))
        case .wrongContentType:
            let html =
                "<!DOCTYPE html><html><head><title>Login required</title></head><body><h1>Please sign in to use this network</h1></body></html>"
            write(fd, Response(status: 200, contentType: "text/html; charset=utf-8", body: Data(html.utf8)))
        case .trickle(let bps):
            let r = route(path: path, target: target)
            guard Socket.sendAll(fd, header(r, contentLength: r.body.count)) else { break }
            // Ten slices per second keeps the rate smooth without a syscall per byte.
            let slice = max(1, bps / 10)
            var offset = 0
            while offset < r.body.count {
                let end = min(r.body.count, offset + slice)
                guard Socket.sendAll(fd, r.body.subdata(in: offset..<end)) else { break }
                let sent = end - offset
                offset = end
                if offset < r.body.count { Thread.sleep(forTimeInterval: Double(sent) / Double(bps)) }
            }
        case .emptyBody:
            write(fd, Response(status: 200, body: Data()))
        case .notJSON:
            var r = route(path: path, target: target)
            r.body.append(Data("Unexpected error while streaming data: x".utf8))
            write(fd, r)
        }
        return .close
    }
}
