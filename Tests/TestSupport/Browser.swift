import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Renders HTML files in headless Chromium for the report tests: the DOM after load (`--dump-dom`), a
/// screenshot (`--screenshot`), what the page wrote to the console, and every network connection the
/// browser tried (all traffic goes through a recording proxy on loopback that answers nothing).
public enum HeadlessChromium {
    /// The browser binary: `WXDB_CHROMIUM` when set, else the first of chromium, chromium-browser,
    /// google-chrome, google-chrome-stable on PATH.
    public static let executable: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let chosen = environment["WXDB_CHROMIUM"], !chosen.isEmpty {
            return FileManager.default.isExecutableFile(atPath: chosen) ? chosen : nil
        }
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            for folder in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
                let path = "\(folder)/\(name)"
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
        }
        return nil
    }()

    /// Why the render tests cannot run here (nil when they can): no browser found, or it cannot
    /// render a one-line page. Probed once per test process.
    public static let unavailableReason: String? = {
        let reason = probe()
        if let reason { FileHandle.standardError.write(Data("browser render tests skipped: \(reason)\n".utf8)) }
        return reason
    }()

    private static func probe() -> String? {
        guard executable != nil else {
            return "no chromium found (apt-get install chromium, or set WXDB_CHROMIUM to the browser binary)"
        }
        let folder = Scratch.folder("chromium-probe")
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("probe.html")
        do {
            try Data("<!doctype html><title>probe</title><p id=probe>ok</p>".utf8).write(to: page)
            let result = try dumpDOM(page)
            return result.dom.contains("id=\"probe\"") ? nil : "chromium started but did not return the page's DOM"
        } catch {
            return "chromium cannot render a page here: \(error)"
        }
    }

    /// The width every render uses; heights vary (a screenshot is as tall as the page).
    public static let width = 1200

    /// What one browser launch saw.
    public struct Launch: Sendable {
        /// The messages the page wrote to the console, uncaught exceptions included. A page with no
        /// script has none.
        public var console: [String]
        /// Every connection the browser opened, as the request line the proxy received
        /// (`CONNECT host:443 HTTP/1.1`, `GET http://host/path HTTP/1.1`).
        public var connections: [String]
        /// `connections` less the browser's own service traffic (component updates, sign-in,
        /// network time), which it sends whatever the page is: what the page asked for.
        public var pageRequests: [String] {
            connections.filter { line in !Self.isBrowserService(line) }
        }
        /// Chromium's standard error, for failure messages.
        public var log: String

        public init(console: [String], connections: [String], log: String) {
            self.console = console
            self.connections = connections
            self.log = log
        }

        /// Hosts Chromium itself contacts on start, page or no page, even with background
        /// networking disabled. The proxy answers nothing, so nothing follows from them.
        static func isBrowserService(_ requestLine: String) -> Bool {
            let parts = requestLine.split(separator: " ")
            guard parts.count >= 2 else { return false }
            var target = String(parts[1])
            if let scheme = target.range(of: "://") { target = String(target[scheme.upperBound...]) }
            let host = String(target.prefix { $0 != ":" && $0 != "/" }).lowercased()
            let services: Set<String> = ["update.googleapis.com", "accounts.google.com", "redirector.gvt1.com"]
            if services.contains(host) || host.hasSuffix(".gvt1.com") { return true }
            // clients1..clients6.google.com: network time and component update pings.
            return host.hasPrefix("clients") && host.hasSuffix(".google.com")
                && host.dropFirst("clients".count).dropLast(".google.com".count).allSatisfy(\.isNumber)
        }
    }

    /// `--dump-dom` of `file`: the serialized DOM after load.
    public static func dumpDOM(_ file: URL, height: Int = 900, width: Int = width) throws -> (
        dom: String, launch: Launch
    ) {
        let (output, launch) = try run(file, mode: ["--dump-dom"], height: height, width: width)
        return (String(decoding: output, as: UTF8.self), launch)
    }

    /// `--screenshot` of `file` in a window `width` x `height` (device scale 1: one pixel per CSS px).
    /// `darkMode` asks for `prefers-color-scheme: dark`.
    public static func screenshot(_ file: URL, height: Int, darkMode: Bool = false) throws -> (
        image: PNGImage, launch: Launch
    ) {
        let folder = Scratch.folder("chromium-shot")
        defer { try? FileManager.default.removeItem(at: folder) }
        let png = folder.appendingPathComponent("shot.png")
        let scheme = darkMode ? ["--blink-settings=preferredColorScheme=0"] : []
        let (_, launch) = try run(file, mode: scheme + ["--screenshot=\(png.path)"], height: height)
        guard let data = FileManager.default.contents(atPath: png.path) else {
            throw BrowserError("chromium wrote no screenshot; its log:\n\(launch.log.suffix(2000))")
        }
        return (try PNGImage(data: data), launch)
    }

    /// The error a launch fails with: the browser did not start, finish in time, or exit 0.
    public struct BrowserError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// How long one launch may take before it is killed: generous, since a loaded machine can
    /// starve a browser start for a minute; a healthy launch takes a second or two.
    static let timeoutSeconds: Double = 300

    /// At most two browsers at once: the suite runs tests in parallel on a small machine.
    private static let launches = DispatchSemaphore(value: 2)

    /// Runs `work` (which waits for browsers) on a thread of its own, not the test's cooperative
    /// pool, which a waiting browser would otherwise hold for seconds.
    public static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    static func run(_ file: URL, mode: [String], height: Int, width: Int = width) throws -> (
        output: Data, launch: Launch
    ) {
        guard let executable else { throw BrowserError("no chromium executable") }
        launches.wait()
        defer { launches.signal() }
        let folder = Scratch.folder("chromium")
        defer { try? FileManager.default.removeItem(at: folder) }
        let proxy = try ConnectionRecorder()
        defer { proxy.stop() }
        var arguments = [
            "--headless", "--disable-gpu", "--user-data-dir=\(folder.appendingPathComponent("profile").path)",
            "--window-size=\(width),\(height)", "--force-device-scale-factor=1", "--hide-scrollbars",
            "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0",
            // Every request, loopback included, goes to the recorder; names resolve to nothing, so
            // only the proxy's own address can be reached at all.
            "--proxy-server=http://127.0.0.1:\(proxy.port)", "--proxy-bypass-list=<-loopback>",
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
            "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter"
        ]
        if geteuid() == 0 { arguments.append("--no-sandbox") }
        arguments += mode + [file.absoluteURL.absoluteString]

        let outPath = folder.appendingPathComponent("stdout"), errPath = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outPath.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath.path, contents: nil)
        let out = try FileHandle(forWritingTo: outPath), err = try FileHandle(forWritingTo: errPath)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw BrowserError("cannot start \(executable): \(error)") }
        // Polled rather than awaited: the deadline is a safety net for a hung browser, not a
        // measurement, so its coarseness does not matter.
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning {
            process.terminate()
            usleep(500_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw BrowserError("chromium did not finish within \(Int(timeoutSeconds)) s rendering \(file.path)")
        }
        process.waitUntilExit()
        // Connections can still be arriving as the browser exits; the recorder reads what came.
        let connections = proxy.stop()
        let log = String(decoding: (try? Data(contentsOf: errPath)) ?? Data(), as: UTF8.self)
        let launch = Launch(console: consoleMessages(in: log), connections: connections, log: log)
        guard process.terminationStatus == 0 else {
            throw BrowserError(
                "chromium exited with status \(process.terminationStatus); its log:\n\(log.suffix(2000))")
        }
        return ((try? Data(contentsOf: outPath)) ?? Data(), launch)
    }

    /// The console lines of Chromium's log (`...:INFO:CONSOLE:12] "message", source: URL (12)`, or
    /// `CONSOLE(12)` in older builds), as `message (source)`.
    public static func consoleMessages(in log: String) -> [String] {
        log.split(separator: "\n").compactMap { line -> String? in
            guard let marker = line.range(of: ":CONSOLE") else { return nil }
            guard let close = line[marker.upperBound...].firstIndex(of: "]") else { return String(line) }
            return line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)
        }
    }
}

