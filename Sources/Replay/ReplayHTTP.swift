// The replay server's HTTP/1.1 framing: status lines, headers, Content-Length or chunked bodies,
// and Open-Meteo's error body.
// Foundation: Data, like the rest of the test server (not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ReplayServer {
    /// One answer: status, content type, body and extra headers.
    struct Response {
        var status: Int
        var contentType = "application/json; charset=utf-8"
        var body: Data
        var headers: [(String, String)] = []
    }

    /// What becomes of a connection after a request.
    enum Next { case keepOpen, close, reset }

    /// A chunked 200 that opens a JSON array of numbers and never closes it.
    func endless(_ fd: Int32) {
        var head = "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
        head += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        guard Socket.sendAll(fd, Data(head.utf8)) else { return }
        let payload = Data(("[" + String(repeating: "1.5,", count: 16383)).utf8)
        var chunk = Data((String(payload.count, radix: 16) + "\r\n").utf8)
        chunk.append(payload)
        chunk.append(Data("\r\n".utf8))
        var sent = 0
        // Until the client hangs up (the send fails), with a cap so a client that never does
        // cannot keep a server thread busy forever.
        while sent < Self.endlessBodyCap, Socket.sendAll(fd, chunk) { sent += payload.count }
    }

    func header(_ r: Response, contentLength: Int, keepAlive: Bool = false) -> Data {
        var h = "HTTP/1.1 \(r.status) \(Self.statusText(r.status))\r\n"
        h += "Content-Type: \(r.contentType)\r\n"
        h += "Content-Length: \(contentLength)\r\n"
        for (k, v) in r.headers { h += "\(k): \(v)\r\n" }
        h += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        return Data(h.utf8)
    }

    func write(_ fd: Int32, _ r: Response, keepAlive: Bool = false) {
        var all = header(r, contentLength: r.body.count, keepAlive: keepAlive)
        all.append(r.body)
        Socket.sendAll(fd, all)
    }

    /// N of a `Range: bytes=N-` request header (the only form a resuming download sends).
    static func rangeStart(_ head: String) -> Int? {
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("range:") {
            let value = line.dropFirst("range:".count).drop { $0 == " " }
            guard value.hasPrefix("bytes="), value.hasSuffix("-") else { return nil }
            return Int(value.dropFirst("bytes=".count).dropLast())
        }
        return nil
    }

    /// A 200 answer as a static file server sends it for `Range: bytes=N-`: 206 with the bytes from
    /// N on and their Content-Range (416 past the end).
    static func ranged(_ r: Response, from start: Int?) -> Response {
        guard let start, r.status == 200 else { return r }
        guard start < r.body.count else {
            return Response(status: 416, body: Data(), headers: [("Content-Range", "bytes */\(r.body.count)")])
        }
        var partial = r
        partial.status = 206
        partial.body = r.body.subdata(in: start..<r.body.count)
        partial.headers.append(("Content-Range", "bytes \(start)-\(r.body.count - 1)/\(r.body.count)"))
        return partial
    }

    static func errorBody(_ reason: String) -> Data {
        Data("{\"error\":true,\"reason\":\(JSONText.quote(reason))}".utf8)
    }

    static func defaultReason(_ code: Int) -> String {
        switch code {
        case 429: return minutelyLimitReason
        case 500: return "Something went wrong."
        case 503: return "The service is overloaded"
        case 401: return "API key required. Please add &apikey= to the URL."
        case 404: return "Not found"
        default: return "HTTP status \(code)"
        }
    }

    static func statusText(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 206: return "Partial Content"
        case 302: return "Found"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status"
        }
    }
}
