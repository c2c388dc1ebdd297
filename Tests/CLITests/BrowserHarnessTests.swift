import Foundation
import TestSupport
import Testing

/// The PNG decoder the render tests count pixels with, against PNGs written by Python's zlib (one
/// per deflate block type, every row filter 0-4 in turn, RGB and RGBA, IDAT split in two).
@Suite("PNG decoder")
struct PNGDecoderTests {
    /// The picture every vector holds (the generator's formula): colour `c` of pixel (x, y).
    static func expected(_ x: Int, _ y: Int, _ c: Int) -> UInt8 {
        UInt8(((x / 3) * 50 + (y / 2) * 30 + c * 80 + (x * y & 4)) & 0xFF)
    }

    /// One PNG file: the deflate block type of its first block, its size and channels, base64.
    struct Vector: CustomTestStringConvertible, Sendable {
        var block: Int, width: Int, height: Int, channels: Int, base64: String
        init(_ block: Int, _ width: Int, _ height: Int, _ channels: Int, _ base64: String) {
            (self.block, self.width, self.height, self.channels, self.base64) = (block, width, height, channels, base64)
        }
        var testDescription: String { "block type \(block), \(width)x\(height), \(channels) channels" }
    }

    static let vectors: [Vector] = [
        Vector(
            0, 16, 8, 3,
            "iVBORw0KGgoAAAANSUhEUgAAABAAAAAICAIAAAB/FOjAAAAAyUlEQVR4AQGIAXf+AABQoABQoABQoDKC0jKC0jKC0mS0BGS0BGS0BJbmNpbmNpbmNsgYaMgYaMgYaPpKmgEAUKAAAAAAAAAyMjIEBAQAAAAyMjIAAAD8/PwyMjIAAAAAAAA2NjYAAAAAAAAyMjICHh4eHh4eIiIiIiIiGhoaGhoaHh4eHh4eHh4eHh4eIiIiIiIiGhoaGhoaHh4eHh4eAw83XwAAAAICAhUVFQQEBAICAhUVlQICAv7+/hmZGQICAvz8/B0dHQICAvz8/JvXp/lBAAAAyklEQVQbGwQeHh4EBAT8/PwiIiL8/PwEBAQeHi4EBAT8/PwiIiL8/PwEBAQaGhoEBAT8/Pw2Hh4APIzcQJDgPIzccsIScsISbr4OpPREoPBAoPBA1iZ20iJy1iZ2CFioBFSkCFioNobWAVqq+gQEBAAAAC4uLgAAAAQEBDIyMvz8/AAAADY2NgAAAPz8/DIyMgQEBAAAAC4uLgIAAAAAAAAAAAAEBAQEBAT8/Pz8/PwAAAAAAAAAAAAAAAAEBAQEBAT8/Pz8/PwAAACdU24aBO3+rQAAAABJRU5ErkJggg=="
        ),
        Vector(
            1, 16, 8, 4,
            "iVBORw0KGgoAAAANSUhEUgAAABAAAAAICAYAAADwdn+XAAAAdklEQVR4AWNgCFjwAYaNmi4pwXDKFpYQGJ72zKwNhk9IZOyA4V9es14xgjVDgREQsAABjA2i/wABjA0CZkCArJ5JDgqUoEAKCuTQAC55Zn7zeHaQaUxAIAoEIBdA2FNFQfQ/IJCcKSkJYoNcIwsEMPZsaenZLCBTQJpAJvbbRwAAAHZJREFUAiAbQDSILyenh1UcZDtM3Ayol8Gm546Ow4QHBiC66JBQEgjn7eOLW/LFZcqCDw4TQPiaWtmxS0pFh0A0R8SKHywhS76AaLO2a2qMUat+ecECTg8IQDSIDwogkC3IAQcLUGT1TAxIgAUK/kABAxrAJg8APuCVdo2DI6QAAAAASUVORK5CYII="
        ),
        Vector(
            2, 32, 16, 3,
            "iVBORw0KGgoAAAANSUhEUgAAACAAAAAQCAIAAAD4YuoOAAABNklEQVR42qVTMWgUQRTdmxskhetCYD331h0kxXIEWcIRVgkiKVKIgohYhCAKQUKKIBIhhaSQIBZiNEVOYg5DkBSHiIWIWIhFiiCSIgRJISIpRMRCLFKEsCy+nXc3OZbYeJ/H5++bP/8P+/+zrEvLRHVmk7jxRhJPfsTEx2PjxN75ReLk9Dpx7VVKzG33Eavdo8TO0DxQyKprq1arUkoG8EmSMIDFcWxywJsc5JucKIoOrCOUth5tZW2qzTrni86p61kfIVzXRWcd1ODTNPWeegjw5CAIGNR9Hzzyfd/HJ/J9v44Ap6VSKaszs1+n5rrwEk3wjSR05h2lohyD55CJlcoxSsWtW7pOef9WpBnrzMOvg3Pb8JOr3cDND0dWdoaW/wwCW+HUZs8kfNdwQ15ZgY/vbwEDD76Mv+uaorvA6wAAATdJREFUeH8YWPw1sPT7LPz68YmNE7fgxeXnQHpxqf/e5767G4WRF3ucCafEuXGSnC2n/d85wmqZ1JZos9qsQ7544XbdtmeBMAxt23Ycp9KoONrAzOozBGQqFRw9Nskwk4wjk9yso5Nlrrnx7e8iwyDHm6N/1bGoVU6JcsV8AMoVUwKo1dHXYv57P+W6dnQMoFx3zy0A4dQa0Hvn09WXyXBjF3j0LQIKqM5uGI6ZEl/KuWXb2ZokAjNb7iInyesH1hGUH/aaPifLzvniiOilbiFOyvVZEPCZvtYtSMoVz3FrLuUK3QptNa1bnHqe16pTN/rPblGBuIa2zf3VckWMI/6Zcrm542SkkpQrYgTMaavT/FeKdahVypWKpVwBahWgVrkIVCzlCnALAKzA2NtDwMLP0wDWgYvwFy4lrM09LvbGAAAAAElFTkSuQmCC"
        ),
        Vector(
            2, 32, 16, 4,
            "iVBORw0KGgoAAAANSUhEUgAAACAAAAAQCAYAAAB3AH1ZAAABVUlEQVR42rVUUUhTYRS+u7uUD61BMGt37iIjxhgyZMgKiRDqQSwkhoSIGEiIDxJh0ENEiIiElPmgYQ5FQkIiepAQHyTCB4nwQSR8iIgeJMQHkfBBZIzOd/d/69+42Ev74OOcnf+cc/87vvsZxq35AzI9vBUj736wOsiXvzKj5OcL/SvkcdvMHtnweKOO7HlfaCcnfjYOkWvnepfIw+uTO6DPfbhCWmAJmCPmBcyBjEDvx7nej3m9PyU4ab/pKMQUbAWnAtU69wcv3Tnt3kQQEuCGxXwqhFgQhF+Fw8jxtlEB81wkksM55iMC1DAvZTdH33mBu3+4fP+UPADRwi1QxABuyCWOk/Ks4/asZ2TWq+44GefvHrXfLt+TUnXjyrPvDS2iEMRBUQd47+PZngVRyPxBywS4HX+4vhUbXEOs6Vw8sjoWDhEzo9txsHnsW7J/paZzYPVMNziz15sli3gAAAFWSURBVDw2t391HHGjbmB1s/7+J0Qz+/o3WGif228a+XqxcWiz3tf19riNwqBgKCQKjMKjIP9nv2losBTyCkYFqnHuv/Egdy0QeB4A4wJJAkFBYjGRCCqgXuwIoOcN64kEel4E9VlAn0WPPlvar2Ytr1vqsfJNWGfuda73/Gu/QYejYOhyEApIl4NgQDpc75KZndxpGqHLrdf2LYN0uaPW6V1QdFsLJh99sbvf5W+KdlvB8R+pJ6APD+eNIBJdMHxDCsn99DSBIdeFx0+MAuPOk/abdCl8x4xeLlatc3+XmczS8eBmdLnZaHSWb4c6znFGl8PtxSxDdDk4nqkAl+M/Fg4XXbS4PxfRHdXdQ6fCItyu9J0ql8Nv9PBvt+20zX7WLdlAl8Nv5Owv358q7Xe4nw5Hl6PT0eVAOhxIh6No6XR0OZCCBSHWvuVTt8Hp3ctPQYiXov0DLABAScfMrvsAAAAASUVORK5CYII="
        )
    ]

