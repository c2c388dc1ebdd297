// The replay server's control API, used by the `wxdb-replay` process and the bench scripts.
// Foundation: URLComponents and Date, like the rest of the test server (not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ReplayServer {
    // MARK: Control API (for the `wxdb-replay` process)

    func control(path: String, target: String) -> Response {
        let q = Query(URLComponents(string: target)?.queryItems ?? [])
        func ok(_ extra: String = "") -> Response { Response(status: 200, body: Data("{\"ok\":true\(extra)}".utf8)) }
        func bad(_ reason: String) -> Response { Response(status: 400, body: Self.errorBody(reason)) }
        switch path {
        case "/_control/fault":
            let faultPath = q["path"] ?? "/v1/forecast"
            let times = q.int("times") ?? 1
            let fault: Fault
            switch q["kind"] ?? "" {
            case "status":
                guard let code = q.int("code") else { return bad("status needs code=") }
                fault = .status(code, reason: q["reason"])
            case "delay":
                guard let s = q["seconds"].flatMap(Double.init) else { return bad("delay needs seconds=") }
                fault = .delay(seconds: s)
            case "truncated": fault = .truncatedBody
            case "reset": fault = .reset
            case "ratelimit": fault = .rateLimit
            case "redirect":
                guard let to = q["to"] else { return bad("redirect needs to=") }
                fault = .redirect(to: to)
            case "wrongtype": fault = .wrongContentType
            case "trickle":
                guard let bps = q.int("bps"), bps > 0 else { return bad("trickle needs bps=") }
                fault = .trickle(bytesPerSecond: bps)
            case "empty": fault = .emptyBody
            case "notjson": fault = .notJSON
            case "toomany":
                let reasons = [
                    "minutely": Self.minutelyLimitReason, "hourly": Self.hourlyLimitReason,
                    "daily": Self.dailyLimitReason
                ]
                let reason = q["reason"].map { reasons[$0] ?? $0 } ?? Self.minutelyLimitReason
                fault = .tooManyRequests(reason: reason, retryAfter: q["retry_after"])
            case "echokey": fault = .echoKey(status: q.int("code") ?? 400)
            case "swapped": fault = .swappedOrder
            case "wrongid": fault = .wrongLocationID
            case "fargrid":
                fault = .farGridPoint(
                    latitude: q["lat"].flatMap(Double.init) ?? 27.0, longitude: q["lon"].flatMap(Double.init) ?? -81.0)
            case "hugetz": fault = .hugeTimezone(length: q.int("length") ?? 60_007)
            case "endless": fault = .endlessBody
            case "bomb":
                guard let encoding = q["encoding"], Self.bombFixtures[encoding] != nil else {
                    return bad("bomb needs encoding=gzip, br or zstd")
                }
                fault = .bomb(encoding: encoding)
            default:
                return bad(
                    "Unknown kind. Use status, delay, truncated, reset, ratelimit, toomany, echokey, redirect, wrongtype, trickle, empty, notjson, swapped, wrongid, fargrid, hugetz, endless, bomb"
                )
            }
            enqueue(fault, times: times, path: faultPath)
            return ok()
        case "/_control/requests":
            let list = requests.map { JSONText.quote($0) }.joined(separator: ",")
            return Response(status: 200, body: Data("[\(list)]".utf8))
        case "/_control/reset":
            resetFaults()
            return ok()
        case "/_control/meta":
            guard let model = q["model"], let t = q.int("init") else { return bad("meta needs model= and init=") }
            registerMeta(model: model, lastRunInitialisationTime: t)
            return ok()
        case "/_control/stats":
            // Requests per path, e.g. {"/single-runs/v1/forecast":3,"/v1/forecast":1}.
            var counts: [String: Int] = [:]
            for target in requests {
                counts[String(target.split(separator: "?", maxSplits: 1).first ?? ""), default: 0] += 1
            }
            let fields = counts.keys.sorted().map { "\(JSONText.quote($0)):\(counts[$0]!)" }
            return Response(status: 200, body: Data("{\(fields.joined(separator: ","))}".utf8))
        case "/_control/now":
            // t=UNIX-SECONDS or t=YYYY-MM-DDTHH:MM (UTC) fixes the clock; t=real lets it run again.
            if let t = q["t"] {
                if t == "real" {
                    now = { Date() }
                } else if let seconds = Int(t) ?? Self.parseTime(t.hasSuffix("Z") ? String(t.dropLast()) : t) {
                    let fixed = Date(timeIntervalSince1970: TimeInterval(seconds))
                    now = { fixed }
                } else {
                    return bad("now needs t=UNIX-SECONDS, t=YYYY-MM-DDTHH:MM (UTC) or t=real")
                }
            }
            return ok(",\"now\":\(Int(now().timeIntervalSince1970.rounded(.down)))")
        case "/_control/ensemble":
            guard let d = q["dispersion"].flatMap(Double.init), d >= 0 else {
                return bad("ensemble needs dispersion= (1 calibrated, below 1 under-dispersive)")
            }
            ensembleDispersion = d
            return ok()
        case "/_control/run-interval":
            guard let s = q.int("seconds"), s > 0 else { return bad("run-interval needs seconds=") }
            runIntervalSeconds = s
            return ok()
        default:
            return Response(status: 404, body: Self.errorBody("Not found"))
        }
    }
}
