import Foundation
import Testing
import WxCore
import WxReplay
import WxSQLite

@testable import WxCLI

/// Issue #26 item 7: text from outside (a station file, a server) reaches the terminal and the
/// fetch log with its control characters escaped.
@Suite("Terminal escapes from outside text", .serialized)
struct TerminalEscapeTests {
    static let hostile = "x\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m\u{202E}gnp.exe"

    @Test("escapingControls: C0, DEL, C1 and bidi overrides escaped, the rest kept")
    func escaping() {
        #expect(Self.hostile.escapingControls() == "x\\x1B]0;owned\\x07\\x1B[2J\\x9B31m\\u{202E}gnp.exe")
        #expect("a\nb\tc\u{7F}".escapingControls() == "a\\x0Ab\\x09c\\x7F")
        #expect("a\nb\tc".escapingControls(keepingLines: true) == "a\nb\tc")
        #expect("Zürich °C ☂".escapingControls() == "Zürich °C ☂")
    }

    @Test("--list shows a statistic id and unit with escapes in every format", arguments: ["table", "csv", "json"])
    func listEscaped(_ format: String) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        try HomeAssistantFixture.write(
            path, start: stationStart,
            statistics: [.init(id: "sensor." + Self.hostile, unit: "\u{1B}[31m°C", mean: true, rows: [0: 10])])
        let result = await box.run("observe", "import-home-assistant", path, "--list", "--format", format)
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(!result.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x202E })
        #expect(result.stdout.contains("x\\\\x1B]0;owned") || result.stdout.contains("x\\x1B]0;owned"))
    }

    @Test("a unit with escapes is escaped in the import's error message")
    func importMessageEscaped() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        try HomeAssistantFixture.write(
            path, start: stationStart,
            statistics: [.init(id: "sensor.t", unit: "\u{1B}[8m", mean: true, rows: [0: 10])])
        let result = await box.run(
            "observe", "import-home-assistant", path, "--location", "Garden", "--sensor", "temperature_2m=sensor.t")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("'\\x1B[8m'"), "\(result.stderrText)")
        #expect(!result.stderrText.contains("\u{1B}"))
    }

    @Test("a server's 400 reason with escapes is escaped on stderr and in fetch_log.error")
    func serverReasonEscaped() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20", "--timezone", "UTC")
        replay.server.enqueue(.status(400, reason: "Bad " + Self.hostile))
        let ingest = await replay.run("ingest")
        #expect(ingest.code == 1)
        #expect(ingest.stderrText.contains("Bad x\\x1B]0;owned\\x07"), "\(ingest.stderrText)")
        #expect(!ingest.stderrText.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        let logged = try replay.text("SELECT error FROM fetch_log WHERE error IS NOT NULL")
        #expect(!logged.isEmpty)
        #expect(logged.allSatisfy { !$0.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 } }, "\(logged)")
        #expect(logged.contains { $0.contains("\\x1B]0;owned") }, "\(logged)")
    }
}
