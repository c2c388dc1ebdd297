import Foundation

/// A decoded PNG: 8-bit RGB or RGBA (what Chromium's screenshots are), as RGBA pixels row by row.
/// Enough of PNG for the browser render tests to count pixels; not a general image library.
public struct PNGImage: Sendable {
    public let width: Int
    public let height: Int
    /// `width * height * 4` bytes, RGBA; RGB images get alpha 255.
    public let rgba: [UInt8]

    /// What the decoder refuses, with the reason.
    public struct DecodeError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The pixel at column `x`, row `y`.
    public func pixel(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let i = (y * width + x) * 4
        return (rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3])
    }

    /// Decodes a PNG file's bytes: signature, IHDR, the IDAT stream (zlib), filters 0-4.
    /// Interlaced, palette, grey and 16-bit images are refused with a message.
    public init(data: Data) throws {
        let bytes = [UInt8](data)
        let signature: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]
        guard bytes.count > 8, Array(bytes[0..<8]) == signature else { throw DecodeError("not a PNG signature") }
        var offset = 8
        var header: (width: Int, height: Int, depth: UInt8, colour: UInt8, interlace: UInt8)?
        var compressed: [UInt8] = []
        func be32(_ at: Int) -> Int {
            Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        }
        chunks: while offset + 12 <= bytes.count {
            let length = be32(offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let start = offset + 8
            guard length >= 0, start + length + 4 <= bytes.count else {
                throw DecodeError("chunk \(type) runs past the end")
            }
            switch type {
            case "IHDR":
                guard length == 13 else { throw DecodeError("IHDR of length \(length)") }
                header = (be32(start), be32(start + 4), bytes[start + 8], bytes[start + 9], bytes[start + 12])
            case "IDAT": compressed += bytes[start..<start + length]
            case "IEND": break chunks
            default: break
            }
            offset = start + length + 4  // skip the CRC
        }
        guard let header else { throw DecodeError("no IHDR chunk") }
        guard header.depth == 8, header.colour == 2 || header.colour == 6 else {
            throw DecodeError("only 8-bit RGB/RGBA is supported (depth \(header.depth), colour type \(header.colour))")
        }
        guard header.interlace == 0 else { throw DecodeError("interlaced PNGs are not supported") }
        guard compressed.count > 2, compressed[0] & 0x0F == 8, (Int(compressed[0]) << 8 | Int(compressed[1])) % 31 == 0
        else { throw DecodeError("the IDAT stream is not zlib/deflate") }
        let raw = try Inflate.inflate(Array(compressed[2...]))
        let channels = header.colour == 6 ? 4 : 3
        let stride = header.width * channels
        guard raw.count >= (stride + 1) * header.height else {
            throw DecodeError("image data is \(raw.count) bytes, expected \((stride + 1) * header.height)")
        }
        var previous = [UInt8](repeating: 0, count: stride)
        var current = [UInt8](repeating: 0, count: stride)
        var rgba = [UInt8](repeating: 255, count: header.width * header.height * 4)
        for y in 0..<header.height {
            let rowStart = y * (stride + 1)
            let filter = raw[rowStart]
            for i in 0..<stride {
                let x = raw[rowStart + 1 + i]
                let a = i >= channels ? current[i - channels] : 0
                let b = previous[i]
                let c = i >= channels ? previous[i - channels] : 0
                switch filter {
                case 0: current[i] = x
                case 1: current[i] = x &+ a
                case 2: current[i] = x &+ b
                case 3: current[i] = x &+ UInt8((Int(a) + Int(b)) / 2)
                case 4: current[i] = x &+ Self.paeth(a, b, c)
                default: throw DecodeError("unknown filter \(filter) on row \(y)")
                }
            }
            for x in 0..<header.width {
                let o = (y * header.width + x) * 4
                for k in 0..<channels { rgba[o + k] = current[x * channels + k] }
            }
            swap(&previous, &current)
        }
        width = header.width
        height = header.height
        self.rgba = rgba
    }

    private static func paeth(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let p = Int(a) + Int(b) - Int(c)
        let pa = abs(p - Int(a)), pb = abs(p - Int(b)), pc = abs(p - Int(c))
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }
}

