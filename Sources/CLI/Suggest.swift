/// "Did you mean ...?" for mistyped commands, options, variables and location names, as git does.
enum Suggest {
    /// The closest candidate: the same word in another case, one that starts with the word, or one
    /// within a few edits (about a third of the word's length); nil when nothing is close.
    static func closest(_ word: String, among candidates: [String]) -> String? {
        let lower = word.lowercased()
        if let same = candidates.first(where: { $0.lowercased() == lower }) { return same }
        let budget = max(1, min(3, word.count / 3))
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lower, candidate.lowercased())
            if distance <= budget, best.map({ distance < $0.1 }) ?? true { best = (candidate, distance) }
        }
        if let best { return best.0 }
        let starting = candidates.filter { lower.count >= 3 && $0.lowercased().hasPrefix(lower) }
        return starting.count == 1 ? starting[0] : nil
    }

    /// `; did you mean 'x'?`, or "" when nothing is close.
    static func phrase(_ word: String, among candidates: [String], prefix: String = "") -> String {
        closest(word, among: candidates).map { "; did you mean '\(prefix)\($0)'?" } ?? ""
    }

    /// Optimal string alignment distance (Levenshtein plus swapped neighbours: `qeury` is one edit).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
