/// One model's forecast from one response, as parallel arrays checked for equal length and
/// converted to metric units. Times are UTC instants.
public struct ModelForecast: Sendable, Equatable {
    /// The model name: the key suffix when several models were asked for, else the caller's choice.
    public var model: String
    /// UTC instants of the hourly rows.
    public var hourlyTimes: [Int64] = []
    /// One column per `Variables.hourly` entry; nil when the response did not have that variable.
    public var hourly: [[Double?]?] = Array(repeating: nil, count: Variables.hourly.count)
    /// Local dates (`YYYY-MM-DD`, under the response's fixed offset) of the daily rows.
    public var dailyDates: [String] = []
    /// One column per `Variables.daily` entry; `sunrise`/`sunset` hold UTC instants as doubles.
    public var daily: [[Double?]?] = Array(repeating: nil, count: Variables.daily.count)

    public init(model: String) { self.model = model }

    /// True when the response held neither hourly nor daily rows for this model.
    public var isEmpty: Bool { hourlyTimes.isEmpty && dailyDates.isEmpty }

    /// A 64-bit FNV-1a hash of the forecast content (times, values and which are missing), so an
    /// unchanged forecast fetched again is recognised without comparing every row.
    public func contentHash(grid: (Double, Double, Double?)) -> Int64 {
        var hasher = FNV1a()
        hasher.add(grid.0.bitPattern)
        hasher.add(grid.1.bitPattern)
        hasher.add(grid.2?.bitPattern ?? 0x7FF8_dead_beef_0001)
        hasher.add(UInt64(hourlyTimes.count))
        for t in hourlyTimes { hasher.add(UInt64(bitPattern: t)) }
        for column in hourly { hasher.add(column) }
        hasher.add(UInt64(dailyDates.count))
        for date in dailyDates { for byte in date.utf8 { hasher.add(byte) } }
        for column in daily { hasher.add(column) }
        return Int64(bitPattern: hasher.value)
    }
}

/// The 64-bit FNV-1a hash, fed byte by byte: content hashes, and the seeds of `query verify`'s intervals.
public struct FNV1a: Sendable {
    /// The hash of what was added so far.
    public var value: UInt64 = 0xcbf2_9ce4_8422_2325
    public init() {}
    /// Adds one byte.
    @inline(__always) public mutating func add(_ byte: UInt8) {
        value ^= UInt64(byte)
        value &*= 0x0000_0100_0000_01b3
    }
    @inline(__always) mutating func add(_ word: UInt64) {
        var w = word
        for _ in 0..<8 {
            add(UInt8(truncatingIfNeeded: w))
            w >>= 8
        }
    }
    mutating func add(_ column: [Double?]?) {
        guard let column else {
            add(UInt64(0xFFFF_FFFF_FFFF_FFFF))
            return
        }
        add(UInt64(column.count))
        for value in column {
            // A distinct pattern for null, so [null] and [0] differ.
            add(value?.bitPattern ?? 0x7FF8_0000_0000_0bad)
        }
    }
}

/// The `current` block of a response: one instant and the hourly variables it holds.
public struct CurrentConditions: Sendable, Equatable {
    public var time: Int64
    /// One entry per `Variables.hourly` column; nil when absent or null.
    public var values: [Double?]
}

/// A decoded single-location forecast response.
public struct ForecastResponse: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double?
    public var utcOffsetSeconds: Int
    public var timezone: String
    /// Open-Meteo's `location_id` (absent on the first element of a multi-location array).
    public var locationID: Int?
    public var current: CurrentConditions?
    /// One entry per model; a single unsuffixed response gives one.
    public var models: [ModelForecast]
    /// Values left empty because no weather can have them (`PhysicalRange`), per variable name.
    public var outOfRange: [String: Int] = [:]
}

/// Why a response cannot be stored. Each description says what is wrong and what to do.
public enum DecodeError: Error, Equatable, CustomStringConvertible, Sendable {
    case invalidJSON(String)
    case apiError(reason: String)
    case notAnObject(found: String)
    case missingField(String)
    case wrongType(field: String, expected: String, found: String)
    case lengthMismatch(section: String, variable: String, count: Int, timeCount: Int)
    case badValue(section: String, variable: String, index: Int, found: String)
    case badTime(section: String, index: Int, text: String)
    case unknownUnit(variable: String, unit: String)
    case noForecast
    case modelNotInResponse(model: String, available: [String])
    case tooManyLocations(count: Int)

