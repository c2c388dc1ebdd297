import Foundation
import Testing
import WxCore

/// `.ci/run` on a machine where another CI run may be going on at the same time.
@Suite("the CI script")
struct CIScriptTests {
    @Test("every file .ci/run writes under TMPDIR is its own (mktemp) and is removed at exit")
    func ownTemporaryFiles() throws {
        let script = try String(contentsOf: packageRoot.appendingPathComponent(".ci/run"), encoding: .utf8)
        let lines = script.split(separator: "\n").filter { !$0.trimmed().hasPrefix("#") }
        // A fixed name there (wxdb-ci-test.log) let a second run's log be read as the first's verdict.
        let temporary = lines.filter { $0.contains("TMPDIR") || $0.contains("/tmp/") }
        #expect(!temporary.isEmpty)
        for line in temporary { #expect(line.contains("mktemp"), "\(line)") }
        #expect(lines.contains { $0.contains("trap") && $0.contains("rm -f") })
    }
}