/// A TCP listener on 127.0.0.1 that records the first line of every connection and closes it:
/// the browser's proxy, so any request the page makes is seen and none is answered.
final class ConnectionRecorder: @unchecked Sendable {
    let port: Int
    private let socketFD: Int32
    private let lock = NSLock()
    private var lines: [String] = []
    private var pending = 0
    private var stopped = false
    private var accepting = true

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HeadlessChromium.BrowserError("socket(): errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, size) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &size) == 0
            }
        }
        guard bound else {
            close(fd)
            throw HeadlessChromium.BrowserError("cannot listen on 127.0.0.1: errno \(errno)")
        }
        socketFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// Stops accepting (after taking what is queued) and returns the request lines seen so far,
    /// waiting briefly for connections still being read.
    @discardableResult
    func stop() -> [String] {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        if first {
            for _ in 0..<1300 {  // the accept loop polls every 50 ms; readers end at the browser's exit
                lock.lock()
                let busy = pending > 0 || accepting
                lock.unlock()
                if !busy { break }
                usleep(50_000)
            }
        }
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    private func acceptLoop() {
        defer {
            close(socketFD)
            lock.lock()
            accepting = false
            lock.unlock()
        }
        while true {
            var poller = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            if ready > 0 {
                let client = accept(socketFD, nil, nil)
                if client >= 0 {
                    lock.lock()
                    pending += 1
                    lock.unlock()
                    Thread { [self] in read(client) }.start()
                }
                continue  // drain every queued connection before looking at `stopped`
            }
            lock.lock()
            let done = stopped
            lock.unlock()
            if done { return }
        }
    }

    private func read(_ client: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        // Until the request line or the browser closes the connection (it has exited when the
        // recorder stops). A bound of two seconds recorded a starved browser's late request line
        // as "a connection that sent nothing" under load; a minute is only a safety net.
        for _ in 0..<1200 where !received.contains(10) {
            var poller = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) >= 0 else { break }
            if poller.revents == 0 { continue }
            let n = recv(client, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        close(client)
        let line = String(decoding: received.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        lock.lock()
        lines.append(line.isEmpty ? "(a connection that sent nothing)" : line)
        pending -= 1
        lock.unlock()
    }
}

/// A page rendered for the chart checks: its DOM, every top-level `<svg>` with where it was laid out,
/// and a screenshot of the whole page, from two launches.
public struct RenderedPage: Sendable {
    /// One top-level `<svg>` of the page.
    public struct SVG: Sendable {
        /// The element as serialized after load, from `<svg` to its `</svg>`.
        public var markup: String
        /// Its border box in page pixels (x, y from the page's top left), as laid out at
        /// `HeadlessChromium.width`.
        public var x: Int, y: Int, width: Int, height: Int

        /// The value of `name` on the opening tag, if present.
        public func attribute(_ name: String) -> String? {
            let tag = markup.prefix { $0 != ">" }
            guard let start = tag.range(of: " \(name)=\"") else { return nil }
            return String(tag[start.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// The DOM after load (of the measuring copy: the original plus the `data-wxdb-*` attributes).
    public var dom: String
    public var svgs: [SVG]
    /// The page's full height in pixels; the screenshot is this tall (capped at `maxHeight`).
    public var height: Int
    public var screenshot: PNGImage
    /// Both launches: the measuring `--dump-dom` and the screenshot of the original.
    public var launches: [HeadlessChromium.Launch]
    public var console: [String] { launches.flatMap(\.console) }
    public var pageRequests: [String] { launches.flatMap(\.pageRequests) }

    /// The tallest screenshot taken; longer pages are cut (their lower charts then fail the
    /// pixel check, which says so).
    public static let maxHeight = 16_000
}

extension HeadlessChromium {
    /// Renders `file` for the chart checks. A copy of the page with a test-only script (the page
    /// itself has none) writes each `<svg>`'s bounding box and the page size into attributes, read
    /// back with `--dump-dom`; then the ORIGINAL page is screenshot in a window as tall as the page,
    /// at the same width (scrollbars hidden in both, so the layout is the same), and the boxes
    /// locate each chart in the screenshot.
    public static func render(_ file: URL) throws -> RenderedPage {
        let html = try String(contentsOf: file, encoding: .utf8)
        let measuring = Scratch.path("measure", suffix: ".html")
        defer { try? FileManager.default.removeItem(atPath: measuring) }
        let script = """
            <script>addEventListener('load', function () {
              var all = document.querySelectorAll('svg');
              for (var i = 0; i < all.length; i++) {
                var r = all[i].getBoundingClientRect();
                all[i].setAttribute('data-wxdb-rect', [r.left + scrollX, r.top + scrollY, r.width, r.height]
                  .map(Math.round).join(','));
              }
              var d = document.documentElement;
              d.setAttribute('data-wxdb-size', Math.max(d.scrollHeight, document.body.scrollHeight));
            });</script>
            """
        let marked: String
        if let end = html.range(of: "</body>", options: .backwards) {
            marked = html.replacingCharacters(in: end.lowerBound..<end.lowerBound, with: script)
        } else {
            marked = html + script
        }
        try Data(marked.utf8).write(to: URL(fileURLWithPath: measuring))
        let (dom, measure) = try dumpDOM(URL(fileURLWithPath: measuring))
        guard let sizeAttribute = dom.range(of: "data-wxdb-size=\""),
            let height = Int(dom[sizeAttribute.upperBound...].prefix { $0 != "\"" })
        else { throw BrowserError("the measuring script did not run (no data-wxdb-size); console: \(measure.console)") }
        let svgs = topLevelSVGs(in: dom).map { markup -> RenderedPage.SVG in
            var svg = RenderedPage.SVG(markup: markup, x: 0, y: 0, width: 0, height: 0)
            let box = (svg.attribute("data-wxdb-rect") ?? "").split(separator: ",").compactMap { Int($0) }
            if box.count == 4 { (svg.x, svg.y, svg.width, svg.height) = (box[0], box[1], box[2], box[3]) }
            return svg
        }
        let shotHeight = min(max(height, 100), RenderedPage.maxHeight)
        let (image, shot) = try screenshot(file, height: shotHeight)
        return RenderedPage(dom: dom, svgs: svgs, height: height, screenshot: image, launches: [measure, shot])
    }

    /// Each outermost `<svg ...>...</svg>` of `html`, nested ones inside it.
    static func topLevelSVGs(in html: String) -> [String] {
        var found: [String] = []
        var depth = 0
        var start = html.startIndex
        var cursor = html.startIndex
        while true {
            let open = html.range(of: "<svg", range: cursor..<html.endIndex)
            let close = html.range(of: "</svg>", range: cursor..<html.endIndex)
            if let open, close == nil || open.lowerBound < close!.lowerBound {
                if depth == 0 { start = open.lowerBound }
                depth += 1
                cursor = open.upperBound
            } else if let close {
                if depth > 0 {  // a stray </svg> outside any svg is ignored
                    depth -= 1
                    if depth == 0 { found.append(String(html[start..<close.upperBound])) }
                }
                cursor = close.upperBound
            } else {
                return found
            }
        }
    }
}

extension PNGImage {
    /// The most common colour of the rectangle (nil when it lies outside the image).
    public func background(x: Int, y: Int, width: Int, height: Int) -> (r: Int, g: Int, b: Int)? {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(self.width, x + width), y1 = min(self.height, y + height)
        guard x1 > x0, y1 > y0 else { return nil }
        var histogram: [UInt32: Int] = [:]
        for row in y0..<y1 {
            for column in x0..<x1 {
                let i = (row * self.width + column) * 4
                let key = UInt32(rgba[i]) << 16 | UInt32(rgba[i + 1]) << 8 | UInt32(rgba[i + 2])
                histogram[key, default: 0] += 1
            }
        }
        let most = histogram.max { $0.value < $1.value }!.key
        return (Int(most >> 16), Int(most >> 8 & 0xFF), Int(most & 0xFF))
    }

    /// How many pixels of the rectangle differ from its most common colour (the background the
    /// chart is drawn on) by more than `tolerance` in any channel: the ink of a chart.
    public func inkPixels(x: Int, y: Int, width: Int, height: Int, tolerance: Int = 24) -> Int {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(self.width, x + width), y1 = min(self.height, y + height)
        guard let (br, bg, bb) = background(x: x, y: y, width: width, height: height) else { return 0 }
        var ink = 0
        for row in y0..<y1 {
            for column in x0..<x1 {
                let i = (row * self.width + column) * 4
                if abs(Int(rgba[i]) - br) > tolerance || abs(Int(rgba[i + 1]) - bg) > tolerance
                    || abs(Int(rgba[i + 2]) - bb) > tolerance
                {
                    ink += 1
                }
            }
        }
        return ink
    }
}
