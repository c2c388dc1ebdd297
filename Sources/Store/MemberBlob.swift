import CZlib

/// A damaged ensemble member blob: said plainly instead of reading as wrong numbers or crashing.
public struct MemberBlobError: Error, CustomStringConvertible, Equatable {
    public let description: String
}

/// How ensemble members are kept in `ensemble_values.members` (issue 31: ≤ 4 bytes a value on disk).
///
/// Two formats, told apart by length, so blobs stored before this one still read without a migration:
/// - raw: ``MemberEncoding``'s hour-major little-endian binary32, exactly hours × members × 4 bytes;
/// - packed: the tag byte ``packedTag``, then those bytes byte-shuffled (every value's first byte, then every
///   second byte, …) and deflated (zlib format, so its Adler-32 catches damage). Shuffling puts the sign,
///   exponent and high mantissa bytes, which neighbouring values share, side by side where deflate finds them.
///   A packed blob is always shorter than the raw one (else the raw bytes are stored), so lengths never clash.
public enum MemberBlob {
    /// The first byte of a packed blob (format 1: shuffled, deflated).
    public static let packedTag: UInt8 = 0x01

    /// The bytes to store for ``MemberEncoding``'s `raw` bytes: packed when zlib is there and it is shorter.
    public static func pack(_ raw: [UInt8]) -> [UInt8] {
        guard raw.count >= 8, raw.count % 4 == 0, wxdb_zlib_available() != 0 else { return raw }
        let count = raw.count / 4
        var shuffled = [UInt8](repeating: 0, count: raw.count)
        for i in 0..<count {
            for plane in 0..<4 { shuffled[plane * count + i] = raw[i * 4 + plane] }
        }
        let bound = Int(wxdb_compress_bound(UInt(raw.count)))
        guard bound > 0 else { return raw }
        var out = [UInt8](repeating: 0, count: bound + 1)
        out[0] = packedTag
        var length = UInt(bound)
        let status = out.withUnsafeMutableBufferPointer { buffer in
            shuffled.withUnsafeBufferPointer { source in
                wxdb_compress(buffer.baseAddress! + 1, &length, source.baseAddress!, UInt(source.count), 6)
            }
        }
        guard status == Z_OK, Int(length) + 1 < raw.count else { return raw }
        return Array(out[0..<(Int(length) + 1)])
    }

    /// The hour-major values (`values[hour * members + member]`) of a stored blob, either format.
    public static func values(_ blob: [UInt8], hours: Int, members: Int) throws -> [Float] {
        let size = hours * members * 4
        guard hours > 0, members > 0 else { throw damaged("its run has \(hours) hours and \(members) members") }
        let raw: [UInt8]
        if blob.count == size {
            raw = blob
        } else if blob.count > size || blob.first != packedTag || blob.count < 2 {
            throw damaged("it is \(blob.count) bytes, neither \(size) (raw) nor a packed blob")
        } else {
            guard wxdb_zlib_available() != 0 else {
                throw MemberBlobError(
                    description:
                        "zlib (libz.so.1) is not installed, and the ensemble members are stored compressed; install it (sudo apt-get install zlib1g)"
                )
            }
            var shuffled = [UInt8](repeating: 0, count: size)
            var produced = UInt(size)
            var used = UInt(blob.count - 1)
            let status = shuffled.withUnsafeMutableBufferPointer { out in
                blob.withUnsafeBufferPointer { source in
                    wxdb_uncompress(out.baseAddress!, &produced, source.baseAddress! + 1, &used)
                }
            }
            guard status == Z_OK else {
                throw damaged(
                    status == Z_BUF_ERROR
                        ? "it is truncated or unpacks to more than \(size) bytes" : "zlib status \(status)")
            }
            guard Int(produced) == size, Int(used) == blob.count - 1 else {
                throw damaged("it unpacks to \(produced) of \(size) bytes with \(blob.count - 1 - Int(used)) left over")
            }
            let count = size / 4
            var unshuffled = [UInt8](repeating: 0, count: size)
            for i in 0..<count {
                for plane in 0..<4 { unshuffled[i * 4 + plane] = shuffled[plane * count + i] }
            }
            raw = unshuffled
        }
        return (0..<(hours * members)).map { i in
            let b = i * 4
            return Float(
                bitPattern: UInt32(raw[b]) | UInt32(raw[b + 1]) << 8 | UInt32(raw[b + 2]) << 16 | UInt32(raw[b + 3])
                    << 24)
        }
    }

    /// `[hour][member]` of a stored blob, either format.
    public static func decode(_ blob: [UInt8], hours: Int, members: Int) throws -> [[Float]] {
        let flat = try values(blob, hours: hours, members: members)
        return (0..<hours).map { Array(flat[($0 * members)..<(($0 + 1) * members)]) }
    }

    static func damaged(_ why: String) -> MemberBlobError {
        MemberBlobError(
            description:
                "an ensemble member blob is damaged (\(why)); restore the database from a backup (run 'wxdb doctor' to check the rest of it)"
        )
    }
}
