import Glibc

/// One point of a series: where it goes, the pairs (or hours) behind it, and its tooltip.
public struct ChartPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double
    /// How many pairs, hours or forecasts the point stands for.
    public var n: Int?
    /// Tooltip text (escaped when drawn); the series name and n are added to it.
    public var note: String?

    public init(x: Double, y: Double, n: Int? = nil, note: String? = nil) {
        self.x = x
        self.y = y
        self.n = n
        self.note = note
    }
}

/// A named line (or set of markers) of a chart.
public struct ChartSeries: Sendable, Equatable {
    public enum Colour: Sendable, Equatable {
        /// The `n`-th colour of the palette (Okabe–Ito order, then Tol's), with the `n`-th marker shape:
        /// ten series before either repeats.
        case palette(Int)
        /// The text colour: observations, the thing forecasts are measured against.
        case observed
        var cssClass: String {
            switch self {
            case .palette(let index): return "c\(index % Self.count)"
            case .observed: return "cobs"
            }
        }
        /// How many colours (and marker shapes) there are before they repeat.
        public static let count = 10
        var marker: Marker {
            switch self {
            case .palette(let index): return Marker.allCases[index % Self.count]
            case .observed: return .circle
            }
        }
    }

    public var name: String
    public var points: [ChartPoint]
    public var colour: Colour
    /// 0 solid, 1 dashed, 2 dotted, 3 dash-dot: lines stay apart in black-and-white print.
    public var dash: Int
    public var line: Bool
    public var markers: Bool
    /// A line breaks where neighbouring points are further apart than this on x (missing data).
    public var maxGap: Double?
    /// A shaded interval around the line (confidence intervals), drawn beneath it in its colour.
    public var band: [ChartBand] = []

    public init(
        name: String, points: [ChartPoint], colour: Colour, dash: Int = 0, line: Bool = true, markers: Bool = true,
        maxGap: Double? = nil
    ) {
        self.name = name
        self.points = points
        self.colour = colour
        self.dash = dash
        self.line = line
        self.markers = markers
        self.maxGap = maxGap
    }
}

/// One x position of a series' shaded interval.
public struct ChartBand: Sendable, Equatable {
    public var x: Double
    public var low: Double
    public var high: Double

    public init(x: Double, low: Double, high: Double) {
        self.x = x
        self.low = low
        self.high = high
    }
}

/// A line chart with axes at nice ticks, axis titles with units, a legend and the n behind every
/// point: as a row of numbers under the x axis (`nRow`, for a few shared x positions such as lead
/// buckets) or as marker size with a key (`sizeByN`), and always in each marker's tooltip.
public struct LineChart: Sendable {
    public enum XAxis: Sendable, Equatable {
        case linear
        /// Unix seconds, labelled in the frame `offset` seconds east of UTC.
        case time(offset: Int)
        /// Fixed ticks with labels (lead buckets).
        case categories([Double], [String])
    }

    public var id: String
    public var title: String
    /// A sentence for screen readers on what the chart shows.
    public var description: String
    public var xTitle: String
    public var yTitle: String
    public var series: [ChartSeries]
    public var xAxis: XAxis = .linear
    /// Larger x to the left (lead time counting down to the valid time).
    public var reversedX = false
    /// Horizontal reference lines (0 for a bias).
    public var referenceY: [Double] = []
    /// The y = x line (reliability diagrams).
    public var diagonal = false
    public var xDomain: ClosedRange<Double>?
    public var yDomain: ClosedRange<Double>?
    /// A quantity that cannot go below 0 (precipitation, speed): the y axis stops at 0.
    public var nonNegative = false
    /// A row of n per series under the x axis, at each point's x.
    public var nRow = false
    /// Marker area proportional to n, with a key.
    public var sizeByN = false
    public var width = 720
    public var height = 320

    public init(id: String, title: String, description: String, xTitle: String, yTitle: String, series: [ChartSeries]) {
        self.id = id
        self.title = title
        self.description = description
        self.xTitle = xTitle
        self.yTitle = yTitle
        self.series = series
    }

