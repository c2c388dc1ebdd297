// The client searches every answer for the API key (to mask it) and for Open-Meteo's mid-stream
// error text; its byte search must find exactly what Foundation's would.
import Foundation
import Testing

@testable import WxFetcher

@Suite("Byte search in answers")
struct ByteSearchTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let haystack: String
        let needle: String
        let from: Int
        var testDescription: String { "'\(needle)' in '\(haystack)' from \(from)" }
    }

    static let cases: [Case] = [
        .init(haystack: "abc", needle: "abc", from: 0),
        .init(haystack: "xxabc", needle: "abc", from: 0),
        .init(haystack: "abcxx", needle: "abc", from: 0),
        .init(haystack: "aaab", needle: "aab", from: 0),
        .init(haystack: "abab", needle: "ab", from: 1),
        .init(haystack: "abab", needle: "ab", from: 3),
        .init(haystack: "abab", needle: "ab", from: 4),
        .init(haystack: "ab", needle: "abc", from: 0),
        .init(haystack: "", needle: "a", from: 0),
        .init(haystack: "key=s3cr3t&key=s3cr3t", needle: "s3cr3t", from: 5)
    ]

    @Test("finds what Data.range(of:) finds, in whole and sliced Data", arguments: cases)
    func agreesWithFoundation(_ c: Case) {
        let needle = Data(c.needle.utf8)
        // A slice whose indices do not start at 0, as a body cut from a larger buffer has.
        let padded = Data(("---" + c.haystack).utf8)
        for haystack in [Data(c.haystack.utf8), padded[(padded.startIndex + 3)...]] {
            let from = haystack.startIndex + c.from
            let expected = haystack.range(of: needle, in: from..<haystack.endIndex)
            #expect(HTTPClient.firstRange(of: needle, in: haystack, from: from) == expected)
        }
    }

    @Test("every copy of the key is masked, not only the first")
    func masksEveryCopy() {
        let body = Data(#"{"reason":"bad key s3cr3t","url":"?apikey=s3cr3t"}"#.utf8)
        let masked = String(decoding: HTTPClient.removing("s3cr3t", from: body), as: UTF8.self)
        #expect(masked == #"{"reason":"bad key [API key]","url":"?apikey=[API key]"}"#)
    }
}
