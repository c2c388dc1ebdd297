import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A report described once: columns (name, unit, kind) and rows of cells, rendered as a table for
/// people, RFC 4180 CSV or one JSON document. A new output format is one more `render` case here.
struct Report {
    /// How a column's values look; the kind decides table text and alignment, CSV and JSON cells.
    enum Kind {
        case text
        case integer
        /// A measurement: tables round to `places` decimals, CSV and JSON keep every digit up to the
        /// 15th significant one (`NumberText.tidy`: computed values carry only noise beyond it).
        case number(places: Int)
        /// Like `number`, with a `+` on positive values in tables (biases, changes).
        case signed(places: Int)
        /// A UTC instant: local time in tables, ISO 8601 UTC in CSV and JSON.
        case time
        /// A value of `variable`: tables add the weather code's label or the compass point.
        case value(Variable)
    }

    struct Column {
        /// The CSV header and JSON key (snake_case).
        var name: String
        /// The JSON key, when it is not `name`.
        var jsonName: String?
        /// The table header, when it is not `name`; the unit is added after it.
        var label: String?
        var unit: String?
        var kind: Kind
        /// The formats that show this column (some belong to the document in JSON, or only to people).
        var formats: Set<OutputFormat> = [.table, .csv, .json]
        /// Table text for a value when the kind's is not right (e.g. "never" for a missing time).
        var tableText: ((Cell) -> String)?
        /// Kept when a table is cut to fit (`Report.tableWidth`): others are left out first.
        var keep = false

        init(
            _ name: String, _ kind: Kind, label: String? = nil, unit: String? = nil, json jsonName: String? = nil,
            only formats: Set<OutputFormat> = [.table, .csv, .json], tableText: ((Cell) -> String)? = nil
        ) {
            self.name = name
            self.jsonName = jsonName
            self.kind = kind
            self.label = label
            self.unit = unit
            self.formats = formats
            self.tableText = tableText
        }
    }

    enum Cell {
        case text(String?)
        case integer(Int64?)
        case number(Double?)
        case time(Int64?)
        /// Several texts: a JSON array, one comma-joined cell elsewhere.
        case list([String])
        /// Several numbers: a JSON array, one comma-joined cell elsewhere.
        case numbers([Double?])

        static func int(_ value: Int) -> Cell { .integer(Int64(value)) }
    }

    var columns: [Column]
    var rows: [[Cell]] = []
    /// Fields of the JSON document before the rows (location, variable, ...).
    var meta: [(String, JSON)] = []
    /// The JSON key of the rows; nil prints the rows as a bare array.
    var rowsKey: String? = "rows"
    /// A report of one thing: JSON prints its one row as the document.
    var single = false
    /// Fields of the JSON document after the rows.
    var trailer: [(String, JSON)] = []
    /// The zone of table times (a tz name; UTC when unknown).
    var timezone = "UTC"
    /// Text before and after the table, for people.
    var title = ""
    var footer = ""

    init(columns: [Column]) { self.columns = columns }

    /// A computed number for `meta` or `trailer`, tidied as number cells are (`NumberText.tidy`).
    static func number(_ value: Double?) -> JSON { .number(NumberText.tidy(value)) }

    func columns(for format: OutputFormat) -> [(Int, Column)] {
        columns.enumerated().filter { $0.element.formats.contains(format) }.map { ($0.offset, $0.element) }
    }

    /// Prints the report in `format` on the context's stdout.
    func render(_ format: OutputFormat, _ context: Context) throws {
        switch format {
        case .json: context.out(json().serialized() + "\n")
        case .csv: try writeCSV(context.csvWriter())
        // A chart is drawn by its command from the same results (`ChartViews`); only they offer svg.
        case .table, .verif, .svg:
            let (text, left) = table(width: context.wide ? nil : Self.tableWidth)
            if !left.isEmpty {
                context.note(
                    "Note: \(left.count) column(s) left out to fit \(Self.tableWidth) characters (\(left.joined(separator: ", "))); --wide shows them, --format csv or json has every one"
                )
            }
            context.out(title + text + footer)
        }
    }

    /// Tables for people fit this many characters unless `--wide`.
    static let tableWidth = 100

    // MARK: JSON

