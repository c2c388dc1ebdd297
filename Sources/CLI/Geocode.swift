import Foundation
import WxCore
import WxFetcher
import WxStore

enum Geocode {
    /// `locations add NAME` without coordinates: the first geocoding match (in `--country`).
    static func addByName(_ name: String, timezone: String?, models: [String], elevation: Double?, args: ParsedArguments, context: Context) async throws {
        let store = try context.openStore()
        if try store.location(named: name) != nil { throw LocationError.duplicate(name) }
        let geocoder = Geocoder(client: try context.httpClient(), endpoints: context.endpoints)
        let place = try await geocoder.lookUp(name, country: args.value("country"))
        let location = try store.addLocation(
            name: name, latitude: place.latitude, longitude: place.longitude, elevation: elevation ?? place.elevation,
            timezone: timezone ?? place.timezone ?? "auto", models: models, now: context.nowUnix)
        let elevationText = location.elevation.map { ", \(formatNumber($0, places: 0)) m" } ?? ""
        context.note("Added \(name): \(place.label.clippedForMessage(200)) (\(formatNumber(place.latitude, places: 4)), \(formatNumber(place.longitude, places: 4))), \(location.timezone)\(elevationText)")
    }
}
