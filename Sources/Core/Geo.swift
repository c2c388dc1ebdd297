import Foundation

/// Distances on the Earth, for checking that a response is for the place it is stored under.
public enum Geo {
    /// Great-circle distance in km between two points in degrees (haversine, mean Earth radius).
    public static func distanceKilometres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let s1 = sin(dLat / 2), s2 = sin(dLon / 2)
        let a = s1 * s1 + cos(lat1 * radians) * cos(lat2 * radians) * s2 * s2
        return 2 * 6371.0088 * asin(min(1, a.squareRoot()))
    }
}