    @Test("decodes stored, fixed-Huffman and dynamic-Huffman streams with filters 0-4", arguments: vectors)
    func decodes(_ vector: Vector) throws {
        let data = try #require(Data(base64Encoded: vector.base64))
        // The vector really uses the block type it stands for: the first block's BTYPE bits.
        let bytes = [UInt8](data)
        let idat = try #require(
            (0..<bytes.count - 4).first { String(decoding: bytes[$0..<$0 + 4], as: UTF8.self) == "IDAT" })
        #expect(Int(bytes[idat + 4 + 2] >> 1 & 3) == vector.block)

        let image = try PNGImage(data: data)
        #expect(image.width == vector.width && image.height == vector.height)
        var wrong = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.pixel(x, y)
                let alpha = vector.channels == 4 ? Self.expected(x, y, 3) : 255
                if (p.r, p.g, p.b, p.a) != (
                    Self.expected(x, y, 0), Self.expected(x, y, 1), Self.expected(x, y, 2), alpha
                ) {
                    wrong += 1
                }
            }
        }
        #expect(wrong == 0, "\(wrong) of \(image.width * image.height) pixels differ")
    }

    @Test("refuses a truncated stream and a file that is not a PNG")
    func refusesDamage() throws {
        let data = try #require(Data(base64Encoded: Self.vectors[3].base64))
        // Cut inside the second IDAT chunk: the chunk runs past the end.
        #expect(throws: PNGImage.DecodeError.self) { try PNGImage(data: data.prefix(data.count - 40)) }
        #expect(throws: PNGImage.DecodeError.self) { try PNGImage(data: Data("GIF89a".utf8)) }
        // A deflate stream cut short.
        #expect(throws: PNGImage.DecodeError.self) { try Inflate.inflate([0x05]) }
    }
}

