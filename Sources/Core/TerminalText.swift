/// Text from outside wxdb (a station file's statistic ids and units, a server's error reason)
/// made safe to print or store: a control character could move the cursor, retitle the terminal
/// or hide what follows, and a bidirectional override could make a line read other than it is.
extension String {
    /// This text with every control character escaped as `\x1B` (C0, DEL and C1) and every
    /// bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069) as `\u{202E}`;
    /// a line feed and a tab stay when `keepingLines` (a message of several lines).
    public func escapingControls(keepingLines: Bool = false) -> String {
        guard unicodeScalars.contains(where: { Self.needsEscape($0, keepingLines: keepingLines) }) else { return self }
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            guard Self.needsEscape(scalar, keepingLines: keepingLines) else {
                out.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let text = scalar.value <= 0xFF ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u{\(hex)}"
            out.append(contentsOf: text.unicodeScalars)
        }
        return String(out)
    }

    static func needsEscape(_ scalar: Unicode.Scalar, keepingLines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return !keepingLines
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
