import Foundation
import WxCore

/// An Open-Meteo forecast response written for a test: unix times, one fixed UTC offset, hourly
/// temperature from `temperature(instant)`, and daily max/min per local day of the window.
struct TestResponse {
    var latitude = 52.5
    var longitude = 13.4
    /// Seconds east of UTC; the window starts at a local midnight under it.
    var offset = 0
    /// First hourly instant (UTC).
    var start: Int64
    var hours: Int
    var temperature: @Sendable (Int64) -> Double
    /// Hourly precipitation (mm), when the response has it.
    var precipitation: (@Sendable (Int64) -> Double)? = nil

    var times: [Int64] { (0..<hours).map { start + Int64($0) * 3600 } }

    func json() -> String {
        let times = self.times
        let values = times.map(temperature)
        // Local days (under the fixed offset) the window covers, as the UTC instant of their midnight.
        var days: [(Int64, [Double])] = []
        for (time, value) in zip(times, values) {
            let local = time + Int64(offset)
            let midnight = local - ((local % 86400) + 86400) % 86400 - Int64(offset)
            if days.last?.0 == midnight {
                days[days.count - 1].1.append(value)
            } else {
                days.append((midnight, [value]))
            }
        }
        func list(_ xs: [Double]) -> String { "[" + xs.map { JSON.numberText($0) }.joined(separator: ",") + "]" }
        let rain = precipitation.map { ",\"precipitation\":" + list(times.map($0)) } ?? ""
        return """
            {"latitude":\(latitude),"longitude":\(longitude),"elevation":40,"utc_offset_seconds":\(offset),"timezone":"GMT",
             "hourly_units":{"time":"unixtime","temperature_2m":"°C"},
             "hourly":{"time":[\(times.map(String.init).joined(separator: ","))],"temperature_2m":\(list(values))\(rain)},
             "daily_units":{"time":"unixtime","temperature_2m_max":"°C","temperature_2m_min":"°C"},
             "daily":{"time":[\(days.map { String($0.0) }.joined(separator: ","))],
                      "temperature_2m_max":\(list(days.map { $0.1.max()! })),"temperature_2m_min":\(list(days.map { $0.1.min()! }))}}
            """
    }
}

extension Sandbox {
    /// Writes `text` to a file in the sandbox and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Removes the sandbox folder (for `defer`).
    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// Midnight UTC of a date, as unix seconds.
func utcMidnight(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
    Int64(CivilTime.days(year: year, month: month, day: day)) * 86400
}

/// A station CSV with one temperature per hour from `first` for `hours` hours.
func stationCSV(from first: Int64, hours: Int, step: Int64 = 3600, _ value: (Int64) -> Double) -> String {
    var text = "time,temperature_2m\n"
    for i in 0..<hours {
        let t = first + Int64(i) * step
        text += CivilTime.isoUTC(t) + "," + JSON.numberText(value(t)) + "\n"
    }
    return text
}
