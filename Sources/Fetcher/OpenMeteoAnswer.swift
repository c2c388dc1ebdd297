// What an answer from Open-Meteo says beyond its status: whether a 2xx body is usable JSON, the
// `reason` of an error body, and how long a 429 or 503 asks the client to wait.
import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension HTTPClient {
    /// A cheap plausibility check, not a parse: decoding is the caller's job, but broken bodies
    /// that a retry can fix must be caught here, where retries happen.
    static func bodyProblem(_ r: HTTPResponse, json: Bool = true) -> String? {
        if let declared = r.headers["content-length"].flatMap(Int.init), declared != r.body.count {
            return "the body was cut off (\(r.body.count) of \(declared) bytes)"
        }
        if r.body.isEmpty { return "the body is empty" }
        if !json { return nil }
        if let type = r.headers["content-type"], !type.lowercased().contains("json") {
            return "expected JSON but got \(type)"
        }
        let marker = Data("Unexpected error while streaming data".utf8)
        if let range = firstRange(of: marker, in: r.body) {
            let text = String(decoding: r.body[range.lowerBound...].prefix(200), as: UTF8.self)
            return "the server failed while sending data (\(scrub(text)))"
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = r.body.first(where: { !isSpace($0) }), let last = r.body.last(where: { !isSpace($0) }),
            (first == UInt8(ascii: "{") && last == UInt8(ascii: "}"))
                || (first == UInt8(ascii: "[") && last == UInt8(ascii: "]"))
        else { return "the body is not a complete JSON document" }
        return nil
    }

    /// The `reason` of an Open-Meteo error body `{"error":true,"reason":"…"}`, if it is one.
    static func reason(_ body: Data) -> String? {
        guard let text = (try? JSONParser.parse(body))?["reason"]?.stringValue else { return nil }
        // Clipped: a hostile reason must not flood the terminal or the fetch log.
        let clean = scrub(text)
        return clean.count > 200 ? String(clean.prefix(200)) + "… (\(clean.utf8.count) bytes)" : clean
    }

    /// How long the server asked to wait before the next try: `Retry-After` (seconds or an HTTP
    /// date), else for Open-Meteo's minutely limit the start of the next minute (plus a second of
    /// margin, as wxdb's own budget does); nil when it did not say.
    static func serverWait(status: Int, headers: [String: String], reason: String?, now: Date) -> TimeInterval? {
        guard status == 429 || status == 503 else { return nil }
        if let raw = headers["retry-after"] {
            let value = String(
                raw.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            if let seconds = Double(value), seconds.isFinite { return max(0, seconds) }
            if let date = httpDate(value) { return max(0, date.timeIntervalSince(now)) }
        }
        if status == 429, RateLimitWindow(reason: reason) == .minute {
            let t = now.timeIntervalSince1970
            return 60 - t.truncatingRemainder(dividingBy: 60) + 1
        }
        return nil
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form `Retry-After` dates take.
    static func httpDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[0].count == 4, parts[0].last == ",", parts[5] == "GMT" || parts[5] == "UTC",
            let day = Int(parts[1]), (1...31).contains(day), let month = months.firstIndex(of: String(parts[2])),
            let year = Int(parts[3]), (1970...9999).contains(year)
        else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        let days = UTCTime.days(fromCivil: year, month: month + 1, day: day)
        let seconds = days * 86400 + Int64(clock[0] * 3600 + clock[1] * 60 + clock[2])
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
