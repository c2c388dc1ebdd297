import Foundation
import Testing

@testable import WxCharts

@Suite("a chart of many models keeps a plot to read")
struct ManySeriesTests {
    /// The `height` attribute of the chart's `<svg>`.
    private func height(_ svg: String) -> Int? {
        guard let range = svg.range(of: "height=\"") else { return nil }
        return Int(svg[range.upperBound...].prefix { $0.isNumber })
    }

    private func chart(models: Int) -> LineChart {
        var series: [ChartSeries] = []
        for index in 0..<models {
            let points = (0..<5).map { ChartPoint(x: Double($0), y: Double(index + $0), n: 10) }
            series.append(ChartSeries(name: "model_number_\(index) MAE", points: points, colour: .palette(index)))
            series.append(
                ChartSeries(
                    name: "model_number_\(index) bias", points: points.map { ChartPoint(x: $0.x, y: -$0.y) },
                    colour: .palette(index), dash: 1))
        }
        var chart = LineChart(id: "many", title: "t", description: "d", xTitle: "x", yTitle: "y", series: series)
        chart.nRow = true
        return chart
    }

    @Test("one or two models: the usual 320 px; nine models: taller, so legend and n rows leave the plot 150 px")
    func grows() {
        #expect(height(chart(models: 1).svg()) == 320)
        #expect(height(chart(models: 2).svg()) == 320)
        let nine = height(chart(models: 9).svg()) ?? 0
        // 18 legend entries of ~190 px on a 720 px chart: 5 rows of 16 px; 9 n rows of 14 px.
        #expect(nine >= 30 + 5 * 16 + 8 + 150 + 44 + 9 * 14, "height \(nine)")
    }

    /// The first marker of each series' group: its colour and its shape (the path with its first
    /// point left out, so the same shape anywhere reads the same).
    private func markers(_ svg: String, names: [String]) -> [(fill: String, shape: String)] {
        names.compactMap { name in
            guard let group = svg.range(of: "data-series=\"\(name)\">") else { return nil }
            var rest = svg[group.upperBound...]
            rest = rest[..<(rest.range(of: "</g>")?.lowerBound ?? rest.endIndex)]
            guard let start = rest.range(of: "<circle") ?? rest.range(of: "<path class=\"c") else { return nil }
            let tag = rest[start.lowerBound...].prefix { $0 != ">" }
            func attribute(_ key: String) -> String {
                guard let r = tag.range(of: " \(key)=\"") else { return "" }
                return String(tag[r.upperBound...].prefix { $0 != "\"" })
            }
            let path = attribute("d")
            let shape = tag.hasPrefix("<circle") ? "circle" : String(path.drop { $0 != "l" })
            return (attribute("fill"), shape)
        }
    }

    @Test("nine models: nine colours and nine marker shapes, in the points and in the legend")
    func nineDistinct() {
        let names = (0..<9).map { "model_number_\($0) MAE" }
        let svg = chart(models: 9).svg()
        let found = markers(svg, names: names)
        #expect(found.count == 9)
        #expect(Set(found.map(\.fill)).count == 9, "\(found.map(\.fill))")
        #expect(Set(found.map(\.shape)).count == 9, "\(found.map(\.shape))")
        #expect(found.allSatisfy { $0.fill.hasPrefix("#") })
        // The legend draws each series' own marker beside its name.
        let legend = svg[(svg.range(of: "<g class=\"legend\">")?.upperBound ?? svg.endIndex)...]
        let legendShapes = Set(
            legend.split(separator: "<").filter { $0.hasPrefix("path class=\"c") && !$0.contains("line") }.map {
                String($0.split(separator: "\"")[3].drop { $0 != "l" })
            })
        #expect(legendShapes.count == 8, "circles aside, eight polygon shapes in the legend")
        // The stylesheet has a rule for every class the chart uses.
        for index in 0..<9 { #expect(SVG.css.contains(".wx-chart .c\(index){")) }
    }
}