    public var description: String {
        // Texts taken from the input are clipped, so a hostile response cannot flood the terminal or the fetch log.
        switch self.clipped {
        case .invalidJSON(let detail):
            return "the response is not valid JSON (\(detail)); it may be truncated or not an Open-Meteo response"
        case .apiError(let reason):
            return "Open-Meteo returned an error: \(reason)"
        case .notAnObject(let found):
            return "the response is \(found), not a forecast object"
        case .missingField(let field):
            return "the response has no \"\(field)\"; is it an Open-Meteo forecast response?"
        case .wrongType(let field, let expected, let found):
            return "\"\(field)\" should be \(expected) but is \(found)"
        case .lengthMismatch(let section, let variable, let count, let timeCount):
            return
                "\(section).\(variable) has \(count) values but \(section).time has \(timeCount); the arrays must be the same length"
        case .badValue(let section, let variable, let index, let found):
            return "\(section).\(variable)[\(index)] is \(found), expected a number or null"
        case .badTime(let section, let index, let text):
            return
                "\(section).time[\(index)] is \(text), not a time Open-Meteo writes (unix seconds or YYYY-MM-DDTHH:MM)"
        case .unknownUnit(let variable, let unit):
            return "unit \"\(unit)\" of \(variable) is not one wxdb can convert to metric"
        case .noForecast:
            return "the response holds no hourly or daily forecast (ask for hourly= or daily= variables)"
        case .modelNotInResponse(let model, let available):
            return "model \(model) is not in the response (it has: \(available.joined(separator: ", ")))"
        case .tooManyLocations(let count):
            return "the response holds \(count) locations; import one location per file"
        }
    }
}

extension DecodeError {
    /// The error with every text that came from the input cut to a readable length.
    var clipped: DecodeError {
        switch self {
        case .invalidJSON(let detail): return .invalidJSON(detail.clippedForMessage(200))
        case .apiError(let reason): return .apiError(reason: reason.clippedForMessage(200))
        case .notAnObject, .noForecast, .tooManyLocations: return self
        case .missingField(let field): return .missingField(field.clippedForMessage())
        case .wrongType(let field, let expected, let found):
            return .wrongType(field: field.clippedForMessage(), expected: expected, found: found)
        case .lengthMismatch(let section, let variable, let count, let timeCount):
            return .lengthMismatch(
                section: section, variable: variable.clippedForMessage(), count: count, timeCount: timeCount)
        case .badValue(let section, let variable, let index, let found):
            return .badValue(
                section: section, variable: variable.clippedForMessage(), index: index, found: found.clippedForMessage()
            )
        case .badTime(let section, let index, let text):
            return .badTime(section: section, index: index, text: text.clippedForMessage())
        case .unknownUnit(let variable, let unit):
            return .unknownUnit(variable: variable.clippedForMessage(), unit: unit.clippedForMessage())
        case .modelNotInResponse(let model, let available):
            return .modelNotInResponse(
                model: model.clippedForMessage(), available: available.prefix(10).map { $0.clippedForMessage() })
        }
    }
}

extension String {
    /// The text cut to about `limit` characters for an error message, saying how long it was.
    public func clippedForMessage(_ limit: Int = 80) -> String {
        guard count > limit else { return self }
        return String(prefix(limit)) + "… (\(utf8.count) bytes)"
    }
}

/// Decodes Open-Meteo forecast responses.
public enum ForecastDecoder {
    /// Decodes a body holding one location (an object). Arrays are refused: a file import names one location.
    public static func decodeSingle(_ body: some Collection<UInt8>, defaultModel: String, onlyModel: String? = nil)
        throws -> ForecastResponse
    {
        let json = try parse(body)
        if case .array(let elements) = json {
            if elements.count == 1 { return try decode(elements[0], defaultModel: defaultModel, onlyModel: onlyModel) }
            throw DecodeError.tooManyLocations(count: elements.count)
        }
        return try decode(json, defaultModel: defaultModel, onlyModel: onlyModel)
    }

