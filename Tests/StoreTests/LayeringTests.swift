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
    /// The folders allowed to hold SQL (the C wrapper, the SQLite engine, the readers of other
    /// programs' SQLite files, the PostgreSQL client and engine); nothing else is allow-listed, the
    /// engine-neutral Sources/Store included.
    static let sqlHomes = ["SQLite/", "StoreSQLite/", "StationFiles/", "Postgres/", "PostgresStore/"]

    @Test("no Swift file outside Sources/SQLite, StoreSQLite and StationFiles contains an SQL statement")
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
        #expect(
            found.isEmpty, "SQL outside Sources/SQLite, StoreSQLite and StationFiles:\n\(found.joined(separator: "\n"))"
        )
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

    /// Where code may use SQLite: the C wrapper, the SQLite engine and the readers of other
    /// programs' SQLite files (weewx, Home Assistant). Sources/Store (the interface) is not one.
    static let sqliteHomes = ["SQLite/", "StoreSQLite/", "StationFiles/"]
    /// WxSQLite's public types; a caller that names one depends on the engine.
    static let sqliteTypes =
        #"\b(Database|Statement|StoredRow|SQLValue|SQLBindable|SQLiteError|Migrator|Migration|MigrationError|TransactionKind)\b"#

    /// Whether `path`'s code (comments and string literals aside) imports WxSQLite or names its types.
    static func sqliteUses(_ text: String) -> [String] {
        let types = try! Regex(sqliteTypes).wordBoundaryKind(.simple)
        var found: [String] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var code = Substring(line)
            if let comment = code.firstRange(of: "//") { code = code[..<comment.lowerBound] }
            // String literals say words like "Database"; they are not uses of the type.
            code = Substring(
                code.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
                    .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " "))
            if code.contains(/\bimport\s+(WxSQLite|CSQLite)\b/) || code.contains(types) {
                found.append("\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    @Test("nothing outside the SQLite engine and the foreign-file readers imports WxSQLite or names its types")
    func sqliteStaysInTheEngine() throws {
        let files = try Sources.swiftFiles()
        var found: [String] = []
        #expect(files.contains { $0.path == "Store/StoreProtocol.swift" })
        for (path, text) in files where !Self.sqliteHomes.contains(where: { path.hasPrefix($0) }) {
            found += Self.sqliteUses(text).map { "Sources/\(path):\($0)" }
        }
        #expect(found.isEmpty, "WxSQLite used outside the SQLite engine:\n\(found.joined(separator: "\n"))")
    }

    @Test(
        "the layering scan sees an import and a type, and not a word in a comment or string",
        arguments: [
            ("import WxSQLite", true), ("let db: Database", true), ("try Database(path: p)", true),
            ("catch let e as SQLiteError {", true), ("let v = SQLValue.null", true),
            ("// the Database is closed", false), ("note(\"Database locked\")", false),
            ("let d: DatabaseInspection", false), ("struct DatabaseOptions {", false)
        ])
    func scanSeesUses(line: String, isUse: Bool) {
        #expect(Self.sqliteUses(line).isEmpty == !isUse, "\(line)")
    }
}
