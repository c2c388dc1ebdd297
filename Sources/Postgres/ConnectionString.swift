// What `--db` names, and the form of it that may be shown. A PostgreSQL connection string can
// carry a password (`postgres://user:secret@host/db`, `password=secret`); it is removed from
// every text wxdb prints or stores, so the docs say to keep passwords in a passfile
// (~/.pgpass, PGPASSFILE) or a service file (~/.pg_service.conf, PGSERVICEFILE) instead.
// Nothing here needs libpq: choosing the engine and redacting happen before any connection.

/// Which engine a `--db` value (or `WXDB_DB`) selects.
public enum DatabaseTarget: Sendable, Equatable {
    /// A SQLite file: anything that is not a PostgreSQL connection string.
    case sqlite(path: String)
    /// A libpq connection string: a `postgres://` / `postgresql://` URI or `keyword=value` pairs.
    case postgres(conninfo: String)

    /// The engine `text` names: a URI with a PostgreSQL scheme, or `keyword=value` text whose
    /// first keyword is one libpq knows (`service=wx`, `host=… dbname=…`); anything else is a path.
    public init(_ text: String) {
        self = ConnectionString.isPostgres(text) ? .postgres(conninfo: text) : .sqlite(path: text)
    }

    /// How the target may be shown: the path, or the connection string without its password.
    public var displayName: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let conninfo): return ConnectionString.redacted(conninfo)
        }
    }
}

/// Parsing and redacting libpq connection strings (URI and `keyword=value` forms).
public enum ConnectionString {
    /// What replaces a password wherever one would be shown.
    public static let mask = "[password]"

