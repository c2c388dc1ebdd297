import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A place found by Open-Meteo's geocoding API.
public struct Place: Sendable, Equatable {
    public var name: String
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double?
    public var timezone: String?
    public var countryCode: String?
    public var country: String?
    public var admin1: String?

    /// "Berlin, Land Berlin, Germany".
    public var label: String {
        [name, admin1, country].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
    }
}

public enum GeocodingError: Error, CustomStringConvertible, Equatable {
    case noMatch(name: String, country: String?)
    case badResponse(String)

    public var description: String {
        switch self {
        case .noMatch(let name, let country):
            let scope = country.map { " in country \($0)" } ?? ""
            return
                "Open-Meteo's geocoding found no place named \"\(name)\"\(scope); check the spelling, or give --lat and --lon"
        case .badResponse(let detail):
            return "the geocoding answer could not be read (\(detail)); try again, or give --lat and --lon"
        }
    }
}

/// Looks names up with Open-Meteo's geocoding API.
public struct Geocoder: Sendable {
    let client: HTTPClient
    let endpoints: Endpoints

    public init(client: HTTPClient, endpoints: Endpoints) {
        self.client = client
        self.endpoints = endpoints
    }

    /// The first match for `name`, or the first in `country` (ISO 3166-1 alpha-2) when given.
    public func lookUp(_ name: String, country: String?) async throws -> Place {
        var query = [("name", name), ("count", "10"), ("language", "en"), ("format", "json")]
        if let country { query.append(("countryCode", country.uppercased())) }
        let url = try endpoints.url(endpoints.geocoding, query)
        let response = try await client.get(url)
        let places = try Self.parse(response.body)
        let match =
            country.map { code in places.first { $0.countryCode?.uppercased() == code.uppercased() } } ?? places.first
        guard let match else { throw GeocodingError.noMatch(name: name, country: country) }
        return match
    }

    /// The places in a geocoding answer; none when it has no `results` (Open-Meteo's "no match").
    public static func parse(_ body: Data) throws -> [Place] {
        let json: JSON
        do { json = try JSONParser.parse(body) } catch { throw GeocodingError.badResponse("\(error)") }
        if json["error"]?.boolValue == true {
            throw GeocodingError.badResponse(
                (json["reason"]?.stringValue ?? "error without a reason").clippedForMessage(200))
        }
        guard let results = json["results"] else { return [] }
        guard let array = results.arrayValue else { throw GeocodingError.badResponse("results is \(results.typeName)") }
        return try array.map { item in
            guard let name = item["name"]?.stringValue, let latitude = item["latitude"]?.numberValue,
                let longitude = item["longitude"]?.numberValue
            else {
                throw GeocodingError.badResponse("a result lacks name, latitude or longitude")
            }
            // A zone the zone database does not know is dropped (the first ingest learns the real one).
            let timezone = item["timezone"]?.stringValue.flatMap { ZoneTime.isValidName($0) ? $0 : nil }
            // An elevation no place on Earth has is dropped (Open-Meteo's terrain model is used instead).
            let elevation = item["elevation"]?.numberValue.flatMap { (-500...9000).contains($0) ? $0 : nil }
            return Place(
                name: name, latitude: latitude, longitude: longitude, elevation: elevation,
                timezone: timezone, countryCode: item["country_code"]?.stringValue,
                country: item["country"]?.stringValue, admin1: item["admin1"]?.stringValue)
        }
    }
}