/// Pages for the harness's own tests: what the report tests rely on it to catch, it catches.
enum HarnessPages {
    /// Two charts with axes, a legend and lines, the second far below the first window height,
    /// and a solid block whose colour the tests look for where the DOM says it is.
    static let good = """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Charts</title>
        <style>body { margin: 0; background: #fff; font-family: sans-serif; } main { max-width: 900px; margin: 0 auto; }
        .spacer { height: 1400px; }</style></head><body><main>
        <h1>Two charts</h1>
        <svg role="img" width="600" height="300" viewBox="0 0 600 300" id="first"><title>MAE by lead</title>
        <g class="axis"><line x1="40" y1="260" x2="580" y2="260" stroke="#000"/><line x1="40" y1="20" x2="40" y2="260" stroke="#000"/>
        <text x="300" y="290">lead (h)</text></g>
        <g class="legend"><rect x="460" y="20" width="12" height="12" fill="#0072b2"/><text x="478" y="31">icon</text></g>
        <polyline fill="none" stroke="#0072b2" stroke-width="3" points="40,250 200,200 400,120 580,40"/>
        <rect x="100" y="60" width="80" height="80" fill="#d55e00"/></svg>
        <div class="spacer"></div>
        <svg role="img" width="600" height="300" viewBox="0 0 600 300" id="second"><title>Bias by lead</title>
        <g class="axis"><line x1="40" y1="260" x2="580" y2="260" stroke="#000"/></g>
        <g class="legend"><text x="478" y="31">gfs</text></g>
        <polyline fill="none" stroke="#009e73" stroke-width="3" points="40,150 300,170 580,130"/></svg>
        </main></body></html>
        """
    /// A chart that draws nothing: the pixel count must see it blank.
    static let blankChart = """
        <!doctype html><html><head><meta charset="utf-8"><title>Blank</title></head><body style="margin:0">
        <svg role="img" width="600" height="300"><title>Nothing drawn</title></svg></body></html>
        """
    /// A script error and a console.error: both must be caught.
    static let consoleErrors = """
        <!doctype html><html><head><meta charset="utf-8"><title>Errors</title></head><body><p>text</p>
        <script>console.error("deliberate console error"); notDefinedAnywhere();</script></body></html>
        """
    /// A stylesheet, a web font and an image from elsewhere (one on loopback): all must be seen.
    static let external = """
        <!doctype html><html><head><meta charset="utf-8"><title>External</title>
        <link rel="stylesheet" href="https://fonts.example.org/css?family=Serif">
        <style>@font-face { font-family: Far; src: url(https://cdn.example.net/far.woff2); }
        body { font-family: Far, serif; }</style></head>
        <body><p>text</p><img src="http://images.example.com/logo.png" alt="">
        <img src="http://127.0.0.1:8080/local.png" alt=""></body></html>
        """

    static func write(_ html: String) throws -> URL {
        let url = URL(fileURLWithPath: Scratch.path("page", suffix: ".html"))
        try Data(html.utf8).write(to: url)
        return url
    }
}

/// The headless-Chromium harness itself. Skipped, with the reason on stderr, where no chromium can
/// render (`.ci/run` installs Debian's chromium).
@Suite(
    "Headless Chromium harness",
    .enabled(if: HeadlessChromium.unavailableReason == nil, "chromium cannot render here (the reason is on stderr)"))