    /// libpq's connection keywords (PostgreSQL 15, `PQconndefaults`): the first word of a
    /// `keyword=value` string must be one of them for the text to be taken as one.
    static let keywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "channel_binding",
        "connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name",
        "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
        "replication", "gssencmode", "sslmode", "requiressl", "sslcompression", "sslcert", "sslkey",
        "sslpassword", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
        "ssl_max_protocol_version", "krbsrvname", "gsslib", "service", "target_session_attrs"
    ]

    /// Keywords whose value is a secret.
    static let secretKeywords: Set<String> = ["password", "sslpassword"]

    /// Whether `text` is a PostgreSQL connection string rather than a SQLite path.
    public static func isPostgres(_ text: String) -> Bool {
        let lower = text.lowercased()
        if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") { return true }
        guard let pairs = keywordPairs(text), let first = pairs.first else { return false }
        return keywords.contains(first.key.lowercased())
    }

    /// `conninfo` without any password: a URI loses the `:password` of its user part and any
    /// `password=` / `sslpassword=` query item; `keyword=value` text loses those pairs.
    public static func redacted(_ conninfo: String) -> String {
        let lower = conninfo.lowercased()
        if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") { return redactedURI(conninfo) }
        guard let pairs = keywordPairs(conninfo) else { return conninfo }
        return
            pairs
            .filter { !secretKeywords.contains($0.key.lowercased()) }
            .map { "\($0.key)=\(quoted($0.value))" }
            .joined(separator: " ")
    }

    /// The passwords `conninfo` carries, as written and as percent-decoded, for scrubbing texts
    /// (a server's or libpq's message) that might quote them.
    public static func secrets(in conninfo: String) -> [String] {
        var found: [String] = []
        let lower = conninfo.lowercased()
        if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") {
            let parts = uriParts(conninfo)
            if let password = parts.password { found.append(password) }
            for item in parts.query where secretKeywords.contains(item.key.lowercased()) { found.append(item.value) }
        } else if let pairs = keywordPairs(conninfo) {
            for pair in pairs where secretKeywords.contains(pair.key.lowercased()) { found.append(pair.value) }
        }
        var all: [String] = []
        for secret in found where !secret.isEmpty {
            all.append(secret)
            if let decoded = percentDecoded(secret), decoded != secret, !decoded.isEmpty { all.append(decoded) }
        }
        return all
    }

    /// `text` with every password of `conninfo` replaced by the mask, and `conninfo` itself
    /// (if quoted whole) replaced by its redacted form.
    public static func scrub(_ text: String, conninfo: String) -> String {
        guard !conninfo.isEmpty else { return text }
        var out = text.replacing(conninfo, with: redacted(conninfo))
        for secret in secrets(in: conninfo).sorted(by: { $0.count > $1.count }) {
            out = out.replacing(secret, with: mask)
        }
        return out
    }

    // MARK: URI form

    struct URIParts {
        var scheme = ""
        var user: String?
        var password: String?
        var rest = ""  // host part, path and query, as written
        var query: [(key: String, value: String)] = []
    }

    static func uriParts(_ uri: String) -> URIParts {
        var parts = URIParts()
        guard let schemeEnd = uri.firstRange(of: "://") else { return parts }
        parts.scheme = String(uri[..<schemeEnd.lowerBound])
        let afterScheme = uri[schemeEnd.upperBound...]
        // The authority ends at the first '/' or '?'; the user part is what precedes its last '@'.
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        var hostStart = authority.startIndex
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                parts.user = String(userInfo[..<colon])
                parts.password = String(userInfo[userInfo.index(after: colon)...])
            } else {
                parts.user = String(userInfo)
            }
            hostStart = authority.index(after: at)
        }
        parts.rest = String(afterScheme[hostStart...])
        if let question = parts.rest.firstIndex(of: "?") {
            for item in parts.rest[parts.rest.index(after: question)...].split(separator: "&") {
                if let equals = item.firstIndex(of: "=") {
                    parts.query.append((String(item[..<equals]), String(item[item.index(after: equals)...])))
                } else {
                    parts.query.append((String(item), ""))
                }
            }
        }
        return parts
    }

    static func redactedURI(_ uri: String) -> String {
        let parts = uriParts(uri)
        guard !parts.scheme.isEmpty else { return uri }
        var out = parts.scheme + "://"
        if let user = parts.user { out += user + "@" }
        var rest = parts.rest
        if let question = rest.firstIndex(of: "?") {
            let kept = parts.query.filter { !secretKeywords.contains($0.key.lowercased()) }
            rest = String(rest[..<question])
            if !kept.isEmpty { rest += "?" + kept.map { "\($0.key)=\($0.value)" }.joined(separator: "&") }
        }
        return out + rest
    }

    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    // MARK: keyword=value form

    /// The pairs of a `keyword = value` string as libpq reads it (values bare or single-quoted,
    /// with `\'` and `\\` escapes), or nil when it is not one.
    static func keywordPairs(_ text: String) -> [(key: String, value: String)]? {
        let chars = Array(text)
        var i = 0
        var pairs: [(key: String, value: String)] = []
        func skipSpaces() { while i < chars.count, chars[i].isWhitespace { i += 1 } }
        skipSpaces()
        guard i < chars.count else { return nil }
        while i < chars.count {
            var key = ""
            while i < chars.count, chars[i] != "=", !chars[i].isWhitespace {
                key.append(chars[i])
                i += 1
            }
            skipSpaces()
            guard !key.isEmpty, i < chars.count, chars[i] == "=" else { return nil }
            i += 1
            skipSpaces()
            var value = ""
            if i < chars.count, chars[i] == "'" {
                i += 1
                var closed = false
                while i < chars.count {
                    if chars[i] == "\\", i + 1 < chars.count {
                        value.append(chars[i + 1])
                        i += 2
                    } else if chars[i] == "'" {
                        i += 1
                        closed = true
                        break
                    } else {
                        value.append(chars[i])
                        i += 1
                    }
                }
                guard closed else { return nil }
            } else {
                while i < chars.count, !chars[i].isWhitespace {
                    if chars[i] == "\\", i + 1 < chars.count {
                        value.append(chars[i + 1])
                        i += 2
                    } else {
                        value.append(chars[i])
                        i += 1
                    }
                }
            }
            pairs.append((key, value))
            skipSpaces()
        }
        return pairs
    }

    /// A value as libpq reads it back: bare when it has no space, quote or backslash.
    static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && !value.contains(where: { $0.isWhitespace || $0 == "'" || $0 == "\\" })
        if plain { return value }
        var out = "'"
        for char in value {
            if char == "'" || char == "\\" { out.append("\\") }
            out.append(char)
        }
        return out + "'"
    }
}