    /// Decodes a body holding one location or an array of locations, in request order.
    public static func decodeMany(_ body: some Collection<UInt8>, defaultModel: String, models: [String]? = nil) throws
        -> [ForecastResponse]
    {
        let json = try parse(body)
        if case .array(let elements) = json {
            return try elements.map { try decode($0, defaultModel: defaultModel, expectedModels: models) }
        }
        return [try decode(json, defaultModel: defaultModel, expectedModels: models)]
    }

    /// One element of an answer, decoded on its own, with the `location_id` it claims (read even
    /// when the rest of it cannot be decoded, so a failure can be put down to its location).
    public struct Element: Sendable {
        public var locationID: Int?
        public var result: Result<ForecastResponse, DecodeError>

        public init(locationID: Int?, result: Result<ForecastResponse, DecodeError>) {
            self.locationID = locationID
            self.result = result
        }
    }

    /// Decodes a body holding one location or an array of locations element by element, so one
    /// bad element costs only its own location. Throws only when the body is not JSON at all.
    public static func decodeEach(_ body: some Collection<UInt8>, defaultModel: String, models: [String]? = nil) throws
        -> [Element]
    {
        // Element by element: each location's tree is let go once decoded.
        var decoded: [Element] = []
        do {
            try JSONParser.parseEach(body) { element in
                let id = element["location_id"]?.numberValue.flatMap { Int(exactly: $0) }
                do {
                    decoded.append(
                        Element(
                            locationID: id,
                            result: .success(try decode(element, defaultModel: defaultModel, expectedModels: models))))
                } catch let error as DecodeError {
                    decoded.append(Element(locationID: id, result: .failure(error)))
                } catch {
                    decoded.append(Element(locationID: id, result: .failure(.invalidJSON("\(error)"))))
                }
            }
        } catch let error as JSONParseError {
            throw DecodeError.invalidJSON(error.description)
        }
        return decoded
    }

    static func parse(_ body: some Collection<UInt8>) throws -> JSON {
        do {
            return try JSONParser.parse(body)
        } catch let error as JSONParseError {
            throw DecodeError.invalidJSON(error.description)
        }
    }

