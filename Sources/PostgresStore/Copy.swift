// `wxdb copy` on PostgreSQL: the raw rows of every table out (`StoreDump`, streamed in single-row
// mode inside one REPEATABLE READ READ ONLY transaction) and in (`StoreLoad`, by COPY, all in the
// copy's one transaction, so a killed connection leaves nothing). Ids are per location here: rows keep
// their ids, and the per-location counters are set past the largest id loaded. A fetch no location can
// be named for is location 0 here (a NULL location_id in the copy's rows).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine: StoreDump, StoreLoad {
    /// The table's columns and their types on this server (empty when the table does not exist).
    func copyColumns(_ table: CopyTable) throws -> [String: String] {
        var columns: [String: String] = [:]
        try db.rows(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
            [.text(table.name)]
        ) { (name: $0.string(0), type: $0.string(1)) }.forEach { columns[$0.name] = $0.type }
        return columns
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
        try db.transaction {
            // One snapshot for every table and count the copy reads.
            try db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try body()
        }
    }

    public func copyObstacle() throws -> String? { nil }

    public func copyCount(_ table: CopyTable) throws -> Int64 {
        guard try !copyColumns(table).isEmpty else { return 0 }
        let table = Self.checked([table.name])[0]
        return try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0
    }

    public func copyIDsUniqueAcrossLocations() throws -> Bool {
        for table in [CopyTables.forecastRuns, CopyTables.fetchLog, CopyTables.ensembleRuns]
        where try !copyColumns(table).isEmpty {
            let table = Self.checked([table.name])[0]
            if try db.scalarInt("SELECT count(*) - count(DISTINCT id) FROM \(table)") != 0 { return false }
        }
        return true
    }

    public func copyLargestIDs() throws -> [Int64: CopyLargestIDs] {
        var largest: [Int64: CopyLargestIDs] = [:]
        try db.rows("SELECT location_id, max(id) FROM forecast_runs GROUP BY location_id", []) {
            (location: $0.int64(0), id: $0.int64(1))
        }.forEach { largest[$0.location, default: CopyLargestIDs()].run = $0.id }
        try db.rows("SELECT location_id, max(id) FROM fetch_log GROUP BY location_id", []) {
            (location: $0.int64(0), id: $0.int64(1))
        }.forEach { largest[$0.location, default: CopyLargestIDs()].fetch = $0.id }
        if try !copyColumns(CopyTables.ensembleRuns).isEmpty {
            try db.rows("SELECT location_id, max(id) FROM ensemble_runs GROUP BY location_id", []) {
                (location: $0.int64(0), id: $0.int64(1))
            }.forEach { largest[$0.location, default: CopyLargestIDs()].ensembleRun = $0.id }
        }
        return largest
    }

    enum ColumnKind { case integer, real, float4, text, bytes, absent }

    static func kind(_ type: String?) -> ColumnKind {
        switch type {
        case nil: .absent
        case "bigint", "integer", "smallint": .integer
        case "double precision", "numeric": .real
        case "real": .float4
        case "bytea": .bytes
        default: .text
        }
    }

    public func dumpRows(_ table: CopyTable, _ visit: ([CopyValue]) throws -> Void) throws {
        let types = try copyColumns(table)
        let kinds = table.columns.map { Self.kind(types[$0]) }
        // A column this schema lacks (an older wxdb's) is read as NULL: there is nothing in it.
        let columns = Self.checked(table.columns.filter { types[$0] != nil })
        let fetchLocation = table == CopyTables.fetchLog ? table.index(of: "location_id") : nil
        var values = [CopyValue](repeating: .null, count: table.columns.count)
        do {
            let table = Self.checked([table.name])[0]
            try db.stream("SELECT \(columns.joined(separator: ", ")) FROM \(table)") { row in
                var position = 0
                for (index, kind) in kinds.enumerated() {
                    if kind == .absent {
                        values[index] = .null
                        continue
                    }
                    defer { position += 1 }
                    if row.isNull(position) {
                        values[index] = .null
                        continue
                    }
                    switch kind {
                    case .integer:
                        let number = row.int64(position)
                        values[index] = index == fetchLocation && number == 0 ? .null : .integer(number)
                    case .real: values[index] = .real(row.double(position))
                    // float4 prints the shortest text that reads back as the same Float: the API's own
                    // decimal ("18.3"), read as the Double SQLite keeps, not the Float widened (18.2999…).
                    case .float4: values[index] = .real(Double(row.string(position)) ?? .nan)
                    case .bytes: values[index] = .blob(Self.bytes(fromHex: row.string(position)))
                    case .text, .absent: values[index] = .text(row.string(position))
                    }
                }
                try visit(values)
            }
        }
    }

    /// bytea's text output (`\x` and two hex digits a byte) as bytes.
    static func bytes(fromHex text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)
        if utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x") { utf8.removeFirst(2) }
        bytes.reserveCapacity(utf8.count / 2)
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: 0
            }
        }
        var i = 0
        while i + 1 < utf8.count {
            bytes.append(nibble(utf8[i]) << 4 | nibble(utf8[i + 1]))
            i += 2
        }
        return bytes
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Bytes as bytea's hex input (`\x…`).
    static func hex(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        text.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: StoreLoad

    public var copyNeedsGlobalIDs: Bool { false }

    public func copyTargetContents() throws -> String? {
        let locations = try db.scalarInt("SELECT count(*) FROM locations") ?? 0
        let runs = try db.scalarInt("SELECT count(*) FROM forecast_runs") ?? 0
        let observations = try db.scalarInt("SELECT count(*) FROM observations") ?? 0
        let fetches = try db.scalarInt("SELECT count(*) FROM fetch_log") ?? 0
        guard locations + runs + observations + fetches > 0 else { return nil }
        return "\(locations) location(s), \(runs) run(s), \(observations) observation(s), \(fetches) fetch(es)"
    }

    public func copyCannotHold(_ table: CopyTable) throws -> String? {
        let columns = try copyColumns(table)
        if columns.isEmpty { return "its wxdb schema has no \(table.name) table yet (a newer wxdb has it)" }
        let missing = table.columns.filter { columns[$0] == nil }
        if !missing.isEmpty {
            return "its \(table.name) table lacks \(missing.joined(separator: ", ")) (a newer wxdb has them)"
        }
        return nil
    }

    public func withCopyTransaction<T>(_ body: () throws -> T) throws -> T {
        try db.transaction(body)
    }

    public func loadRows(_ table: CopyTable, _ produce: (([CopyValue]) throws -> Void) throws -> Void) throws {
        let fetchLocation = table == CopyTables.fetchLog ? table.index(of: "location_id") : nil
        // Hourly and daily rows go to a staging table first: which of migration 0006's tables a run
        // goes to depends on all of its values, and finishCopy moves them in key order (a copy
        // reads them location by location interleaved; sorted, the index pages fill).
        var into = table.name
        if table == CopyTables.hourlyForecasts || table == CopyTables.dailyForecasts {
            try createStagingTables()
            into = table == CopyTables.hourlyForecasts ? "copy_hourly_forecasts" : "copy_daily_forecasts"
        }
        try db.copy(into: Self.checked([into])[0], columns: Self.checked(table.columns)) { writer in
            try produce { row in
                for (index, value) in row.enumerated() {
                    switch value {
                    case .null: index == fetchLocation ? writer.append(Int64(0)) : writer.appendNull()
                    case .integer(let number): writer.append(number)
                    case .real(let number): writer.append(number)
                    case .text(let text): try writer.append(text)
                    case .blob(let bytes): try writer.append(Self.hex(bytes))
                    }
                }
                try writer.endRow()
            }
        }
    }

    /// The session's staging tables of the hourly and daily rows (dropped at the copy's commit).
    func createStagingTables() throws {
        try db.execute(
            """
            CREATE TEMPORARY TABLE IF NOT EXISTS copy_hourly_forecasts (LIKE hourly_forecasts_f8) ON COMMIT DROP;
            CREATE TEMPORARY TABLE IF NOT EXISTS copy_daily_forecasts (LIKE daily_forecasts_f8) ON COMMIT DROP
            """)
    }

    /// SQL true when every one of `columns` of row `alias` survives float4 exactly (the server's
    /// test of Float4.keeps: the double of float4's shortest text is the value).
    static func float4Exact(_ alias: String, _ columns: [String]) -> String {
        columns.map { name in
            let v = alias + "." + name
            return "(" + v + " IS NULL OR " + v + " = 0 OR (abs(" + v + ") BETWEEN 1e-30 AND 1e30 AND " + v
                + "::real::text::float8 = " + v + "))"
        }.joined(separator: " AND ")
    }

    static let dailyRealNames = Variables.daily.filter { $0.quantity != .instant }.map(\.name)

    /// The staged rows into the float4 tables (runs whose every value survives) and the double
    /// ones (the rest), each in key order.
    static let splitStagedRows: String = {
        let hourly = ["location_id", "run_id", "valid_time"] + Variables.hourlyNames
        let daily = ["location_id", "run_id", "date"] + Variables.dailyNames
        func cast(_ names: [String], _ real: Set<String>) -> String {
            names.map { real.contains($0) ? "s." + $0 + "::real" : "s." + $0 }.joined(separator: ", ")
        }
        let inexact =
            "EXISTS (SELECT 1 FROM copy_inexact_runs i WHERE i.location_id = s.location_id AND i.run_id = s.run_id)"
        var sql =
            "CREATE TEMPORARY TABLE copy_inexact_runs ON COMMIT DROP AS SELECT location_id, run_id FROM copy_hourly_forecasts h WHERE NOT ("
            + float4Exact("h", Variables.hourlyNames)
            + ") UNION SELECT location_id, run_id FROM copy_daily_forecasts d WHERE NOT ("
            + float4Exact("d", dailyRealNames) + ");\n"
        sql +=
            "INSERT INTO hourly_forecasts_f4 (" + hourly.joined(separator: ", ") + ") SELECT "
            + cast(hourly, Set(Variables.hourlyNames)) + " FROM copy_hourly_forecasts s WHERE NOT " + inexact
            + " ORDER BY 1, 2, 3;\n"
        sql +=
            "INSERT INTO hourly_forecasts_f8 (" + hourly.joined(separator: ", ") + ") SELECT " + cast(hourly, [])
            + " FROM copy_hourly_forecasts s WHERE " + inexact + " ORDER BY 1, 2, 3;\n"
        sql +=
            "INSERT INTO daily_forecasts_f4 (" + daily.joined(separator: ", ") + ") SELECT "
            + cast(daily, Set(dailyRealNames)) + " FROM copy_daily_forecasts s WHERE NOT " + inexact
            + " ORDER BY 1, 2, 3;\n"
        sql +=
            "INSERT INTO daily_forecasts_f8 (" + daily.joined(separator: ", ") + ") SELECT " + cast(daily, [])
            + " FROM copy_daily_forecasts s WHERE " + inexact + " ORDER BY 1, 2, 3"
        return sql
    }()

    public func finishCopy(largestIDs: [Int64: CopyLargestIDs]) throws {
        try createStagingTables()
        try db.execute(Self.splitStagedRows)
        let locations = try db.rows("SELECT id FROM locations ORDER BY id", []) { $0.int64(0) }
        guard !locations.isEmpty else { return }
        // Every location's counters start past the largest id it was given. A schema without a counter
        // of ensemble runs of their own has runs and ensemble runs share the run counter.
        let ownEnsembleCounter =
            try db.scalarInt(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'location_counters' AND column_name = 'next_ensemble_run_id'"
            ) == 1
        let columns =
            ["location_id", "next_run_id", "next_fetch_id"] + (ownEnsembleCounter ? ["next_ensemble_run_id"] : [])
        try db.copy(into: "location_counters", columns: columns) { writer in
            for location in locations {
                let ids = largestIDs[location] ?? CopyLargestIDs()
                writer.append(location)
                writer.append((ownEnsembleCounter ? ids.run : max(ids.run, ids.ensembleRun)) + 1)
                writer.append(ids.fetch + 1)
                if ownEnsembleCounter { writer.append(ids.ensembleRun + 1) }
                try writer.endRow()
            }
        }
    }
}