    func jsonRow(_ row: [Cell]) -> JSON {
        .object(
            columns(for: .json).map { index, _ in
                let value: JSON
                switch row[index] {
                case .text(let text): value = text.map { .string($0) } ?? .null
                case .integer(let number): value = JSON.int(number)
                case .number(let number): value = .number(NumberText.tidy(number))
                case .time(let instant): value = instant.map { .string(CivilTime.isoUTC($0)) } ?? .null
                case .list(let items): value = .array(items.map { .string($0) })
                case .numbers(let items): value = .array(items.map { JSON.number(NumberText.tidy($0)) })
                }
                return (columns[index].jsonName ?? columns[index].name, value)
            })
    }

    func json() -> JSON {
        if single, let row = rows.first { return jsonRow(row) }
        let rows = JSON.array(rows.map(jsonRow))
        guard let rowsKey else { return rows }
        return .object(meta + [(rowsKey, rows)] + trailer)
    }

    // MARK: CSV

    func writeCSV(_ csv: CSVWriter) throws {
        let shown = columns(for: .csv)
        csv.header(shown.map(\.1.name))
        for row in rows {
            for (index, _) in shown {
                switch row[index] {
                case .text(let text): if let text { csv.text(text) } else { csv.empty() }
                case .integer(let number): csv.integer(number)
                case .number(let number): csv.number(NumberText.tidy(number))
                case .time(let instant): if let instant { csv.isoUTC(instant) } else { csv.empty() }
                case .list(let items): csv.text(items.joined(separator: ","))
                case .numbers(let items):
                    csv.text(items.map { $0.map { JSON.numberText(NumberText.tidy($0)) } ?? "" }.joined(separator: ","))
                }
            }
            csv.endRow()
        }
        try csv.flush()
    }

    // MARK: Table

    func table() -> String { table(width: nil).text }

    /// The table, with columns left out from the right (never the first) until it fits `width`
    /// characters; the headers of those left out.
    func table(width: Int?) -> (text: String, left: [String]) {
        var shown = columns(for: .table)
        var left: [String] = []
        while let width, shown.count > 1 {
            let text = table(shown)
            let widest = text.split(separator: "\n").map(\.count).max() ?? 0
            if widest <= width { return (text, left.reversed()) }
            guard let last = shown.indices.dropFirst().last(where: { !shown[$0].1.keep }) else { break }
            let dropped = shown.remove(at: last).1
            left.append(dropped.label ?? dropped.name)
        }
        return (table(shown), left.reversed())
    }

    /// The unit most of a table's columns share, said once at the end of the header line instead of
    /// in each header (nil when no two columns share one).
    static func sharedUnit(_ columns: [Column]) -> String? {
        var counts: [String: Int] = [:]
        for unit in columns.compactMap(\.unit) where !unit.isEmpty { counts[unit, default: 0] += 1 }
        let unit = counts.max { ($0.value, $1.key) < ($1.value, $0.key) }
        return unit.flatMap { $0.value >= 2 ? $0.key : nil }
    }

    private func table(_ shown: [(Int, Column)]) -> String {
        let shared = Self.sharedUnit(shown.map(\.1))
        var table = Table(
            headers: shown.map { _, column in
                let label = column.label ?? column.name
                guard let unit = column.unit, unit != shared else { return label }
                return "\(label) \(unit)"
            })
        table.headerNote = shared.map { "(\($0))" }
        for (position, (_, column)) in shown.enumerated() {
            switch column.kind {
            case .text, .time: break
            case .value(let variable) where variable.quantity == .code || variable.quantity == .direction: break
            default: table.rightAligned.insert(position)
            }
        }
        for row in rows {
            table.rows.append(
                shown.map { index, column in
                    let cell = row[index]
                    if let custom = column.tableText { return custom(cell) }
                    return text(cell, column.kind)
                })
        }
        return table.render()
    }

