// The few string and path helpers wxdb took from Foundation's NSString and CharacterSet, which
// FoundationEssentials does not have.

/// What `trimmed` removes from both ends.
public enum TrimmedSet: Sendable {
    /// Spaces and tabs.
    case whitespaces
    /// Spaces, tabs and line breaks.
    case whitespacesAndNewlines
}

extension StringProtocol {
    /// The text without leading and trailing whitespace (Unicode's, and line breaks when asked).
    public func trimmed(_ set: TrimmedSet = .whitespacesAndNewlines) -> String {
        let drop: (Character) -> Bool =
            switch set {
            case .whitespaces: { $0.isWhitespace && !$0.isNewline }
            case .whitespacesAndNewlines: { $0.isWhitespace }
            }
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

/// Path text as NSString handled it: `/`-separated, no file system access.
public enum PathText {
    /// The folder part: `/a/b.txt` → `/a`, `/a/b/` → `/a`, `b.txt` → ``, `/` → `/`.
    public static func folder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        var folder = trimmed[..<slash]
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return String(folder)
    }

    /// `component` appended with one `/` between: `a` + `b` → `a/b`, `a/` + `b` → `a/b`, `` + `b` → `b`.
    public static func join(_ folder: String, _ component: String) -> String {
        if folder.isEmpty { return component }
        if component.isEmpty { return folder }
        return (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) + "/"
            + (component.hasPrefix("/") ? String(component.dropFirst()) : component)
    }

    /// An absolute path without `.`, `..` and repeated `/`: `/a/./b/../c//d` → `/a/c/d`.
    public static func standardized(_ path: String) -> String {
        guard path.hasPrefix("/") else { return path }
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}
