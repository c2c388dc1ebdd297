import Foundation
import TestSupport
import Testing

@testable import WxCLI

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let fixturesPath = packageRoot.appendingPathComponent("Fixtures").path

/// What one in-process `wxdb` run printed and returned.
struct RunResult {
    var code: Int32
    var stdout: String
    var stderr: [String]
    var stderrText: String { stderr.joined(separator: "\n") }
}

/// A scratch folder with its own database, and a way to run `wxdb` against it in-process.
final class Sandbox {
    let folder: URL
    /// The database commands use (WXDB_DB): `wxdb.sqlite` in the folder, or a new PostgreSQL one.
    private(set) var db: String
    var environment: [String: String]
    var now = Date(timeIntervalSince1970: 1_785_000_000)
    /// How HTTP retries wait; nil for the real `Task.sleep`.
    var sleep: (@Sendable (TimeInterval) async throws -> Void)?

    init() {
        folder = Scratch.folder("cli")
        db = folder.appendingPathComponent("wxdb.sqlite").path
        // Nothing a test runs may reach the real API: unless a test points them at its replay
        // server, the endpoints are a closed port on loopback.
        let nowhere = "http://127.0.0.1:9"
        environment = [
            "HOME": folder.path, "WXDB_DB": folder.appendingPathComponent("wxdb.sqlite").path,
            "WXDB_FORECAST_URL": nowhere + "/v1/forecast", "WXDB_ARCHIVE_URL": nowhere + "/v1/archive",
            "WXDB_GEOCODING_URL": nowhere + "/v1/search", "WXDB_META_URL": nowhere + "/data",
            "WXDB_RETRY_BASE_DELAY": "0.01"
        ]
    }

    /// A sandbox whose commands use a new database of `engine` (through WXDB_DB, as a user's would).
    convenience init(engine: StoreEngine) throws {
        self.init()
        if engine == .postgres {
            db = try engine.freshDatabase("cli")
            environment["WXDB_DB"] = db
        }
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    @discardableResult
    func run(_ arguments: String...) async -> RunResult { await run(arguments) }

    func run(_ arguments: [String]) async -> RunResult {
        let outPath = folder.appendingPathComponent("stdout-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let fd = open(outPath, O_WRONLY | O_TRUNC)
        let fixedNow = now
        let context = Context(
            environment: environment, stdoutFD: fd, stdoutIsTerminal: false, stderrIsTerminal: false, now: { fixedNow })
        context.captureStderr = true
        if let sleep { context.sleep = sleep }
        let code = await WXDB.main(arguments, context: context)
        close(fd)
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        return RunResult(code: code, stdout: stdout, stderr: context.capturedStderr)
    }

    func fixture(_ name: String) -> String { fixturesPath + "/" + name }
}
