import Testing

@testable import WxCharts

@Suite struct TickTests {
    @Test(arguments: [
        (0.0, 10.0, 5, 2.0, [0.0, 2, 4, 6, 8, 10]),
        (0.13, 0.92, 5, 0.2, [0.0, 0.2, 0.4, 0.6, 0.8, 1]),
        (-3.2, 1.1, 5, 1.0, [-4.0, -3, -2, -1, 0, 1, 2]),
        (17.0, 17.0, 5, 0.5, [15.0, 15.5, 16, 16.5, 17, 17.5, 18, 18.5, 19]),
        (0.0, 384.0, 6, 50.0, [0.0, 50, 100, 150, 200, 250, 300, 350, 400])
    ])
    func niceTicks(lower: Double, upper: Double, count: Int, step: Double, ticks: [Double]) {
        let nice = Ticks.nice(lower: lower, upper: upper, count: count)
        #expect(nice.step == step)
        #expect(nice.ticks == ticks)
        #expect(nice.lower <= lower && nice.upper >= upper)
    }

    @Test func tickLabelsHaveTheStepsDecimalsOnly() {
        #expect(SVG.tickLabel(0.30000000000000004, step: 0.1) == "0.3")
        #expect(SVG.tickLabel(-0.0, step: 1) == "0")
        #expect(SVG.tickLabel(250, step: 50) == "250")
        #expect(SVG.tickLabel(0.05, step: 0.05) == "0.05")
    }

    @Test func countsStayShort() {
        #expect(SVG.count(812) == "812")
        #expect(SVG.count(9999) == "9999")
        #expect(SVG.count(70_080) == "70.1k")
        #expect(SVG.count(350_400) == "350k")
        #expect(SVG.count(1_234_567) == "1.2M")
    }

    @Test func fixedIsStable() {
        #expect(SVG.fixed(1.25, places: 1) == "1.3")
        #expect(SVG.fixed(-0.04, places: 1) == "0")
        #expect(SVG.fixed(-12.5, places: 2) == "-12.5")
        #expect(SVG.fixed(.nan, places: 2) == "0")
        // Past Int64.max: written, not trapped (issue 25 §5).
        #expect(SVG.fixed(1e19, places: 1) == "1e+19")
        #expect(SVG.fixed(-1e308, places: 2) == "-1e+308")
        #expect(SVG.fixed(3, places: 2) == "3")
    }

    @Test func scaleMapsTheDomainOntoPixels() {
        let y = Scale(lower: 0, upper: 10, from: 300, to: 100)
        #expect(y(0) == 300)
        #expect(y(10) == 100)
        #expect(y(5) == 200)
        #expect(Scale(lower: 2, upper: 2, from: 0, to: 10)(2) == 5)
    }

    @Test func timeTicksFallOnLocalMidnights() {
        // 2026-11-20T00:00Z to 2026-11-25T00:00Z, Berlin (UTC+1).
        let start: Int64 = 1_795_132_800
        let ticks = Ticks.time(lower: start, upper: start + 5 * 86400, offset: 3600)
        #expect(ticks.count >= 4)
        #expect(ticks.allSatisfy { ($0 + 3600) % 86400 == 0 })
        #expect(TimeLabel.text(ticks[0], offset: 3600, step: 86400) == "11-21")
        #expect(TimeLabel.text(start, offset: 0, step: 3600) == "11-20")
        #expect(TimeLabel.text(start + 6 * 3600, offset: 0, step: 3600) == "06:00")
    }
}

@Suite struct SVGTextTests {
    @Test func escapesMarkupQuotesAndControlCharacters() {
        #expect(
            SVG.escape("<script>alert('x')</script> & \"q\"")
                == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;")
        #expect(SVG.escape("a\u{0}b\u{1B}c") == "a\u{FFFD}b\u{FFFD}c")
        #expect(SVG.escape("Zürich ☀︎") == "Zürich ☀︎")
    }

    @Test func aHostileSeriesNameIsEscapedEverywhere() {
        let name = "<img src=x onerror=alert(1)>\"'"
        let chart = LineChart(
            id: "t", title: name, description: name, xTitle: name, yTitle: name,
            series: [ChartSeries(name: name, points: [ChartPoint(x: 0, y: 1, n: 3, note: name)], colour: .palette(0))])
        let svg = chart.svg()
        #expect(!svg.contains("<img"))
        #expect(!svg.contains("onerror=alert(1)>\""))
        #expect(svg.contains("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;"))
    }

    @Test func chartsAreAccessibleAndDeterministic() {
        let chart = LineChart(
            id: "mae temperature", title: "MAE", description: "MAE by lead", xTitle: "lead (h)", yTitle: "MAE (°C)",
            series: [
                ChartSeries(
                    name: "gfs", points: [ChartPoint(x: 3, y: 0.5, n: 10), ChartPoint(x: 9, y: 0.75, n: 12)],
                    colour: .palette(0))
            ])
        var withRow = chart
        withRow.nRow = true
        let svg = withRow.svg()
        #expect(svg.hasPrefix("<svg class=\"wx-chart\" role=\"img\""))
        #expect(svg.contains("aria-labelledby=\"mae-temperature-t mae-temperature-d\""))
        #expect(svg.contains("<title id=\"mae-temperature-t\">MAE</title>"))
        #expect(svg.contains(">lead (h)</text>") && svg.contains(">MAE (°C)</text>"))
        #expect(svg.contains(">12</text>"))  // the n row
        #expect(svg == withRow.svg())
        #expect(!svg.contains("http"))
        let standalone = chart.svg(standalone: true)
        #expect(standalone.contains("xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(standalone.contains("<style>"))
    }

    @Test func calendarCountsHoursPerState() {
        let day: Int64 = 20_000
        let hours: [(hour: Int64, state: CoverageCalendar.State)] =
            (0..<6).map { (day * 24 + $0, .fetched) } + [(day * 24 + 6, .repeated), (day * 24 + 30, .missed)]
        let svg = CoverageCalendar(id: "c", title: "Coverage", description: "d", firstDay: day, days: 2, hours: hours)
            .svg()
        #expect(svg.contains("data-state=\"fetched\" data-hours=\"6\""))
        #expect(svg.contains("data-state=\"repeated\" data-hours=\"1\""))
        #expect(svg.contains("data-state=\"missed\" data-hours=\"1\""))
        // Six neighbouring hours of one state are one rectangle.
        // (Each path's z closes a rectangle; the z of the font-size attributes is not one.)
        let fontSizes = svg.split(separator: "font-size", omittingEmptySubsequences: false).count - 1
        #expect(svg.filter { $0 == "z" }.count - fontSizes < 7)
    }
}