    /// Decodes one location's object.
    public static func decode(
        _ json: JSON, defaultModel: String, onlyModel: String? = nil, expectedModels: [String]? = nil
    ) throws -> ForecastResponse {
        guard case .object(let root) = json else { throw DecodeError.notAnObject(found: json.typeName) }
        if root["error"]?.boolValue == true {
            throw DecodeError.apiError(reason: root["reason"]?.stringValue ?? "no reason given")
        }
        let latitude = try number(root, "latitude")
        let longitude = try number(root, "longitude")
        let elevation = root["elevation"]?.numberValue
        guard let offsetValue = root["utc_offset_seconds"] else { throw DecodeError.missingField("utc_offset_seconds") }
        guard let offsetNumber = offsetValue.numberValue, offsetNumber == offsetNumber.rounded(),
            abs(offsetNumber) <= 18 * 3600
        else {
            throw DecodeError.wrongType(
                field: "utc_offset_seconds", expected: "whole seconds within ±18 h", found: offsetValue.typeName)
        }
        let offset = Int(offsetNumber)
        let timezone = root["timezone"]?.stringValue ?? "GMT"
        // Stored with every run and shown to people: a name no zone database has this long or
        // with these characters is not Open-Meteo's (adoption checks the zone database itself).
        guard timezone.utf8.count <= ZoneTime.maxNameLength,
            timezone.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else {
            throw DecodeError.wrongType(
                field: "timezone", expected: "a time zone name", found: "a text of \(timezone.utf8.count) bytes")
        }
        var locationID: Int?
        if let id = root["location_id"]?.numberValue { locationID = Int(exactly: id) }

        let hourly = try section(root, "hourly")
        let daily = try section(root, "daily")
        let hourlyUnits = root["hourly_units"]?.objectValue
        let dailyUnits = root["daily_units"]?.objectValue

        // Which models: unsuffixed keys mean one model; otherwise read the suffixes.
        let suffixes = modelSuffixes(hourly: hourly, daily: daily, expected: expectedModels ?? onlyModel.map { [$0] })
        var models: [ModelForecast] = []
        var filter = RangeFilter()
        let names: [String?] = suffixes.isEmpty ? [nil] : suffixes.map { Optional($0) }
        for suffix in names {
            let name = suffix ?? (onlyModel ?? defaultModel)
            if let onlyModel, suffix != nil, suffix != onlyModel { continue }
            var forecast = ModelForecast(model: name)
            if let hourly {
                forecast.hourlyTimes = try hourlyTimes(hourly, section: "hourly", offset: offset)
                for (index, variable) in Variables.hourly.enumerated() {
                    forecast.hourly[index] = try column(
                        hourly, units: hourlyUnits, variable: variable, suffix: suffix,
                        section: "hourly", count: forecast.hourlyTimes.count, offset: offset, filter: &filter)
                }
            }
            if let daily {
                forecast.dailyDates = try dailyDates(daily, offset: offset)
                for (index, variable) in Variables.daily.enumerated() {
                    forecast.daily[index] = try column(
                        daily, units: dailyUnits, variable: variable, suffix: suffix,
                        section: "daily", count: forecast.dailyDates.count, offset: offset, filter: &filter)
                }
            }
            models.append(forecast)
        }
        if let onlyModel, models.isEmpty {
            throw DecodeError.modelNotInResponse(model: onlyModel, available: suffixes)
        }
        if models.allSatisfy(\.isEmpty) { throw DecodeError.noForecast }

        let current = try current(root, offset: offset, filter: &filter)
        return ForecastResponse(
            latitude: latitude, longitude: longitude, elevation: elevation, utcOffsetSeconds: offset,
            timezone: timezone, locationID: locationID, current: current, models: models, outOfRange: filter.refused)
    }

    static func number(_ object: JSONObject, _ key: String) throws -> Double {
        guard let value = object[key] else { throw DecodeError.missingField(key) }
        guard let number = value.numberValue else {
            throw DecodeError.wrongType(field: key, expected: "a number", found: value.typeName)
        }
        return number
    }

    static func section(_ root: JSONObject, _ key: String) throws -> JSONObject? {
        guard let value = root[key] else { return nil }
        guard let object = value.objectValue else {
            throw DecodeError.wrongType(field: key, expected: "an object", found: value.typeName)
        }
        return object
    }

    /// The model suffixes of a multi-model response, in order of first appearance; empty when the
    /// keys are unsuffixed. A key is read against the longest kept variable name it starts with, so
    /// `precipitation_probability_gfs` is (precipitation_probability, gfs), not (precipitation, ...).
    static func modelSuffixes(hourly: JSONObject?, daily: JSONObject?, expected: [String]?) -> [String] {
        var order: [String] = []
        var counts: [String: Int] = [:]
        var unsuffixed = false
        func scan(_ object: JSONObject?, _ variables: [Variable]) {
            guard let object else { return }
            let names = variables.flatMap { [$0.name] + $0.aliases }.sorted { $0.count > $1.count }
            for key in object.keys where key != "time" {
                if names.contains(key) {
                    unsuffixed = true
                    continue
                }
                guard let base = names.first(where: { key.hasPrefix($0 + "_") }) else { continue }
                let suffix = String(key.dropFirst(base.count + 1))
                // Previous-runs and ensemble keys are other series, not models.
                if suffix.hasPrefix("previous_day") || suffix.hasPrefix("member") { continue }
                if counts[suffix] == nil { order.append(suffix) }
                counts[suffix, default: 0] += 1
            }
        }
        scan(hourly, Variables.hourly)
        scan(daily, Variables.daily)
        if unsuffixed { return [] }
        if let expected, expected.count > 1 || expected.contains(where: { counts[$0] != nil }) {
            return order.filter { expected.contains($0) }
        }
        // Every real model has every requested variable; a false reading of an unkept variable
        // (`precipitation_hours_x` as precipitation + `hours_x`) has fewer.
        let most = counts.values.max() ?? 0
        return order.filter { counts[$0] == most }
    }

