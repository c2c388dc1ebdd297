// Foundation: JSONSerialization and String(format:) for the generated history (test server, not in wxdb).
import Foundation

/// Writes a synthetic forecast history to files, for the offline demo and benchmarks: the
/// forecast responses wxdb would have fetched every few hours, and the "observed" weather over
/// the same period as a station CSV. Deterministic for the same arguments.
public enum SyntheticHistory {
    /// The variables wxdb asks for, so the files look like real wxdb fetches.
    static let hourly =
        "temperature_2m,relative_humidity_2m,dew_point_2m,apparent_temperature,precipitation_probability,precipitation,weather_code,cloud_cover,pressure_msl,wind_speed_10m,wind_direction_10m,wind_gusts_10m"
    static let daily =
        "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max,wind_speed_10m_max,sunrise,sunset"

    /// One forecast response as fetched at `now`, from the model run initialised at `initTime`
    /// (Unix seconds): the values the replay server's live and single-runs endpoints give that run.
    public static func forecast(
        latitude: Double, longitude: Double, timezone: String, now: Date, initTime: Int,
        forecastDays: Int = 16, pastDays: Int = 1
    ) throws -> Data {
        let query = Query([
            URLQueryItem(name: "hourly", value: hourly), URLQueryItem(name: "daily", value: daily),
            URLQueryItem(name: "timeformat", value: "unixtime"), URLQueryItem(name: "timezone", value: timezone),
            URLQueryItem(name: "forecast_days", value: String(forecastDays)),
            URLQueryItem(name: "past_days", value: String(pastDays))
        ])
        do {
            let text = try Synth.location(
                api: .forecast, query: query, latitude: latitude, longitude: longitude, index: 0,
                zoneName: timezone, context: SynthContext(now: now, run: initTime))
            return Data(text.utf8)
        } catch {
            throw HistoryError(message: "cannot synthesize: \(error.reason)")
        }
    }

    /// Hourly "observations" (the archive synthesizer) from `startDate` to `endDate` (YYYY-MM-DD,
    /// UTC), as CSV `time,<variables>` with ISO 8601 UTC times.
    public static func observationsCSV(latitude: Double, longitude: Double, startDate: String, endDate: String) throws
        -> String
    {
        let variables = hourly.split(separator: ",").filter { $0 != "precipitation_probability" }.map(String.init)
        let query = Query([
            URLQueryItem(name: "hourly", value: variables.joined(separator: ",")),
            URLQueryItem(name: "timeformat", value: "unixtime"), URLQueryItem(name: "timezone", value: "GMT"),
            URLQueryItem(name: "start_date", value: startDate), URLQueryItem(name: "end_date", value: endDate)
        ])
        let text: String
        do {
            text = try Synth.location(
                api: .archive, query: query, latitude: latitude, longitude: longitude, index: 0,
                zoneName: "GMT", context: SynthContext(now: Date(), run: 0))
        } catch {
            throw HistoryError(message: "cannot synthesize: \(error.reason)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let hourlyBlock = object["hourly"] as? [String: Any], let times = hourlyBlock["time"] as? [NSNumber]
        else {
            throw HistoryError(message: "synthesized archive has no hourly block")
        }
        var csv = "time," + variables.joined(separator: ",") + "\n"
        for (row, time) in times.enumerated() {
            let seconds = time.int64Value
            let (y, m, d) = Civil.date(fromDays: Int(seconds / 86400))
            let rest = Int(seconds % 86400)
            csv += String(format: "%04d-%02d-%02dT%02d:%02d:00Z", y, m, d, rest / 3600, rest % 3600 / 60)
            for variable in variables {
                let values = hourlyBlock[variable] as? [Any]
                if let number = values?[row] as? NSNumber { csv += "," + number.stringValue } else { csv += "," }
            }
            csv += "\n"
        }
        return csv
    }
}

/// Why a history could not be written.
public struct HistoryError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}