/// DEFLATE (RFC 1951) decompression: stored, fixed-Huffman and dynamic-Huffman blocks.
public enum Inflate {
    /// Decompresses a raw DEFLATE stream (no zlib header); stops after the final block.
    public static func inflate(_ input: [UInt8]) throws -> [UInt8] {
        var reader = BitReader(bytes: input)
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 4)
        var final = false
        while !final {
            final = try reader.bits(1) == 1
            switch try reader.bits(2) {
            case 0:
                reader.alignToByte()
                let length = try reader.bits(16), complement = try reader.bits(16)
                guard length ^ 0xFFFF == complement else {
                    throw PNGImage.DecodeError("stored block length check failed")
                }
                out += try reader.bytes(length)
            case 1:
                try inflateBlock(&reader, &out, literals: fixedLiterals, distances: fixedDistances)
            case 2:
                let (literals, distances) = try readDynamicTables(&reader)
                try inflateBlock(&reader, &out, literals: literals, distances: distances)
            default:
                throw PNGImage.DecodeError("reserved deflate block type 3")
            }
        }
        return out
    }

    private static let lengthBase: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258
    ]
    private static let lengthExtra: [Int] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0
    ]
    private static let distanceBase: [Int] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
        4097, 6145, 8193, 12289, 16385, 24577
    ]
    private static let distanceExtra: [Int] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13
    ]
    private static let fixedLiterals = Huffman(
        lengths: [Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112) + [Int](repeating: 7, count: 24)
            + [Int](repeating: 8, count: 8))
    private static let fixedDistances = Huffman(lengths: [Int](repeating: 5, count: 30))

    private static func inflateBlock(
        _ reader: inout BitReader, _ out: inout [UInt8], literals: Huffman, distances: Huffman
    ) throws {
        while true {
            let symbol = try literals.decode(&reader)
            if symbol < 256 {
                out.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let index = symbol - 257
                guard index < lengthBase.count else { throw PNGImage.DecodeError("bad length symbol \(symbol)") }
                let length = lengthBase[index] + (try reader.bits(lengthExtra[index]))
                let d = try distances.decode(&reader)
                guard d < distanceBase.count else { throw PNGImage.DecodeError("bad distance symbol \(d)") }
                let distance = distanceBase[d] + (try reader.bits(distanceExtra[d]))
                guard distance <= out.count else { throw PNGImage.DecodeError("distance \(distance) before the start") }
                let from = out.count - distance
                for k in 0..<length { out.append(out[from + k]) }  // may overlap the bytes it writes
            }
        }
    }

    private static func readDynamicTables(_ reader: inout BitReader) throws -> (Huffman, Huffman) {
        let literalCount = try reader.bits(5) + 257
        let distanceCount = try reader.bits(5) + 1
        let codeLengthCount = try reader.bits(4) + 4
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = [Int](repeating: 0, count: 19)
        for i in 0..<codeLengthCount { codeLengths[order[i]] = try reader.bits(3) }
        let codeLengthCode = Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try codeLengthCode.decode(&reader)
            switch symbol {
            case 0...15: lengths.append(symbol)
            case 16:
                guard let last = lengths.last else { throw PNGImage.DecodeError("repeat with no previous length") }
                lengths += [Int](repeating: last, count: 3 + (try reader.bits(2)))
            case 17: lengths += [Int](repeating: 0, count: 3 + (try reader.bits(3)))
            default: lengths += [Int](repeating: 0, count: 11 + (try reader.bits(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw PNGImage.DecodeError("code lengths overrun") }
        return (Huffman(lengths: Array(lengths[0..<literalCount])), Huffman(lengths: Array(lengths[literalCount...])))
    }
}

/// A canonical Huffman code, decoded bit by bit (counts per length, symbols in code order).
private struct Huffman {
    var counts = [Int](repeating: 0, count: 16)
    var symbols: [Int] = []

    init(lengths: [Int]) {
        for length in lengths { counts[length] += 1 }
        counts[0] = 0
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<16 { offsets[length] = offsets[length - 1] + counts[length - 1] }
        symbols = [Int](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
    }

    func decode(_ reader: inout BitReader) throws -> Int {
        var code = 0, first = 0, index = 0
        for length in 1..<16 {
            code |= try reader.bits(1)
            let count = counts[length]
            if code - first < count { return symbols[index + code - first] }
            index += count
            first = (first + count) << 1
            code <<= 1
        }
        throw PNGImage.DecodeError("invalid Huffman code")
    }
}

/// Reads DEFLATE's bit order: least significant bit of each byte first.
private struct BitReader {
    let bytes: [UInt8]
    var position = 0
    var bitBuffer = 0
    var bitCount = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func bits(_ n: Int) throws -> Int {
        while bitCount < n {
            guard position < bytes.count else { throw PNGImage.DecodeError("deflate stream ends early") }
            bitBuffer |= Int(bytes[position]) << bitCount
            position += 1
            bitCount += 8
        }
        let value = bitBuffer & ((1 << n) - 1)
        bitBuffer >>= n
        bitCount -= n
        return value
    }

    mutating func alignToByte() {
        bitBuffer = 0
        bitCount = 0
    }

    mutating func bytes(_ n: Int) throws -> [UInt8] {
        guard position + n <= bytes.count else { throw PNGImage.DecodeError("stored block runs past the end") }
        defer { position += n }
        return Array(bytes[position..<position + n])
    }
}
