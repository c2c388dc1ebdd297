import Foundation
import Testing

/// The repository's own sources, read as text.
private enum Sources {
    static let root = packageRoot

    /// Every Swift file under Sources/, as (path relative to Sources/, text).
    static func swiftFiles() throws -> [(path: String, text: String)] {
        let folder = root.appendingPathComponent("Sources")
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder.path))
        var files: [(String, String)] = []
        for case let path as String in enumerator where path.hasSuffix(".swift") {
            files.append((path, try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }
}

@Suite("Layering: SQL lives in the store, Package.swift tells the truth")
struct LayeringTests {
    /// The folders allowed to hold SQL; nothing else is allow-listed.
    static let sqlHomes = ["SQLite/", "Store/", "Postgres/", "PostgresStore/"]

    @Test("no Swift file outside Sources/SQLite and Sources/Store contains an SQL statement")
    func sqlStaysInTheStore() throws {
        let statement = try Regex(#"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA)\b"#)
        let files = try Sources.swiftFiles()
        #expect(files.count > 20)
        var found: [String] = []
        for (path, text) in files where !Self.sqlHomes.contains(where: { path.hasPrefix($0) }) {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(statement) {
                found.append("Sources/\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "SQL outside Sources/SQLite and Sources/Store:\n\(found.joined(separator: "\n"))")
    }

    @Test("every wxdb module a target imports is in its dependency list in Package.swift")
    func importsAreDeclared() throws {
        let manifest = try String(contentsOf: Sources.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        // `.target(name: "X", dependencies: [...], path: "Sources/Y")`, over one or several lines.
        let target = try Regex(
            #"\.(?:target|executableTarget)\(\s*name:\s*"([^"]+)",\s*(?:dependencies:\s*\[([^\]]*)\],\s*)?path:\s*"Sources/([^"]+)""#
        )
        var declared: [String: (name: String, dependencies: Set<String>)] = [:]
        for match in manifest.matches(of: target) {
            let name = String(match.output[1].substring ?? "")
            let dependencies = (match.output[2].substring ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \n\"")) }.filter { !$0.isEmpty }
            declared[String(match.output[3].substring ?? "")] = (name, Set(dependencies))
        }
        #expect(declared["Store"]?.name == "WxStore", "the manifest parse found \(declared.keys.sorted())")
        let modules = Set(declared.values.map(\.name)).union(["CSQLite"])
        let importLine = try Regex(#"^(?:@testable\s+)?import\s+(\w+)"#).anchorsMatchLineEndings()
        var undeclared: [String] = []
        for (path, text) in try Sources.swiftFiles() {
            let folder = String(path.prefix { $0 != "/" })
            guard let owner = declared[folder] else { continue }
            for match in text.matches(of: importLine) {
                let module = String(match.output[1].substring ?? "")
                if modules.contains(module), module != owner.name, !owner.dependencies.contains(module) {
                    undeclared.append("Sources/\(path) imports \(module), which \(owner.name) does not declare")
                }
            }
        }
        #expect(undeclared.isEmpty, "\(undeclared.joined(separator: "\n"))")
    }
}
