import WxCore

// `storeAll` on both engines: many responses in the one transaction the engine holds, made a chunk
// at a time just before they are stored (memory stays flat), each chunk's analysis hours kept once
// over their spans (AnalysisHours), so the same writes in the same order add the same bits to the
// sums on every engine. An engine waiting on a server makes the next chunk meanwhile on a thread
// of its own (PostgreSQL); one whose writes use this process's CPU makes it after (SQLite).

/// An engine whose `storeAll` is the shared loop (`storeBatch`), inside the transaction it holds.
package protocol ResponseBatchStorer: AnyObject {
    /// Who keeps the sums of the write running now.
    var sumsKeeping: SumsKeeping { get }
    /// Stores one response inside the transaction (and lock) the caller holds.
    func storeInTransaction(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws
        -> [StoreOutcome]
    /// Runs `write` keeping the sums of the pairs of `span`'s observations current.
    func keepingSpanSums(_ span: ObservationSpan, _ write: () throws -> Void) throws
    /// Runs `write` with its sums kept as `scope` says.
    func keepingScope(_ scope: SumsKeeping, _ write: () throws -> Void) throws
}

extension ResponseBatchStorer {
    /// The responses `make` builds from `items`, stored `chunk` at a time; with `makeAhead` the next
    /// chunk is made on another thread while this one is stored. `make` is called in the items'
    /// order, one call at a time; an error of the store is the one thrown even when making the next
    /// chunk failed too (it would have stopped before that chunk was made).
    package func storeBatch<Item>(
        _ items: [Item], for location: Location, chunk: Int, makeAhead: Bool,
        make: (Item) throws -> (response: ForecastResponse, fetch: FetchRecord),
        stored: (Item, [StoreOutcome]) -> Void
    ) throws -> [StoreOutcome] {
        var outcomes: [StoreOutcome] = []
        try withoutActuallyEscaping(make) { make in
            let chunks = stride(from: items.startIndex, to: items.endIndex, by: chunk).map {
                $0..<min($0 + chunk, items.endIndex)
            }
            guard let first = chunks.first else { return }
            let makeChunk = { (range: Range<Int>) in
                try items[range].map { item in (item: item, made: try make(item)) }
            }
            var made = try makeChunk(first)
            for index in chunks.indices {
                let next = index + 1 < chunks.count ? chunks[index + 1] : nil
                let ahead = makeAhead ? next.map { range in AheadOfTime { try makeChunk(range) } } : nil
                do {
                    try storeChunk(made, for: location, stored: stored, into: &outcomes)
                } catch {
                    _ = ahead?.result()
                    throw error
                }
                if let ahead {
                    made = try ahead.result().get()
                } else if let next {
                    made = try makeChunk(next)
                }
            }
        }
        return outcomes
    }

    /// One chunk of `storeBatch`.
    private func storeChunk<Item>(
        _ made: [(item: Item, made: (response: ForecastResponse, fetch: FetchRecord))], for location: Location,
        stored: (Item, [StoreOutcome]) -> Void, into outcomes: inout [StoreOutcome]
    ) throws {
        func storeEach() throws {
            for (item, (response, fetch)) in made {
                let these = try storeInTransaction(response, for: location, fetch: fetch)
                stored(item, these)
                outcomes += these
            }
        }
        let kept = AnalysisHours.spans(of: made.map { $0.made }, location: location.id)
        guard case .eachWrite = sumsKeeping, made.count > 1, !kept.isEmpty else { return try storeEach() }
        func keep(_ index: Int) throws {
            guard index < kept.count else { return try keepingScope(.enclosingWriteKeeps(kept), storeEach) }
            try keepingSpanSums(kept[index]) { try keep(index + 1) }
        }
        try keep(0)
    }
}

/// Work started on a thread of its own now, its result taken later with `result()` (which waits
/// for it). Used only by `storeBatch` for its `make`, which it calls one at a time: the closure is
/// not `Sendable`, so the caller keeps it from running alongside anything it touches.
private final class AheadOfTime<T> {
    private let body: () throws -> T
    private var outcome: Result<T, Error>?
    private var thread: PosixThread?

    init(_ body: @escaping () throws -> T) {
        self.body = body
        // Only the thread writes `outcome` until `result()` has joined it.
        thread = PosixThread.start { [self] in outcome = Result { try body() } }
    }

    /// Waits for the work (runs it here when no thread could be started); call once.
    func result() -> Result<T, Error> {
        if let thread = thread.take() { thread.join() }
        if let outcome { return outcome }
        let here = Result { try body() }
        outcome = here
        return here
    }
}