    /// The chart as one `<svg>` element; `standalone` makes it a document of its own.
    public func svg(standalone: Bool = false) -> String {
        let shown = series.filter { !$0.points.isEmpty }
        let all = shown.flatMap(\.points)
        let legend = legendLayout(shown.map(\.name))
        let legendRows = max(1, (legend.last?.row ?? 0) + 1 + (sizeByN ? 1 : 0))
        let stripRows = nRow ? shown.filter { s in s.points.contains { $0.n != nil } }.count : 0
        let plotTop = 30.0 + Double(legendRows) * 16 + 8
        // Many series (nine models) take legend and n rows from the plot: the chart grows instead,
        // so the plot keeps at least 150 px.
        let height = max(self.height, Int((plotTop + 150 + 44 + Double(stripRows) * 14).rounded(.up)))
        let plotBottom = Double(height) - 44 - Double(stripRows) * 14
        let plotLeft = 64.0
        let plotRight = Double(width) - 16

        var xs = all.map(\.x)
        let bands = shown.flatMap(\.band)
        var ys = all.map(\.y) + referenceY + bands.map(\.low) + bands.map(\.high)
        if case .categories(let positions, _) = xAxis { xs += positions }
        if xs.isEmpty { xs = [0, 1] }
        if ys.isEmpty { ys = [0, 1] }
        var out = SVG.open(
            id: id, width: width, height: height, title: title, description: description, standalone: standalone)
        out += SVG.text(title, x: 8, y: 18, cssClass: "title")

        // Axes.
        let yNice = Ticks.nice(
            lower: yDomain?.lowerBound ?? ys.min()!, upper: yDomain?.upperBound ?? ys.max()!, count: 5)
        let yLower = yDomain?.lowerBound ?? (nonNegative && ys.min()! >= 0 ? max(0, yNice.lower) : yNice.lower)
        let yUpper = yDomain?.upperBound ?? yNice.upper
        let y = Scale(lower: yLower, upper: yUpper, from: plotBottom, to: plotTop)
        let xLower = xDomain?.lowerBound ?? xs.min()!
        let xUpper = xDomain?.upperBound ?? xs.max()!
        var xTicks: [(Double, String)] = []
        var xScaleLower = xLower
        var xScaleUpper = xUpper
        switch xAxis {
        case .linear:
            let nice = Ticks.nice(lower: xLower, upper: xUpper, count: 6)
            if xDomain == nil { (xScaleLower, xScaleUpper) = (nice.lower, nice.upper) }
            xTicks = nice.ticks.filter { $0 >= xScaleLower - 1e-9 && $0 <= xScaleUpper + 1e-9 }.map {
                ($0, SVG.tickLabel($0, step: nice.step))
            }
        case .time(let offset):
            if xScaleLower == xScaleUpper {
                xScaleLower -= 3600
                xScaleUpper += 3600
            }
            let ticks = Ticks.time(lower: Int64(xScaleLower), upper: Int64(xScaleUpper), offset: offset)
            let step = ticks.count > 1 ? ticks[1] - ticks[0] : 86400
            xTicks = ticks.map { (Double($0), TimeLabel.text($0, offset: offset, step: step)) }
        case .categories(let positions, let labels):
            let pad = positions.count > 1 ? (positions[1] - positions[0]) / 2 : 0.5
            xScaleLower = min(xLower, positions.first ?? xLower) - pad
            xScaleUpper = max(xUpper, positions.last ?? xUpper) + pad
            xTicks = Array(zip(positions, labels))
        }
        let x =
            reversedX
            ? Scale(lower: xScaleLower, upper: xScaleUpper, from: plotRight, to: plotLeft)
            : Scale(lower: xScaleLower, upper: xScaleUpper, from: plotLeft, to: plotRight)

        out += "<g class=\"grid\">"
        for tick in yNice.ticks where tick >= yLower - 1e-9 && tick <= yUpper + 1e-9 {
            let py = SVG.coordinate(y(tick))
            out += "<path d=\"M\(SVG.coordinate(plotLeft)) \(py)H\(SVG.coordinate(plotRight))\"/>"
        }
        out += "</g>"
        out +=
            "<path class=\"axis\" d=\"M\(SVG.coordinate(plotLeft)) \(SVG.coordinate(plotTop))V\(SVG.coordinate(plotBottom))H\(SVG.coordinate(plotRight))\"/>"
        for tick in yNice.ticks where tick >= yLower - 1e-9 && tick <= yUpper + 1e-9 {
            out += SVG.text(
                SVG.tickLabel(tick, step: yNice.step), x: plotLeft - 6, y: y(tick) + 4, anchor: "end",
                cssClass: "tick")
        }
        // Category labels thin out when they would overlap.
        let every = max(1, Int((Double(xTicks.count) * 44 / (plotRight - plotLeft)).rounded(.up)))
        for (index, (value, label)) in xTicks.enumerated() {
            let px = x(value)
            out +=
                "<path class=\"axis\" d=\"M\(SVG.coordinate(px)) \(SVG.coordinate(plotBottom))v4\"/>"
            if index % every == 0 {
                out += SVG.text(label, x: px, y: plotBottom + 16, anchor: "middle", cssClass: "tick")
            }
        }
        out += SVG.text(
            xTitle, x: (plotLeft + plotRight) / 2, y: plotBottom + 32, anchor: "middle", cssClass: "axis-title")
        out += SVG.text(
            yTitle, x: 14, y: (plotTop + plotBottom) / 2, anchor: "middle", cssClass: "axis-title", rotate: true)

        // Reference lines.
        for reference in referenceY where reference >= yLower && reference <= yUpper {
            out +=
                "<path class=\"ref\" d=\"M\(SVG.coordinate(plotLeft)) \(SVG.coordinate(y(reference)))H\(SVG.coordinate(plotRight))\"/>"
        }
        if diagonal {
            let low = max(xScaleLower, yLower)
            let high = min(xScaleUpper, yUpper)
            out +=
                "<path class=\"ref\" d=\"M\(SVG.coordinate(x(low))) \(SVG.coordinate(y(low)))L\(SVG.coordinate(x(high))) \(SVG.coordinate(y(high)))\"><title>perfect reliability</title></path>"
        }

        // Series.
        let maxN = max(1, all.compactMap(\.n).max() ?? 1)
        func radius(_ n: Int?) -> Double {
            guard sizeByN, let n else { return 3 }
            return 1.5 + 6.5 * (Double(max(n, 0)) / Double(maxN)).squareRoot()
        }
        for (index, s) in shown.enumerated() {
            let colour = s.colour.cssClass
            out += "<g class=\"series\" data-series=\"\(SVG.escape(s.name))\">"
            // A band breaks where its line does (days without an interval are no interval).
            var runs: [[ChartBand]] = []
            for point in s.band {
                if let last = runs.last?.last, abs(point.x - last.x) <= (s.maxGap ?? .infinity) {
                    runs[runs.count - 1].append(point)
                } else {
                    runs.append([point])
                }
            }
            let shapes = runs.filter { $0.count >= 2 }.map { run in
                let upper = run.map { SVG.coordinate(x($0.x)) + " " + SVG.coordinate(y($0.high)) }
                let lower = run.reversed().map { SVG.coordinate(x($0.x)) + " " + SVG.coordinate(y($0.low)) }
                return "M\((upper + lower).joined(separator: "L"))Z"
            }
            if !shapes.isEmpty { out += "<path class=\"band \(colour)\" d=\"\(shapes.joined())\"/>" }
            if s.line {
                var d = ""
                var previous: Double?
                for point in s.points {
                    let gap = previous.map { abs(point.x - $0) > (s.maxGap ?? .infinity) } ?? true
                    d += (gap ? "M" : "L") + SVG.coordinate(x(point.x)) + " " + SVG.coordinate(y(point.y))
                    previous = point.x
                }
                out += "<path class=\"line \(colour)\(s.dash > 0 ? " d\(s.dash)" : "")\" d=\"\(d)\"/>"
            }
            if s.markers {
                for point in s.points {
                    var tip = s.name
                    if let note = point.note { tip += ": " + note }
                    if let n = point.n { tip += " (n=\(n))" }
                    out += s.colour.marker.element(
                        cssClass: colour, x: x(point.x), y: y(point.y), radius: radius(point.n),
                        inner: "<title>\(SVG.escape(tip))</title>")
                }
            }
            out += "</g>"
            _ = index
        }

        // The n row: one line per series, numbers under their points.
        if nRow {
            var row = 0
            for s in shown where s.points.contains(where: { $0.n != nil }) {
                let py = plotBottom + 48 + Double(row) * 14
                out += SVG.text(
                    shown.count > 1 ? "n" : "n", x: plotLeft - 6, y: py, anchor: "end", cssClass: "small")
                out += "<g class=\"n-row \(s.colour.cssClass)\" data-series=\"\(SVG.escape(s.name))\">"
                for point in s.points {
                    guard let n = point.n else { continue }
                    out += SVG.text(
                        SVG.count(n), x: x(point.x), y: py, anchor: "middle", cssClass: "small")
                }
                out += "</g>"
                row += 1
            }
        }

        // Legend.
        out += "<g class=\"legend\">"
        for (index, s) in shown.enumerated() {
            let lx = legend[index].x
            let ly = 34 + Double(legend[index].row) * 16
            let colour = s.colour.cssClass
            if s.line {
                out +=
                    "<path class=\"line \(colour)\(s.dash > 0 ? " d\(s.dash)" : "")\" d=\"M\(SVG.coordinate(lx)) \(SVG.coordinate(ly - 4))h22\"/>"
            }
            if s.markers {
                out += s.colour.marker.element(cssClass: colour, x: lx + 11, y: ly - 4, radius: 3.5)
            }
            out += SVG.text(s.name, x: lx + 28, y: ly)
        }
        if sizeByN {
            let ly = 34 + Double(legendRows - 1) * 16
            let key = "marker area ∝ n (largest n=\(maxN))"
            out +=
                "<circle class=\"cobs\" fill-opacity=\".25\" cx=\"\(SVG.coordinate(Double(width) - 250))\" cy=\"\(SVG.coordinate(ly - 4))\" r=\"\(SVG.fixed(radius(maxN), places: 1))\"/>"
            out += SVG.text(key, x: Double(width) - 238, y: ly, cssClass: "small")
        }
        out += "</g></svg>"
        return SVG.presented(out)
    }
}

