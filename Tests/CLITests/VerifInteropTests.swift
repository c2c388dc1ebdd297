import Foundation
import TestSupport
import Testing

@testable import WxCLI

/// The `verif` tool (PyPI `verif`), when installed (.ci/run installs it).
let verifExecutable: String? = {
    for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let path = String(folder) + "/verif"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}()

@Suite("Interoperability with verif")
struct VerifInteropTests {
    @Test(
        "verif reads the verif export, and its MAE per lead time agrees with wxdb's pairs",
        .enabled(if: verifExecutable != nil, "verif is not installed (pip install verif)"), arguments: StoreEngine.all)
    func verifAgrees(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(box)
        let file = box.folder.appendingPathComponent("testville verif.txt").path
        let exported = await box.run(
            "export", "pairs", "--location", "Testville", "--format", "verif", "--output", file)
        #expect(exported.code == 0, "\(exported.stderrText)")

        // MAE per lead from wxdb's own CSV pairs.
        let pairs = await box.run("export", "pairs", "--location", "Testville")
        var sums: [Double: (n: Int, abs: Double)] = [:]
        for line in pairs.stdout.split(separator: "\r\n").dropFirst() {
            let cells = line.split(separator: ",")
            let lead = Double(cells[4])!, forecast = Double(cells[6])!, observed = Double(cells[7])!
            sums[lead, default: (0, 0)].n += 1
            sums[lead, default: (0, 0)].abs += abs(forecast - observed)
        }
        #expect(sums.count == 384)

        let (status, data) = try Subprocess.run(verifExecutable!, [file, "-m", "mae", "-type", "csv"], in: box.folder)
        #expect(status == 0)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst()
        #expect(lines.count == sums.count)
        for line in lines {
            let cells = line.split(separator: ",")
            let lead = try #require(Double(cells[0])), mae = try #require(Double(cells[1]))
            let ours = try #require(sums[lead])
            let expected = ours.abs / Double(ours.n)
            // verif prints six significant digits.
            #expect(abs(mae - expected) <= 1e-5 * max(1, expected), "lead \(lead): verif \(mae), wxdb \(expected)")
        }
    }
}
