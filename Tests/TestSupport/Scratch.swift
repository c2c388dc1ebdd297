import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where tests put the files they create: one folder per test process under the system's
/// temporary directory, removed when the process exits. Tests may also remove their own
/// folders earlier; whatever they forget (or leave behind on a failed expectation) goes here.
public enum Scratch {
    /// The per-process folder. Created on first use, removed at exit.
    public static let root: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("wxdb-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { Scratch.removeRoot() }
        return url
    }()

    /// A new, empty folder below `root`, named `<prefix>-<uuid>`.
    public static func folder(_ prefix: String) -> URL {
        let url = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A path below `root` that does not exist yet (its folder does), for a file a test creates.
    public static func path(_ prefix: String, suffix: String = "") -> String {
        root.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)").path
    }

    private static func removeRoot() {
        // Tests make some folders read-only; give write access back so removal cannot fail on them.
        if let walker = FileManager.default.enumerator(atPath: root.path) {
            for case let relative as String in walker {
                chmod(root.appendingPathComponent(relative).path, 0o700)
            }
        }
        try? FileManager.default.removeItem(at: root)
    }
}
