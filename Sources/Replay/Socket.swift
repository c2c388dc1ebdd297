// Minimal POSIX socket helpers for the replay server. Kept separate from the routing so the
// server logic reads as "request in, response out" and the platform differences live here.
// Foundation: Data and the C socket calls it re-exports, like the rest of the test server (not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A socket call failed; carries the call name and errno so test failures say what broke.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let code: Int32
    public var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

enum Socket {
    #if canImport(Glibc)
        static let streamType = Int32(SOCK_STREAM.rawValue)
        /// Linux has no SO_NOSIGPIPE; MSG_NOSIGNAL on every send keeps a closed peer from killing us.
        static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
        static let streamType = SOCK_STREAM
        static let sendFlags: Int32 = 0
    #endif

    /// Binds 127.0.0.1:`port` (0 = any free port) and listens. Returns the fd and the real port.
    static func listenLoopback(port: Int) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))

        var addr = sockaddr_in()
        #if canImport(Darwin)
            addr.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let e = errno
            close(fd)
            throw SocketError(call: "bind", code: e)
        }
        guard listen(fd, 128) == 0 else {
            let e = errno
            close(fd)
            throw SocketError(call: "listen", code: e)
        }
        var actual = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return (fd, Int(UInt16(bigEndian: actual.sin_port)))
    }

    /// Prepares an accepted connection: no SIGPIPE on Darwin and a read timeout so a client that
    /// connects and never sends a request cannot pin a thread forever.
    static func configureAccepted(_ fd: Int32) {
        #if canImport(Darwin)
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads until the end of the request head ("\r\n\r\n"). Bodies are ignored: the replay
    /// server only answers GETs. Returns nil if the peer closed or timed out before that.
    static func readRequestHead(_ fd: Int32, limit: Int = 64 * 1024) -> String? {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = [13, 10, 13, 10]
        while buffer.count < limit {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
            if buffer.count >= 4, let _ = findSubsequence(buffer, terminator) { break }
        }
        return String(decoding: buffer, as: UTF8.self)
    }

    private static func findSubsequence(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }

    /// Writes all bytes; false if the peer went away (EPIPE/ECONNRESET are expected in fault tests).
    @discardableResult
    static func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            guard var p = raw.baseAddress else { return true }
            var left = raw.count
            while left > 0 {
                let n = send(fd, p, left, sendFlags)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                left -= n
                p = p.advanced(by: n)
            }
            return true
        }
    }

    /// Closes with SO_LINGER 0 so the kernel sends RST instead of FIN: the client sees
    /// "connection reset by peer", the same as a crashed proxy.
    static func resetAndClose(_ fd: Int32) {
        var lin = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }
}
