// The Store requirements for reads, pairs, kept sums and exports that the PostgreSQL engine does not fill yet.
// NOT BUILT YET on PostgreSQL: each stub below throws `PostgresStoreGap`, a clear `Error:` that names
// the operation, so a command that needs one refuses before writing anything. Each is replaced by
// its implementation (in a file of its own beside this one) as the engine grows; this file goes
// when the last one has.
import WxCore
import WxStore

extension PostgresEngine {
    public func checkSums(repair: Bool) throws -> SumsCheck {
        throw PostgresStoreGap(operation: "checkSums")
    }
}
