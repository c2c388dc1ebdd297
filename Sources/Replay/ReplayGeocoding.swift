// The replay server's geocoding: registered bodies, the default fixture and a small gazetteer.
// Foundation: JSONSerialization and CharacterSet, like the rest of the test server (not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ReplayServer {
    /// Places the README and the demo look up by name, so the offline tour works as written.
    static let gazetteer:
        [String: (
            name: String, latitude: Double, longitude: Double, elevation: Double, timezone: String,
            country: String, countryCode: String
        )] = [
            "berlin": ("Berlin", 52.52437, 13.41053, 74, "Europe/Berlin", "Germany", "DE"),
            "zurich": ("Zurich", 47.36667, 8.55, 429, "Europe/Zurich", "Switzerland", "CH"),
            "london": ("London", 51.50853, -0.12574, 25, "Europe/London", "United Kingdom", "GB"),
            "new york": ("New York", 40.71427, -74.00597, 10, "America/New_York", "United States", "US")
        ]

    static func geocodingBody(
        _ place: (
            name: String, latitude: Double, longitude: Double, elevation: Double, timezone: String,
            country: String, countryCode: String
        )
    ) -> Data {
        Data(
            ("{\"results\":[{\"id\":1,\"name\":\"\(place.name)\",\"latitude\":\(place.latitude),\"longitude\":\(place.longitude),"
                + "\"elevation\":\(place.elevation),\"feature_code\":\"PPLC\",\"country_code\":\"\(place.countryCode)\","
                + "\"timezone\":\"\(place.timezone)\",\"country\":\"\(place.country)\"}],\"generationtime_ms\":0.5}")
                .utf8)
    }

    func search(_ q: Query) -> Response {
        let name = (q["name"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        guard name.count >= 2 else {
            return Response(status: 400, body: Self.errorBody("Parameter name must be at least 2 characters."))
        }
        if let count = q.int("count"), !(1...100).contains(count) {
            return Response(status: 400, body: Self.errorBody("Parameter count must be between 1 and 100."))
        }
        // "Name, Qualifier" → try the full string first, then the name part.
        let plain = name.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? name
        var body = lock.withLock { geocoding[name] ?? geocoding[plain] }
        if body == nil, plain == "hollywood" {
            body = try? Data(
                contentsOf: fixtures.appendingPathComponent("geocoding-search-hollywood-default-count.json"))
        }
        if body == nil { body = Self.gazetteer[plain].map(Self.geocodingBody) }
        guard var result = body else {
            return Response(status: 200, body: Data("{\"generationtime_ms\":0.5}".utf8))
        }
        // Honour count and countryCode on the registered list; re-serialize only if it changed,
        // so an untouched body stays byte-identical to the fixture.
        let count = q.int("count") ?? 10
        let country = q["countryCode"]?.uppercased()
        if let obj = try? JSONSerialization.jsonObject(with: result) as? [String: Any],
            let list = obj["results"] as? [[String: Any]]
        {
            var kept = list
            if let country, !country.isEmpty {
                kept = kept.filter { ($0["country_code"] as? String)?.uppercased() == country }
            }
            if kept.count > count { kept = Array(kept.prefix(count)) }
            if kept.count != list.count {
                var copy = obj
                if kept.isEmpty { copy.removeValue(forKey: "results") } else { copy["results"] = kept }
                result = (try? JSONSerialization.data(withJSONObject: copy)) ?? result
            }
        }
        return Response(status: 200, body: result)
    }
}
