import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How far a response's grid point may be from the place it was asked for. Open-Meteo answers
/// with the centre of the model's grid cell (or a nearby land cell), never more than a few tens
/// of kilometres away even on the coarsest global grids; a response much farther away describes
/// another place (a swapped batch element, a mislabelled file) and must not be stored for this one.
public enum GridDistance {
    /// The largest accepted distance between a location and its response's grid point. ERA5's
    /// 0.25° cells put the centre within ~20 km; 50 km leaves room and still tells Berlin from Hamburg.
    public static let maxKilometres = 50.0

    /// The great-circle distance in kilometres (haversine, mean Earth radius).
    public static func kilometres(
        latitude lat1: Double, longitude lon1: Double,
        latitude lat2: Double, longitude lon2: Double
    ) -> Double {
        let r = 6371.0088
        let φ1 = lat1 * .pi / 180, φ2 = lat2 * .pi / 180
        let dφ = (lat2 - lat1) * .pi / 180, dλ = (lon2 - lon1) * .pi / 180
        let a = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * r * asin(min(1, sqrt(max(0, a))))
    }

    /// Why a grid point at (`gridLatitude`, `gridLongitude`) cannot be this location's, naming both
    /// coordinates and the distance; nil when it is within `maxKilometres` (or not a finite point).
    public static func mismatch(
        location name: String, latitude: Double, longitude: Double,
        gridLatitude: Double, gridLongitude: Double
    ) -> String? {
        let distance = kilometres(
            latitude: latitude, longitude: longitude, latitude: gridLatitude, longitude: gridLongitude)
        if distance <= maxKilometres { return nil }
        let shown = distance.isFinite ? String(printf: "%.0f km", distance) : "an unknown distance"
        return "the response describes the grid point \(coordinate(gridLatitude)), \(coordinate(gridLongitude)), "
            + "\(shown) from \(name.clippedForMessage()) (\(coordinate(latitude)), \(coordinate(longitude))); "
            + "more than \(Int(maxKilometres)) km away, it is another place's forecast"
    }

    static func coordinate(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        var text = String(printf: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