    static func hourlyTimes(_ section: JSONObject, section name: String, offset: Int) throws -> [Int64] {
        guard let value = section["time"] else { throw DecodeError.missingField("\(name).time") }
        guard let array = value.arrayValue else {
            throw DecodeError.wrongType(field: "\(name).time", expected: "an array", found: value.typeName)
        }
        var times: [Int64] = []
        times.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            times.append(try instant(element, section: name, index: index, offset: offset, hourlyRows: true))
        }
        return times
    }

    /// The offset Open-Meteo reads hourly data under: the actual one truncated toward zero to
    /// whole hours (its `getTimerange2`: `utcOffset = (actualUtcOffset / 3600) * 3600`). At +05:45
    /// it reads the whole UTC hours and only labels them with the actual offset.
    public static func readOffset(_ offset: Int) -> Int { (offset / 3600) * 3600 }

    /// A time element: unix seconds or a local label. With `hourlyRows` (the rows of an hourly
    /// section) the instant is the whole UTC hour Open-Meteo read: label − `readOffset(offset)`, or
    /// the printed stamp (label − offset) moved by the offset's part beyond whole hours. Otherwise
    /// (`current`, a true instant labelled with the actual offset) it is label − offset, or the stamp.
    static func instant(_ element: JSON, section: String, index: Int, offset: Int, hourlyRows: Bool = false) throws
        -> Int64
    {
        let shift = hourlyRows ? Int64(offset - readOffset(offset)) : 0
        switch element {
        case .number(let n):
            guard n == n.rounded(), abs(n) < 1e11 else {
                throw DecodeError.badTime(section: section, index: index, text: String(n))
            }
            return Int64(n) + shift
        case .string(let text):
            guard let wall = CivilTime.parseLabel(text) else {
                throw DecodeError.badTime(section: section, index: index, text: "\"\(text)\"")
            }
            return wall - Int64(offset) + shift
        default:
            throw DecodeError.badTime(section: section, index: index, text: element.typeName)
        }
    }

    static func dailyDates(_ section: JSONObject, offset: Int) throws -> [String] {
        guard let value = section["time"] else { throw DecodeError.missingField("daily.time") }
        guard let array = value.arrayValue else {
            throw DecodeError.wrongType(field: "daily.time", expected: "an array", found: value.typeName)
        }
        return try array.enumerated().map { index, element in
            switch element {
            case .number(let n):
                // Unixtime daily stamps are local midnight under the fixed offset.
                guard n == n.rounded(), abs(n) < 1e11 else {
                    throw DecodeError.badTime(section: "daily", index: index, text: String(n))
                }
                return CivilTime.dateString(unix: Int64(n) + Int64(offset))
            case .string(let text):
                guard text.utf8.count == 10, CivilTime.parseLabel(text) != nil else {
                    throw DecodeError.badTime(section: "daily", index: index, text: "\"\(text)\"")
                }
                return text
            default:
                throw DecodeError.badTime(section: "daily", index: index, text: element.typeName)
            }
        }
    }

    /// One variable's column, converted to metric; nil when the section does not have it.
    static func column(
        _ section: JSONObject, units: JSONObject?, variable: Variable, suffix: String?,
        section name: String, count: Int, offset: Int, filter: inout RangeFilter
    ) throws -> [Double?]? {
        var key: String?
        for candidate in [variable.name] + variable.aliases {
            let full = suffix.map { candidate + "_" + $0 } ?? candidate
            if section[full] != nil {
                key = full
                break
            }
        }
        guard let key, let value = section[key] else { return nil }
        guard let array = value.arrayValue else {
            throw DecodeError.wrongType(field: "\(name).\(key)", expected: "an array", found: value.typeName)
        }
        guard array.count == count else {
            throw DecodeError.lengthMismatch(section: name, variable: key, count: array.count, timeCount: count)
        }
        let unit = units?[key]?.stringValue
        var result = [Double?](repeating: nil, count: count)
        for (index, element) in array.enumerated() {
            switch element {
            case .null: continue
            case .number(let n):
                if variable.quantity == .instant {
                    guard n == n.rounded(), abs(n) < 1e11 else {
                        throw DecodeError.badValue(section: name, variable: key, index: index, found: String(n))
                    }
                    result[index] = n
                } else if let unit, unit != "undefined" {
                    guard let metric = Variables.toMetric(n, unit: unit, quantity: variable.quantity) else {
                        throw DecodeError.unknownUnit(variable: key, unit: unit)
                    }
                    // A huge value can overflow to infinity in the conversion; infinity is not a reading.
                    guard metric.isFinite else {
                        throw DecodeError.badValue(
                            section: name, variable: key, index: index, found: "\(n) \(unit), out of range in metric")
                    }
                    result[index] = filter.check(metric, variable)
                } else {
                    result[index] = filter.check(n, variable)
                }
            case .string(let text) where variable.quantity == .instant:
                guard let wall = CivilTime.parseLabel(text) else {
                    throw DecodeError.badValue(section: name, variable: key, index: index, found: "\"\(text)\"")
                }
                result[index] = Double(wall - Int64(offset))
            default:
                throw DecodeError.badValue(section: name, variable: key, index: index, found: element.typeName)
            }
        }
        return result
    }

    static func current(_ root: JSONObject, offset: Int, filter: inout RangeFilter) throws -> CurrentConditions? {
        if let value = root["current"] {
            guard let block = value.objectValue else {
                throw DecodeError.wrongType(field: "current", expected: "an object", found: value.typeName)
            }
            return try currentBlock(
                block, units: root["current_units"]?.objectValue, field: "current", offset: offset, filter: &filter
            ) {
                Variables.hourlyIndex(of: $0)
            }
        }
        if let value = root["current_weather"] {
            guard let block = value.objectValue else {
                throw DecodeError.wrongType(field: "current_weather", expected: "an object", found: value.typeName)
            }
            return try currentBlock(
                block, units: root["current_weather_units"]?.objectValue, field: "current_weather", offset: offset,
                filter: &filter
            ) {
                Variables.legacyCurrentWeather[$0].flatMap(Variables.hourlyIndex(of:))
            }
        }
        return nil
    }

    static func currentBlock(
        _ block: JSONObject, units: JSONObject?, field: String, offset: Int, filter: inout RangeFilter,
        index: (String) -> Int?
    ) throws -> CurrentConditions? {
        guard let timeValue = block["time"] else { throw DecodeError.missingField("\(field).time") }
        let time = try instant(timeValue, section: field, index: 0, offset: offset)
        var values = [Double?](repeating: nil, count: Variables.hourly.count)
        var any = false
        for (key, value) in zip(block.keys, block.values) {
            guard let column = index(key) else { continue }
            switch value {
            case .null: continue
            case .number(let n):
                let variable = Variables.hourly[column]
                if let unit = units?[key]?.stringValue, unit != "undefined" {
                    guard let metric = Variables.toMetric(n, unit: unit, quantity: variable.quantity) else {
                        throw DecodeError.unknownUnit(variable: "\(field).\(key)", unit: unit)
                    }
                    guard metric.isFinite else {
                        throw DecodeError.badValue(
                            section: field, variable: key, index: 0, found: "\(n) \(unit), out of range in metric")
                    }
                    values[column] = filter.check(metric, variable)
                } else {
                    values[column] = filter.check(n, variable)
                }
                any = any || values[column] != nil
            default:
                throw DecodeError.badValue(section: field, variable: key, index: 0, found: value.typeName)
            }
        }
        // `current` values are sums or maxima over the `interval` before `time` (900 s: a quarter
        // of an hour). Observations pair with hourly forecasts, whose precipitation is the hour's
        // sum: a quarter-hour's sum beside it reads as a dry bias, and one value cannot be turned
        // into the hour's, so precipitation is kept only from an hourly `current`.
        if let interval = block["interval"]?.numberValue, interval != 3600,
            let precipitation = Variables.hourlyIndex(of: "precipitation"), values[precipitation] != nil
        {
            values[precipitation] = nil
            any = values.contains { $0 != nil }
        }
        return any ? CurrentConditions(time: time, values: values) : nil
    }
}
