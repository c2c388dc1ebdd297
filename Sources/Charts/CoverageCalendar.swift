/// A calendar of hours: one column per day, one row per hour of the day, each hour coloured by what
/// happened in it (a new forecast fetched, the same content fetched again, or a fetch missed), so
/// gaps stand out. Each state is one `<path>`, so a year of hours stays a few hundred kilobytes.
public struct CoverageCalendar: Sendable {
    public enum State: String, Sendable, CaseIterable {
        case fetched, repeated, missed
        var label: String {
            switch self {
            case .fetched: return "new forecast fetched"
            case .repeated: return "same content fetched again"
            case .missed: return "fetch missed or failed"
            }
        }
    }

    public var id: String
    public var title: String
    public var description: String
    /// The first local day shown, as days since 1970-01-01, and how many days.
    public var firstDay: Int64
    public var days: Int
    /// Local hours (Unix seconds shifted by the offset, divided by 3600) and their state.
    public var hours: [(hour: Int64, state: State)]
    public var width = 720

    public init(
        id: String, title: String, description: String, firstDay: Int64, days: Int,
        hours: [(hour: Int64, state: State)]
    ) {
        self.id = id
        self.title = title
        self.description = description
        self.firstDay = firstDay
        self.days = max(1, days)
        self.hours = hours
    }

    public func svg(standalone: Bool = false) -> String {
        let left = 48.0
        let top = 48.0
        let cellHeight = 6.0
        let plotWidth = Double(width) - left - 16
        let cellWidth = plotWidth / Double(days)
        let height = Int(top + 24 * cellHeight + 40)
        var out = SVG.open(
            id: id, width: width, height: height, title: title, description: description, standalone: standalone)
        out += SVG.text(title, x: 8, y: 18, cssClass: "title")
        var counts: [State: Int] = [:]
        var paths: [State: String] = [:]
        // Runs of neighbouring hours in one day with the same state become one rectangle.
        let sorted = hours.sorted { $0.hour < $1.hour }
        var index = 0
        while index < sorted.count {
            let start = sorted[index]
            var end = index
            while end + 1 < sorted.count, sorted[end + 1].state == start.state,
                sorted[end + 1].hour == sorted[end].hour + 1,
                sorted[end + 1].hour.floorDivided(by: 24) == start.hour.floorDivided(by: 24)
            {
                end += 1
            }
            let day = start.hour.floorDivided(by: 24) - firstDay
            let hourOfDay = start.hour - start.hour.floorDivided(by: 24) * 24
            let length = end - index + 1
            counts[start.state, default: 0] += length
            if day >= 0 && day < Int64(days) {
                let px = left + Double(day) * cellWidth
                let py = top + Double(hourOfDay) * cellHeight
                paths[start.state, default: ""] +=
                    "M\(SVG.coordinate(px)) \(SVG.coordinate(py))h\(SVG.fixed(cellWidth, places: 2))v\(SVG.coordinate(Double(length) * cellHeight))h-\(SVG.fixed(cellWidth, places: 2))z"
            }
            index = end + 1
        }
        for state in State.allCases {
            guard let d = paths[state] else { continue }
            out +=
                "<path class=\"k-\(state.rawValue)\" data-state=\"\(state.rawValue)\" data-hours=\"\(counts[state] ?? 0)\" d=\"\(d)\"><title>\(SVG.escape("\(state.label): \(counts[state] ?? 0) hours"))</title></path>"
        }
        // Frame, hour labels and date labels.
        out +=
            "<path class=\"axis\" d=\"M\(SVG.coordinate(left)) \(SVG.coordinate(top))h\(SVG.coordinate(plotWidth))v\(SVG.coordinate(24 * cellHeight))h-\(SVG.coordinate(plotWidth))z\"/>"
        for hour in [0, 6, 12, 18] {
            out += SVG.text(
                "\(hour < 10 ? "0" : "")\(hour):00", x: left - 4, y: top + Double(hour) * cellHeight + 5, anchor: "end",
                cssClass: "small")
        }
        let start = firstDay * 86400
        let end = (firstDay + Int64(days)) * 86400
        let ticks = Ticks.time(lower: start, upper: end - 1, offset: 0, count: 8).filter { $0 % 86400 == 0 }
        let step = ticks.count > 1 ? max(86400, ticks[1] - ticks[0]) : 86400
        for tick in ticks {
            let px = left + Double(tick / 86400 - firstDay) * cellWidth
            out += "<path class=\"axis\" d=\"M\(SVG.coordinate(px)) \(SVG.coordinate(top + 24 * cellHeight))v4\"/>"
            out += SVG.text(
                TimeLabel.text(tick, offset: 0, step: step), x: px, y: top + 24 * cellHeight + 16, anchor: "middle",
                cssClass: "tick")
        }
        out += SVG.text(
            "local date", x: left + plotWidth / 2, y: top + 24 * cellHeight + 32, anchor: "middle",
            cssClass: "axis-title")
        // Legend with the hours of each state.
        out += "<g class=\"legend\">"
        for (position, state) in State.allCases.enumerated() {
            let lx = 8 + Double(position) * 236
            out +=
                "<rect class=\"k-\(state.rawValue)\" x=\"\(SVG.coordinate(lx))\" y=\"26\" width=\"12\" height=\"10\"/>"
            out += SVG.text("\(state.label): \(counts[state] ?? 0) h", x: lx + 16, y: 35)
        }
        out += "</g></svg>"
        return SVG.presented(out)
    }
}
