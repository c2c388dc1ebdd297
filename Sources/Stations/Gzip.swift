import CZlib
import FoundationEssentials

/// gzip files (ISD-Lite's `.gz` station-years, Meteostat's `.csv.gz`) through the system zlib.
public enum Gzip {
    /// Whether `data` starts with gzip's magic bytes.
    public static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b
    }

    /// The decompressed bytes of every gzip member in `data`; a damaged or cut-off file throws
    /// (a truncated download must not import as a shorter year).
    public static func decompress(_ data: Data) throws -> Data {
        guard wxdb_zlib_available() != 0 else {
            throw StationFormatError(
                "zlib (libz.so.1) is not installed, and this file is gzip; install it (sudo apt-get install zlib1g) or unpack the file first (gunzip); nothing was stored"
            )
        }
        var stream = z_stream()
        guard wxdb_inflate_init_gzip(&stream) == Z_OK else {
            throw StationFormatError("zlib could not start decompressing; nothing was stored")
        }
        defer { wxdb_inflate_end(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var input = [UInt8](data)
        let total = input.count
        var finished = false
        try input.withUnsafeMutableBufferPointer { buffer in
            stream.next_in = buffer.baseAddress
            stream.avail_in = UInt32(total)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return wxdb_inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END:
                    // Concatenated members (`cat a.gz b.gz`) are valid gzip; go on with the next.
                    if stream.avail_in == 0 {
                        finished = true
                        return
                    }
                    wxdb_inflate_reset(&stream)
                case Z_OK:
                    if stream.avail_in == 0 && produced == 0 { return }
                case Z_BUF_ERROR:
                    return
                default:
                    let reason = stream.msg.map { String(cString: $0) } ?? "status \(status)"
                    throw StationFormatError("the gzip data is damaged (\(reason)); download the file again")
                }
            }
        }
        guard finished else {
            throw StationFormatError(
                "the gzip file is truncated (it ends before its last block); download it again")
        }
        return output
    }
}