struct BrowserHarnessTests {
    @Test("a clean page: its charts are found where they are drawn, no console message, no request")
    func cleanPage() async throws {
        let file = try HarnessPages.write(HarnessPages.good)
        defer { try? FileManager.default.removeItem(at: file) }
        let page = try await HeadlessChromium.offPool { try HeadlessChromium.render(file) }
        #expect(page.console.isEmpty, "\(page.console)")
        #expect(page.pageRequests.isEmpty, "\(page.pageRequests)")
        #expect(page.svgs.count == 2)
        #expect(page.height > 1700, "the page is \(page.height) px tall")
        #expect(page.screenshot.height == page.height && page.screenshot.width == HeadlessChromium.width)
        for svg in page.svgs {
            #expect(svg.width == 600 && svg.height == 300, "\(svg.x),\(svg.y) \(svg.width)x\(svg.height)")
            let ink = page.screenshot.inkPixels(x: svg.x, y: svg.y, width: svg.width, height: svg.height)
            #expect(ink > 1000, "\(svg.attribute("id") ?? "?"): \(ink) pixels of ink")
        }
        // The orange block (100,60)-(180,140) of the first chart is where the DOM put the chart,
        // so the DOM's boxes and the screenshot agree; the second chart is drawn below 1400 px.
        let first = try #require(page.svgs.first)
        let centre = page.screenshot.pixel(first.x + 140, first.y + 100)
        #expect((centre.r, centre.g, centre.b) == (0xd5, 0x5e, 0x00))
        let corner = page.screenshot.pixel(first.x + 95, first.y + 100)
        #expect((corner.r, corner.g, corner.b) == (255, 255, 255))
        #expect(page.svgs[1].y > 1400)
    }

    @Test("a chart that draws nothing has no ink")
    func blankChart() async throws {
        let file = try HarnessPages.write(HarnessPages.blankChart)
        defer { try? FileManager.default.removeItem(at: file) }
        let page = try await HeadlessChromium.offPool { try HeadlessChromium.render(file) }
        let svg = try #require(page.svgs.first)
        #expect(svg.width == 600 && svg.height == 300)
        #expect(page.screenshot.inkPixels(x: svg.x, y: svg.y, width: svg.width, height: svg.height) == 0)
    }

    @Test("console errors and uncaught exceptions are caught")
    func consoleErrors() async throws {
        let file = try HarnessPages.write(HarnessPages.consoleErrors)
        defer { try? FileManager.default.removeItem(at: file) }
        let (_, launch) = try await HeadlessChromium.offPool { try HeadlessChromium.dumpDOM(file) }
        #expect(launch.console.contains { $0.contains("deliberate console error") }, "\(launch.console)")
        #expect(launch.console.contains { $0.contains("notDefinedAnywhere") }, "\(launch.console)")
    }

    @Test("requests for a stylesheet, a font and images are seen, loopback included")
    func networkRequests() async throws {
        let file = try HarnessPages.write(HarnessPages.external)
        defer { try? FileManager.default.removeItem(at: file) }
        let (_, launch) = try await HeadlessChromium.offPool { try HeadlessChromium.dumpDOM(file) }
        let seen = launch.pageRequests.joined(separator: "\n")
        for host in ["fonts.example.org", "images.example.com", "127.0.0.1:8080"] {
            #expect(seen.contains(host), "\(host) not among \(launch.connections)")
        }
    }
}

/// The harness's reading of what Chromium reports, without a browser.
@Suite("Headless Chromium harness, parsing")
struct BrowserHarnessParsingTests {
    @Test("the browser's own service traffic is told apart from the page's requests")
    func browserServices() {
        let launch = HeadlessChromium.Launch(
            console: [],
            connections: [
                "CONNECT update.googleapis.com:443 HTTP/1.1", "GET http://clients2.google.com/time/1/current HTTP/1.1",
                "CONNECT accounts.google.com:443 HTTP/1.1", "CONNECT fonts.googleapis.com:443 HTTP/1.1",
                "GET http://clients.example.google.com/x HTTP/1.1"
            ], log: "")
        #expect(
            launch.pageRequests == [
                "CONNECT fonts.googleapis.com:443 HTTP/1.1", "GET http://clients.example.google.com/x HTTP/1.1"
            ])
    }

    @Test("console lines are read from Chromium's log, in the current and the older format")
    func consoleLines() {
        let log = """
            [12777:12807:1130/151213.371651:ERROR:dbus/bus.cc:405] Failed to connect to the bus
            [12777:12777:1130/151214.157917:INFO:CONSOLE:1] "boom here", source: file:///tmp/bad.html (1)
            [1:1:0101/000000.000000:INFO:CONSOLE(7)] "Uncaught ReferenceError: x is not defined", source: file:///a.html (7)
            """
        #expect(
            HeadlessChromium.consoleMessages(in: log) == [
                "\"boom here\", source: file:///tmp/bad.html (1)",
                "\"Uncaught ReferenceError: x is not defined\", source: file:///a.html (7)"
            ])
    }
}