    func text(_ cell: Cell, _ kind: Kind) -> String {
        switch (cell, kind) {
        case (.text(let text), _): return (text ?? "").escapingControls()
        case (.list(let items), _): return items.joined(separator: ",")
        case (.numbers(let items), _): return items.map { formatNumber($0) }.joined(separator: ", ")
        case (.integer(let number), _): return number.map { String($0) } ?? ""
        case (.time(let instant), _): return instant.map { TimeInput.local($0, timezone: timezone) } ?? ""
        // Fixed decimals per column, so a column's numbers line up (1.50 above 1.49, not 1.5).
        case (.number(let number), .signed(let places)): return signed(number, places: places, fixed: true)
        case (.number(let number), .value(let variable)):
            // One decimal in every row, so a column lines up (2.0 above 1.1, not 2).
            if variable.quantity == .code || variable.quantity == .direction { return display(number, variable) }
            return fixedNumber(number, places: 1)
        case (.number(let number), .number(let places)): return fixedNumber(number, places: places)
        case (.number(let number), _): return formatNumber(number)
        }
    }
}

/// An aligned text table for people: numbers right-aligned, text left-aligned.
struct Table {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns to right-align (numbers).
    var rightAligned: Set<Int> = []
    /// Text after the last header (the unit the columns share).
    var headerNote: String?

    /// Linear in the size of the table: each cell's width is counted once and each line is
    /// built in one buffer (a regex per line was quadratic in a long cell's padding).
    func render() -> String {
        let counted = rows.map { $0.map(\.count) }
        var widths = headers.map(\.count)
        for row in counted {
            for (i, width) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], width) }
        }
        var out: [UInt8] = []
        func line(_ cells: [String], _ cellWidths: [Int]) {
            let start = out.count
            for (i, cell) in cells.enumerated() where i < widths.count {
                if i > 0 { out.append(contentsOf: [0x20, 0x20]) }
                let pad = max(0, widths[i] - cellWidths[i])
                if rightAligned.contains(i) { out.append(contentsOf: repeatElement(0x20, count: pad)) }
                out.append(contentsOf: cell.utf8)
                if !rightAligned.contains(i) { out.append(contentsOf: repeatElement(0x20, count: pad)) }
            }
            // No trailing blanks (padding of a last column, or a cell that ends in them).
            while out.count > start, let last = out.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D {
                out.removeLast()
            }
            out.append(0x0A)
        }
        if let headerNote {
            // As one more cell, so padding of the last header puts it two spaces after the widest cell.
            widths.append(headerNote.count)
            line(headers + [headerNote], headers.map(\.count) + [headerNote.count])
            widths.removeLast()
        } else {
            line(headers, headers.map(\.count))
        }
        line(widths.map { String(repeating: "-", count: $0) }, widths)
        for (row, cellWidths) in zip(rows, counted) { line(row, cellWidths) }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Formats a number for a table: up to `places` decimals, no trailing zeros.
func formatNumber(_ value: Double?, places: Int = 2) -> String {
    guard let value, value.isFinite else { return "" }
    var text = String(printf: "%.\(places)f", value)
    if text.contains(".") {
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
    }
    return text == "-0" ? "0" : text
}

/// A number with exactly `places` decimals (`1.50`), for a table column; never `-0.00`.
func fixedNumber(_ value: Double?, places: Int) -> String {
    guard let value, value.isFinite else { return "" }
    let text = String(printf: "%.\(places)f", value)
    return text.hasPrefix("-") && text.allSatisfy({ "-0.".contains($0) }) ? String(text.dropFirst()) : text
}

/// A signed number for people: `+1.2`, `-0.4`, `0` (`fixed`: `+1.20`, `0.00`).
func signed(_ value: Double?, places: Int = 2, fixed: Bool = false) -> String {
    guard let value else { return "" }
    let text = fixed ? fixedNumber(value, places: places) : formatNumber(value, places: places)
    return value > 0 && text.contains(where: { $0 != "0" && $0 != "." }) ? "+" + text : text
}

/// A value for people: weather codes with their label, directions with their compass point.
func display(_ value: Double?, _ variable: Variable) -> String {
    guard let value else { return "" }
    switch variable.quantity {
    case .code:
        // A code outside WMO's 0...99 (hostile or broken input) prints as the number it is.
        guard let code = Int(exactly: value.rounded()), (0...99).contains(code) else {
            return formatNumber(value, places: 1)
        }
        return "\(code) \(WeatherCode.label(code))"
    case .direction: return "\(formatNumber(value, places: 0)) \(WeatherCode.compass(value))"
    default: return formatNumber(value, places: 1)
    }
}