/// The shape of a series' markers: with the colour, each of ten series has its own, so lines stay
/// apart for readers who cannot tell two colours apart and in black-and-white print.
enum Marker: CaseIterable {
    case circle, square, triangle, diamond, triangleDown, pentagon, star, plus, cross, hexagon

    /// The marker at (x, y) whose size matches a circle of `radius`; `inner` goes inside the element
    /// (a tooltip).
    func element(cssClass: String, x: Double, y: Double, radius: Double, inner: String = "") -> String {
        let close = inner.isEmpty ? "/>" : ">\(inner)</\(self == .circle ? "circle" : "path")>"
        if self == .circle {
            return
                "<circle class=\"\(cssClass)\" cx=\"\(SVG.coordinate(x))\" cy=\"\(SVG.coordinate(y))\" r=\"\(SVG.fixed(radius, places: 1))\"\(close)"
        }
        // Corners relative to the first one, so the same shape has the same path wherever it is.
        let corners = outline(radius)
        var d = "M\(SVG.coordinate(x + corners[0].0)) \(SVG.coordinate(y + corners[0].1))"
        for index in corners.indices.dropFirst() {
            let dx = corners[index].0 - corners[index - 1].0
            let dy = corners[index].1 - corners[index - 1].1
            d += "l\(SVG.fixed(dx, places: 2)) \(SVG.fixed(dy, places: 2))"
        }
        return "<path class=\"\(cssClass)\" d=\"\(d)z\"\(close)"
    }

