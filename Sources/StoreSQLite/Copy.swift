// `wxdb copy` on SQLite: the raw rows of every table out (`StoreDump`) and in (`StoreLoad`), ids kept.
// SQLite's forecast and ensemble rows carry no location_id: they are read with their run's, and written
// without it. A fetch with no location is a NULL location_id here (0 on PostgreSQL).
import WxSQLite
import WxStore

extension SQLiteStore: StoreDump, StoreLoad {
    /// The tables whose rows carry no location_id of their own: read joined to their run (a constant
    /// FROM clause each; the row's columns are `t.<column>`).
    static let rowsByRun: [String: String] = [
        CopyTables.hourlyForecasts.name: "hourly_forecasts t JOIN forecast_runs r ON r.id = t.run_id ORDER BY t.run_id",
        CopyTables.dailyForecasts.name: "daily_forecasts t JOIN forecast_runs r ON r.id = t.run_id ORDER BY t.run_id",
        CopyTables.ensembleValues.name: "ensemble_values t JOIN ensemble_runs r ON r.id = t.run_id ORDER BY t.run_id"
    ]

    /// The table's SQLite columns (without a location_id the rows do not have).
    static func storedColumns(_ table: CopyTable) -> [String] {
        rowsByRun[table.name] == nil ? table.columns : table.columns.filter { $0 != "location_id" }
    }

    static func checked(_ names: [String]) -> [String] {
        precondition(
            names.allSatisfy {
                $0.utf8.allSatisfy { (0x61...0x7A).contains($0) || $0 == 0x5F || (0x30...0x39).contains($0) }
            },
            "copy SQL takes identifiers from CopyTables only")
        return names
    }

    // MARK: StoreDump

    public func withCopySnapshot<T>(_ body: () throws -> T) throws -> T {
        // A read transaction: WAL gives it one snapshot from its first read to its end.
        if db.isInTransaction { return try body() }
        return try db.transaction(.deferred, body)
    }

    public func copyObstacle() throws -> String? {
        let left =
            try (db.scalarInt("SELECT count(*) FROM migration_0012_pending") ?? 0)
            + (db.scalarInt("SELECT count(*) FROM migration_0013_pending") ?? 0)
            + (db.scalarInt("SELECT count(*) FROM verification_summaries_unpinned") ?? 0)
            + (db.scalarInt("SELECT count(*) FROM ensemble_sums_pending") ?? 0)
        guard left > 0 else { return nil }
        return
            "a migration's follow-up work is unfinished (\(left) row(s) left); run any wxdb command that writes (such as 'wxdb locations list' as the file's owner) on it once, then copy again"
    }

    public func copyCount(_ table: CopyTable) throws -> Int64 {
        let table = Self.checked([table.name])[0]
        return try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0
    }

    public func copyIDsUniqueAcrossLocations() throws -> Bool { true }

    public func copyLargestIDs() throws -> [Int64: CopyLargestIDs] {
        var largest: [Int64: CopyLargestIDs] = [:]
        try db.rows("SELECT location_id, max(id) FROM forecast_runs GROUP BY location_id", []) {
            (location: $0.int64(0), id: $0.int64(1))
        }.forEach { largest[$0.location, default: CopyLargestIDs()].run = $0.id }
        try db.rows("SELECT coalesce(location_id, 0), max(id) FROM fetch_log GROUP BY location_id", []) {
            (location: $0.int64(0), id: $0.int64(1))
        }.forEach { largest[$0.location, default: CopyLargestIDs()].fetch = $0.id }
        try db.rows("SELECT location_id, max(id) FROM ensemble_runs GROUP BY location_id", []) {
            (location: $0.int64(0), id: $0.int64(1))
        }.forEach { largest[$0.location, default: CopyLargestIDs()].ensembleRun = $0.id }
        return largest
    }

    public func dumpRows(_ table: CopyTable, _ visit: ([CopyValue]) throws -> Void) throws {
        let sql: String
        if let from = Self.rowsByRun[table.name] {
            let columns = ["r.location_id"] + Self.checked(Self.storedColumns(table)).map { "t." + $0 }
            let table = from
            sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table)"
        } else {
            let columns = Self.checked(table.columns)
            let table = Self.checked([table.name])[0]
            sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table)"
        }
        let statement = try db.makeStatement(sql)
        var values = [CopyValue](repeating: .null, count: table.columns.count)
        while let row = try statement.step() {
            for index in values.indices {
                switch row.value(index) {
                case .null: values[index] = .null
                case .integer(let value): values[index] = .integer(value)
                case .real(let value): values[index] = .real(value)
                case .text(let value): values[index] = .text(value)
                case .blob(let value): values[index] = .blob(value)
                }
            }
            try visit(values)
        }
    }

    // MARK: StoreLoad

    public var copyNeedsGlobalIDs: Bool { true }

    public func copyTargetContents() throws -> String? {
        let locations = try db.scalarInt("SELECT count(*) FROM locations") ?? 0
        let runs = try db.scalarInt("SELECT count(*) FROM forecast_runs") ?? 0
        let observations = try db.scalarInt("SELECT count(*) FROM observations") ?? 0
        let fetches = try db.scalarInt("SELECT count(*) FROM fetch_log") ?? 0
        guard locations + runs + observations + fetches > 0 else { return nil }
        return "\(locations) location(s), \(runs) run(s), \(observations) observation(s), \(fetches) fetch(es)"
    }

    public func copyCannotHold(_ table: CopyTable) throws -> String? { nil }

    public func withCopyTransaction<T>(_ body: () throws -> T) throws -> T {
        try db.transaction(.immediate, body)
    }

    public func loadRows(_ table: CopyTable, _ produce: (([CopyValue]) throws -> Void) throws -> Void) throws {
        let stored = Self.checked(Self.storedColumns(table))
        let skip = Self.rowsByRun[table.name] == nil ? nil : table.index(of: "location_id")
        let fetchLocation = table == CopyTables.fetchLog ? table.index(of: "location_id") : nil
        let columns = stored
        let name = Self.checked([table.name])[0]
        // Placeholders only, one per column.
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let statement = try db.makeStatement(
            "INSERT INTO " + name + " (\(columns.joined(separator: ", "))) VALUES (" + marks + ")")
        try produce { row in
            statement.reset()
            var position: Int32 = 1
            for (index, value) in row.enumerated() where index != skip {
                let bound: SQLValue
                switch value {
                case .null: bound = .null
                case .integer(let number): bound = index == fetchLocation && number == 0 ? .null : .integer(number)
                case .real(let number): bound = .real(number)
                case .text(let text): bound = .text(text)
                case .blob(let bytes): bound = .blob(bytes)
                }
                try statement.bind(bound, at: position)
                position += 1
            }
            try statement.runToCompletion()
        }
    }

    public func finishCopy(largestIDs: [Int64: CopyLargestIDs]) throws {}
}
