import FoundationEssentials
import WxCore
import WxFetcher
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum Geocode {
    /// `locations add NAME` without coordinates: the first geocoding match (in `--country`).
    static func addByName(_ options: LocationsCommand.AddOptions, context: Context) async throws -> Location {
        let name = options.name
        // A name already saved needs no lookup; a database is created only once there is a place to add.
        if FileManager.default.fileExists(atPath: options.database.path(context)),
            try options.database.open(context).location(named: name) != nil
        {
            throw LocationError.duplicate(name)
        }
        let geocoder = Geocoder(
            client: options.network.httpClient(context), endpoints: options.network.endpoints(context))
        let place = try await geocoder.lookUp(name, country: options.country)
        let store = try options.database.open(context, create: true)
        let location = try store.addLocation(
            name: name, latitude: place.latitude, longitude: place.longitude,
            elevation: options.elevation ?? place.elevation,
            timezone: options.timezone ?? place.timezone ?? "auto", models: options.models, now: context.nowUnix)
        let elevationText = location.elevation.map { ", \(formatNumber($0, places: 0)) m" } ?? ""
        context.note(
            "Added \(name): \(place.label.clippedForMessage(200)) (\(formatNumber(place.latitude, places: 4)), \(formatNumber(place.longitude, places: 4))), \(location.timezone)\(elevationText)"
        )
        return location
    }
}
