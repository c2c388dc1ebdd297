/// A parsed JSON value. wxdb parses JSON itself so it can refuse what Foundation would accept
/// silently (duplicate keys, invalid UTF-8, trailing garbage) and say where the problem is.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// The value for `key` when this is an object.
    public subscript(key: String) -> JSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    public var arrayValue: [JSON]? { if case .array(let a) = self { return a } else { return nil } }
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var numberValue: Double? { if case .number(let n) = self { return n } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON object that keeps its keys in document order.
public struct JSONObject: Sendable, Equatable {
    public private(set) var keys: [String] = []
    public private(set) var values: [JSON] = []
    private var index: [String: Int] = [:]

    public init() {}

    public subscript(key: String) -> JSON? {
        index[key].map { values[$0] }
    }

    /// Adds a key; returns false when the key is already present.
    mutating func insert(_ key: String, _ value: JSON) -> Bool {
        if index[key] != nil { return false }
        index[key] = keys.count
        keys.append(key)
        values.append(value)
        return true
    }
}

/// Why a document is not valid JSON, with the byte offset where that was found.
public struct JSONParseError: Error, Equatable, CustomStringConvertible, Sendable {
    public let message: String
    public let offset: Int
    public var description: String { "\(message) at byte \(offset)" }
}

/// A strict RFC 8259 parser: one whole document, no trailing content, no duplicate keys,
/// valid UTF-8, bounded nesting.
public struct JSONParser {
    public static let maxDepth = 64

    /// Parses `bytes` as exactly one JSON document.
    public static func parse<Bytes: Collection>(_ bytes: Bytes) throws -> JSON where Bytes.Element == UInt8 {
        if let result = try bytes.withContiguousStorageIfAvailable({ try parse(buffer: UnsafeRawBufferPointer($0)) }) {
            return result
        }
        let array = Array(bytes)
        return try array.withUnsafeBytes { try parse(buffer: $0) }
    }

    /// Parses `bytes` as exactly one JSON document like `parse`, handing the elements of a
    /// top-level array to `body` one at a time (any other document whole): a caller that decodes
    /// each element never holds the whole tree (tens of MB for a 100-location response).
    public static func parseEach<Bytes: Collection>(_ bytes: Bytes, _ body: (JSON) throws -> Void) throws
    where Bytes.Element == UInt8 {
        try withoutActuallyEscaping(body) { body in
            let done: Void? = try bytes.withContiguousStorageIfAvailable {
                try parse(buffer: UnsafeRawBufferPointer($0), each: body)
            }
            if done != nil { return }
            let array = Array(bytes)
            try array.withUnsafeBytes { try _ = parse(buffer: $0, each: body) }
        }
    }

    static func parse(buffer: UnsafeRawBufferPointer) throws -> JSON {
        try parse(buffer: buffer, each: nil)
    }

    /// With `each`, a top-level array's elements go to it and `.null` is returned.
    @discardableResult
    static func parse(buffer: UnsafeRawBufferPointer, each: ((JSON) throws -> Void)?) throws -> JSON {
        var parser = Cursor(bytes: buffer)
        // A UTF-8 byte order mark (editors on Windows add one) is not content; RFC 8259 §8.1 lets
        // a parser ignore it.
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { parser.position = 3 }
        parser.skipWhitespace()
        if parser.position == buffer.count {
            throw JSONParseError(message: "the document is empty", offset: 0)
        }
        let value: JSON
        if let each {
            if buffer[parser.position] == UInt8(ascii: "[") {
                parser.position += 1
                var handed = Handed(body: each)
                try parser.elements(depth: 1, into: &handed)
            } else {
                try each(try parser.value(depth: 0))
            }
            value = .null
        } else {
            value = try parser.value(depth: 0)
        }
        parser.skipWhitespace()
        if parser.position != buffer.count {
            throw JSONParseError(message: "unexpected content after the JSON document", offset: parser.position)
        }
        return value
    }

    /// Where `Cursor.elements` puts an array's elements.
    protocol ElementSink {
        mutating func take(_ element: JSON) throws
    }

    /// Keeps the elements (a nested array).
    struct Collected: ElementSink {
        var elements: [JSON] = []
        mutating func take(_ element: JSON) { elements.append(element) }
    }

    /// Hands each element on (the top-level array of `parseEach`).
    struct Handed: ElementSink {
        let body: (JSON) throws -> Void
        func take(_ element: JSON) throws { try body(element) }
    }

    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        func fail(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: position) }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x0A, 0x0D, 0x09: position += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws -> JSON {
            guard position < bytes.count else { throw fail("the document ends too early (truncated?)") }
            switch bytes[position] {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw fail("unexpected character '\(printable(bytes[position]))'")
            }
        }

        func printable(_ byte: UInt8) -> String {
            (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
        }

        mutating func literal(_ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            guard position + count <= bytes.count else { throw fail("the document ends too early (truncated?)") }
            for i in 0..<count where bytes[position + i] != word.utf8Start[i] {
                throw fail("invalid literal")
            }
            position += count
        }

        mutating func object(depth: Int) throws -> JSON {
            guard depth <= JSONParser.maxDepth else { throw fail("nesting deeper than \(JSONParser.maxDepth) levels") }
            position += 1
            var object = JSONObject()
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(object)
            }
            while true {
                skipWhitespace()
                guard position < bytes.count else { throw fail("the document ends too early (truncated?)") }
                guard bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a key string") }
                let keyStart = position
                let key = try string()
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                    throw fail(position < bytes.count ? "expected ':'" : "the document ends too early (truncated?)")
                }
                position += 1
                skipWhitespace()
                let value = try value(depth: depth)
                guard object.insert(key, value) else {
                    throw JSONParseError(message: "duplicate key \"\(key)\"", offset: keyStart)
                }
                skipWhitespace()
                guard position < bytes.count else { throw fail("the document ends too early (truncated?)") }
                switch bytes[position] {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return .object(object)
                default: throw fail("expected ',' or '}'")
                }
            }
        }

        mutating func array(depth: Int) throws -> JSON {
            position += 1
            var collected = Collected()
            try elements(depth: depth, into: &collected)
            return .array(collected.elements)
        }

        /// An array's elements after its '[', each given to `sink`, through its ']'. Generic rather
        /// than taking a closure: `array` is the parser's hot path (every hourly column), and a
        /// closure appending to a captured array costs a call and a boxed array per element.
        mutating func elements<Sink: ElementSink>(depth: Int, into sink: inout Sink) throws {
            guard depth <= JSONParser.maxDepth else { throw fail("nesting deeper than \(JSONParser.maxDepth) levels") }
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return
            }
            while true {
                skipWhitespace()
                try sink.take(try value(depth: depth))
                skipWhitespace()
                guard position < bytes.count else { throw fail("the document ends too early (truncated?)") }
                switch bytes[position] {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    return
                default: throw fail("expected ',' or ']'")
                }
            }
        }

        mutating func string() throws -> String {
            position += 1  // opening quote
            let start = position
            // Fast path: no escapes.
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                    position += 1
                    guard let text = String(validating: slice, as: UTF8.self) else {
                        throw JSONParseError(message: "invalid UTF-8 in a string", offset: start)
                    }
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw fail("control character in a string") }
                position += 1
            }
            var buffer = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    guard let text = String(validating: buffer, as: UTF8.self) else {
                        throw JSONParseError(message: "invalid UTF-8 in a string", offset: start)
                    }
                    return text
                case UInt8(ascii: "\\"):
                    position += 1
                    guard position < bytes.count else { throw fail("the document ends too early (truncated?)") }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""): buffer.append(0x22)
                    case UInt8(ascii: "\\"): buffer.append(0x5C)
                    case UInt8(ascii: "/"): buffer.append(0x2F)
                    case UInt8(ascii: "b"): buffer.append(0x08)
                    case UInt8(ascii: "f"): buffer.append(0x0C)
                    case UInt8(ascii: "n"): buffer.append(0x0A)
                    case UInt8(ascii: "r"): buffer.append(0x0D)
                    case UInt8(ascii: "t"): buffer.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                                bytes[position + 1] == UInt8(ascii: "u")
                            else { throw fail("unpaired surrogate in \\u escape") }
                            position += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else {
                                throw fail("unpaired surrogate in \\u escape")
                            }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw fail("unpaired surrogate in \\u escape")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                        buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default: throw fail("invalid escape sequence")
                    }
                default:
                    if byte < 0x20 { throw fail("control character in a string") }
                    buffer.append(byte)
                    position += 1
                }
            }
            throw fail("the document ends too early (truncated?)")
        }

        mutating func hex4() throws -> UInt32 {
            guard position + 4 <= bytes.count else { throw fail("the document ends too early (truncated?)") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail("invalid \\u escape")
                }
                value = value * 16 + digit
                position += 1
            }
            return value
        }

        /// Open-Meteo prints short fixed-decimal numbers ("18.3", "0.30", "1013.2"); those are parsed
        /// exactly by integer arithmetic (mantissa and power of ten are both exact doubles, so one
        /// division rounds correctly). Anything else goes to the standard library's parser.
        mutating func number() throws -> Double {
            let start = position
            var negative = false
            if bytes[position] == UInt8(ascii: "-") {
                negative = true
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid number") }
            if bytes[position] == UInt8(ascii: "0"), position + 1 < bytes.count, isDigit(bytes[position + 1]) {
                throw fail("invalid number (leading zero)")
            }
            var mantissa: UInt64 = 0
            var digits = 0
            while position < bytes.count, isDigit(bytes[position]) {
                mantissa = mantissa &* 10 &+ UInt64(bytes[position] - UInt8(ascii: "0"))
                digits += 1
                position += 1
            }
            var fractionDigits = 0
            var simple = true
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid number") }
                while position < bytes.count, isDigit(bytes[position]) {
                    mantissa = mantissa &* 10 &+ UInt64(bytes[position] - UInt8(ascii: "0"))
                    digits += 1
                    fractionDigits += 1
                    position += 1
                }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
                simple = false
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
                {
                    position += 1
                }
                guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid number") }
                while position < bytes.count, isDigit(bytes[position]) { position += 1 }
            }
            if simple && digits <= 15 && fractionDigits <= 22 {
                var value = Double(mantissa)
                if fractionDigits > 0 { value /= Self.powersOfTen[fractionDigits] }
                return negative ? -value : value
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                throw JSONParseError(message: "number out of range", offset: start)
            }
            return value
        }

        static let powersOfTen: [Double] = (0...22).map { p in (0..<p).reduce(1.0) { acc, _ in acc * 10 } }

        @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    }
}

extension JSON {
    /// Compact JSON text. Whole numbers print without a fraction (`412`), others in Swift's
    /// shortest round-trip form, so nothing is rounded.
    public func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += JSON.numberText(n)
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let elements):
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let object):
            out += "{"
            for (i, (key, value)) in zip(object.keys, object.values).enumerated() {
                if i > 0 { out += "," }
                JSON.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// A number as JSON writes it: whole numbers without a fraction, others in shortest
    /// round-trip form, `null` when not finite.
    public static func numberText(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        return "\(n)"
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Builds an object from ordered pairs.
    public static func object(_ pairs: [(String, JSON)]) -> JSON {
        var object = JSONObject()
        for (key, value) in pairs { _ = object.insert(key, value) }
        return .object(object)
    }

    public static func number(_ value: Double?) -> JSON { value.map { .number($0) } ?? .null }
    public static func string(_ value: String?) -> JSON { value.map { .string($0) } ?? .null }
    public static func int(_ value: Int64?) -> JSON { value.map { .number(Double($0)) } ?? .null }
}
