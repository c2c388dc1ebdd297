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
}
