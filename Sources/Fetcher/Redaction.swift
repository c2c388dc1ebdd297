// Keeping the API key out of everything wxdb shows or stores: URLs lose their `apikey` item, and
// texts and bodies a server sent lose the key itself (servers quote it back: "Invalid key …").
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension HTTPClient {
    /// The value of the URL's `apikey` query item, if any: the text to scrub from server answers.
    static func apiKey(in url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name.lowercased() == "apikey" }?.value.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The forms a key takes in what a server sends back: as sent, and percent-encoded.
    static func forms(of secret: String) -> [String] {
        var encoded = ""
        for byte in secret.utf8 {
            if (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = Array("0123456789ABCDEF".utf8)
                encoded += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return encoded == secret ? [secret] : [secret, encoded]
    }

    /// `text` with every occurrence of `secret` (as sent and percent-encoded) and any `apikey=…`
    /// removed: for texts that came from a server, which may quote the key back.
    public static func scrub(_ text: String, secret: String?) -> String {
        var out = scrub(text)
        guard let secret, !secret.isEmpty else { return out }
        for form in forms(of: secret) { out = out.replacing(form, with: "[API key]") }
        return out
    }

    /// `body` with every occurrence of `secret` (as sent and percent-encoded) replaced by
    /// `[API key]`; the same bytes when it holds none (the usual case costs one search).
    static func removing(_ secret: String?, from body: Data) -> Data {
        guard let secret, !secret.isEmpty else { return body }
        var out = body
        let mask = Data("[API key]".utf8)
        for form in forms(of: secret).map({ Data($0.utf8) }) {
            var searchFrom = out.startIndex
            while let range = firstRange(of: form, in: out, from: searchFrom) {
                out.replaceSubrange(range, with: mask)
                searchFrom = range.lowerBound + mask.count
            }
        }
        return out
    }

    /// Removes every `apikey` query item (any case) so the key never lands in logs or errors.
    public static func redacted(_ url: URL) -> String {
        guard var comps = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return scrub(url.absoluteString)
        }
        if let items = comps.percentEncodedQueryItems {
            let kept = items.filter { $0.name.lowercased() != "apikey" }
            comps.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        }
        return comps.string ?? scrub(url.absoluteString)
    }

    /// Removes `apikey=…` (any case, with the `?` or `&` before it) up to the next `&`, space,
    /// quote or angle bracket, from free text that may quote a URL.
    static func scrub(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let key = Array("apikey=".utf8)
        let stops: Set<UInt8> = [UInt8(ascii: "&"), 0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C, 0x22, 0x27, 0x3C, 0x3E]
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let matches =
                i + key.count <= bytes.count
                && zip(bytes[i..<i + key.count], key).allSatisfy { $0 | 0x20 == $1 | 0x20 && ($1 != 0x3D || $0 == $1) }
            guard matches else {
                out.append(bytes[i])
                i += 1
                continue
            }
            if let last = out.last, last == UInt8(ascii: "?") || last == UInt8(ascii: "&") { out.removeLast() }
            i += key.count
            while i < bytes.count, !stops.contains(bytes[i]) { i += 1 }
        }
        return out.count == bytes.count ? text : String(decoding: out, as: UTF8.self)
    }

    /// Where `needle` first occurs in `haystack` at or after `start`. memchr and memcmp, not `Data.range(of:)`:
    /// corelibs Foundation's search is byte by byte through NSData, and every answer (megabytes
    /// for a batch of 100 locations) is searched twice.
    static func firstRange(of needle: Data, in haystack: Data, from start: Data.Index? = nil) -> Range<Data.Index>? {
        let start = start ?? haystack.startIndex
        guard !needle.isEmpty, start <= haystack.endIndex else { return nil }
        return haystack.withUnsafeBytes { (all: UnsafeRawBufferPointer) -> Range<Data.Index>? in
            needle.withUnsafeBytes { (sought: UnsafeRawBufferPointer) -> Range<Data.Index>? in
                guard let base = all.baseAddress, let key = sought.baseAddress else { return nil }
                let first = Int32(sought[0])
                var offset = start - haystack.startIndex
                while all.count - offset >= sought.count,
                    let hit = memchr(base + offset, first, all.count - offset - sought.count + 1)
                {
                    offset = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(hit, key, sought.count) == 0 {
                        return haystack.startIndex + offset..<haystack.startIndex + offset + sought.count
                    }
                    offset += 1
                }
                return nil
            }
        }
    }
}
