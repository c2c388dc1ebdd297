// printf-style number text without Foundation's String(printf:), which FoundationEssentials lacks.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension String {
    /// C's `snprintf(format, arguments…)`: numbers only (`%.1f`, `%.15g`, `%d`), no `%@`.
    public init(printf format: String, _ arguments: CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 64)
        while true {
            let needed = buffer.withUnsafeMutableBufferPointer { out in
                withVaList(arguments) { vsnprintf(out.baseAddress, out.count, format, $0) }
            }
            if needed < 0 {
                self = ""
                return
            }
            if Int(needed) < buffer.count {
                self = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                return
            }
            buffer = [CChar](repeating: 0, count: Int(needed) + 1)
        }
    }
}