    /// The corners of the shape around (0, 0), y down; polygons are drawn a little larger than the
    /// circle so they look the same size.
    private func outline(_ radius: Double) -> [(Double, Double)] {
        let r = radius * 1.25
        func regular(_ sides: Int, start: Double, size: Double = r) -> [(Double, Double)] {
            (0..<sides).map { k in
                let angle = start + 2 * Double.pi * Double(k) / Double(sides)
                return (size * cos(angle), size * sin(angle))
            }
        }
        switch self {
        case .circle: return []
        case .square: return regular(4, start: Double.pi / 4, size: r * 0.95)
        case .triangle: return regular(3, start: -Double.pi / 2, size: r * 1.1)
        case .diamond: return regular(4, start: -Double.pi / 2, size: r * 1.05)
        case .triangleDown: return regular(3, start: Double.pi / 2, size: r * 1.1)
        case .pentagon: return regular(5, start: -Double.pi / 2)
        case .hexagon: return regular(6, start: 0)
        case .star:
            return (0..<10).map { k in
                let angle = -Double.pi / 2 + Double.pi * Double(k) / 5
                let size = k % 2 == 0 ? r * 1.2 : r * 0.5
                return (size * cos(angle), size * sin(angle))
            }
        case .plus, .cross:
            // A cross of two bars a third of its width, upright (+) or turned by 45° (×).
            let a = r, b = r / 3
            let upright: [(Double, Double)] = [
                (-b, -a), (b, -a), (b, -b), (a, -b), (a, b), (b, b), (b, a), (-b, a), (-b, b), (-a, b), (-a, -b),
                (-b, -b)
            ]
            guard self == .cross else { return upright }
            let turn = 0.5.squareRoot()
            return upright.map { p in ((p.0 - p.1) * turn, (p.0 + p.1) * turn) }
        }
    }
}

extension LineChart {
    /// Legend entries left to right, wrapping at the chart's width: (x, row) of each. Text width is
    /// estimated (7 px a character at 12 px), which is enough to keep entries apart.
    func legendLayout(_ names: [String]) -> [(x: Double, row: Int)] {
        var out: [(x: Double, row: Int)] = []
        var x = 8.0
        var row = 0
        for name in names {
            let entry = 28 + 7 * Double(name.count) + 18
            if x > 8 && x + entry > Double(width) - 8 {
                x = 8
                row += 1
            }
            out.append((x, row))
            x += entry
        }
        return out
    }
}

/// Labels for time ticks: the date (`11-20`), with the time when ticks are hours apart.
public enum TimeLabel {
    public static func text(_ instant: Int64, offset: Int, step: Int64) -> String {
        let local = instant + Int64(offset)
        let days = local.floorDivided(by: 86400)
        let seconds = local - days * 86400
        let (year, month, day) = civil(days: days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : String(v) }
        if step >= 91 * 86400 { return "\(year)-\(two(month))" }
        let date = "\(two(month))-\(two(day))"
        if step >= 86400 { return date }
        let hour = Int(seconds / 3600)
        return hour == 0 ? date : "\(two(hour)):00"
    }

    /// Year, month, day of a count of days since 1970-01-01 (proleptic Gregorian).
    static func civil(days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }
}
