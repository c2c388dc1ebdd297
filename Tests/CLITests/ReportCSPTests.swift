import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// Issue #26 item 8: the report served under `Content-Security-Policy: default-src 'none'` (its
/// inline stylesheet blocked) stays readable: coloured lines on a light ground, not black shapes.
@Suite(
    "wxdb report under a Content-Security-Policy",
    .enabled(if: HeadlessChromium.unavailableReason == nil, "chromium cannot render here (the reason is on stderr)"))
struct ReportCSPTests {
    /// The report with a policy that blocks every inline style, as a server's header would; inline
    /// scripts are allowed only so that the harness's measuring copy can find the charts (the page
    /// has none of its own), the styles fall back to `default-src 'none'`.
    static let policy =
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'\">"

    /// Pixels of the rectangle within `tolerance` of one of `colours`.
    static func pixels(_ image: PNGImage, _ svg: RenderedPage.SVG, near colours: [(Int, Int, Int)], tolerance: Int = 40)
        -> Int
    {
        var count = 0
        for row in max(0, svg.y)..<min(image.height, svg.y + svg.height) {
            for column in max(0, svg.x)..<min(image.width, svg.x + svg.width) {
                let i = (row * image.width + column) * 4
                let (r, g, b) = (Int(image.rgba[i]), Int(image.rgba[i + 1]), Int(image.rgba[i + 2]))
                if colours.contains(where: { abs($0.0 - r) + abs($0.1 - g) + abs($0.2 - b) < tolerance }) { count += 1 }
            }
        }
        return count
    }

    @Test("with the inline style blocked every chart is drawn in colour on a light ground, not in black shapes")
    func blockedStylesheet() async throws {
        let box = Sandbox()
        defer { box.remove() }
        let history = ReportHistory.full
        try history.build(box)
        box.now = Date(timeIntervalSince1970: TimeInterval(history.now))
        let file = box.folder.appendingPathComponent("report.html")
        let result = await box.run("report", "--location", "Testville", "--output", file.path)
        #expect(result.code == 0, "\(result.stderrText)")
        let html = try String(contentsOf: file, encoding: .utf8)
        try html.replacingOccurrences(of: "<head>\n", with: "<head>\n" + Self.policy + "\n").write(
            to: file, atomically: true, encoding: .utf8)
        if let keep = ProcessInfo.processInfo.environment["WXDB_KEEP_REPORTS"] {
            try? FileManager.default.copyItem(atPath: file.path, toPath: keep + "/csp-report.html")
        }
        let page = try await HeadlessChromium.offPool { try HeadlessChromium.render(file) }
        // The browser says it refused the style: the policy is in force.
        #expect(page.console.contains { $0.contains("Content Security Policy") }, "\(page.console)")
        #expect(page.pageRequests.isEmpty)
        let charts = page.svgs.filter { $0.attribute("role") == "img" }
        #expect(charts.count >= 6)
        let black = [(0, 0, 0)]
        let palette = [(0x00, 0x72, 0xB2), (0xD5, 0x5E, 0x00), (0x00, 0x9E, 0x73), (0x56, 0xB4, 0xE9)]
        for svg in charts {
            let name = svg.attribute("aria-labelledby") ?? "?"
            let area = svg.width * svg.height
            let ground = try #require(
                page.screenshot.background(x: svg.x, y: svg.y, width: svg.width, height: svg.height))
            #expect(ground.r + ground.g + ground.b > 3 * 200, "\(name): drawn on \(ground)")
            let ink = page.screenshot.inkPixels(x: svg.x, y: svg.y, width: svg.width, height: svg.height)
            #expect(ink > area / 100 && ink < area / 2, "\(name): \(ink) of \(area) pixels inked")
            // Text and axes are black; black shapes (an unstyled path's fill) would be far more.
            let dark = Self.pixels(page.screenshot, svg, near: black)
            #expect(dark < area / 12, "\(name): \(dark) of \(area) pixels black")
            #expect(Self.pixels(page.screenshot, svg, near: palette, tolerance: 30) > 50, "\(name): no colour")
        }
    }

    @Test("bidi overrides in a location's name are dropped and the name is isolated in the heading")
    func bidiInHeading() async throws {
        let box = Sandbox()
        defer { box.remove() }
        let name = "Evil\u{202E}gnp.exe\u{2066}x\u{2069}"
        let history = try HistoryBuilder(db: box.db, name: name)
        // A report of a location with nothing stored is an error; one run is enough for a page.
        let start: Int64 = 1_780_000_000 - 1_780_000_000 % 3600
        try history.storeRun(
            issuedAt: start, fetchedAt: start, times: (0..<24).map { start + Int64($0) * 3600 },
            columns: ["temperature_2m": (0..<24).map { 10 + Double($0) / 4 }])
        let result = await box.run("report", "--location", name)
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stdout.contains("<h1><bdi>Evilgnp.exex</bdi>: forecast report</h1>"))
        #expect(result.stdout.contains("<title>Evilgnp.exex: forecast report</title>"))
        for scalar in [
            "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}"
        ] {
            #expect(!result.stdout.contains(scalar))
        }
    }
}
