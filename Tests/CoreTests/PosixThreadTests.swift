import Testing
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the joinable thread wrote, read after `join`.
private final class Written {
    var value = 0
    var onOtherThread = false
}

@Suite("PosixThread: the one thread primitive of the fetcher and the PostgreSQL import")
struct PosixThreadTests {
    @Test("a joined thread ran its closure on a thread of its own, and what it wrote is there after join")
    func joinSeesWrites() {
        let written = Written()
        let caller = pthread_self()
        // #require cannot take a non-copyable value.
        guard
            let thread = PosixThread.start({
                written.value = 42
                written.onOtherThread = pthread_equal(pthread_self(), caller) == 0
            })
        else {
            Issue.record("no thread could be started")
            return
        }
        thread.join()
        #expect(written.value == 42)
        #expect(written.onOtherThread)
    }

    @Test("a detached thread runs its closure")
    func detachedRuns() async {
        let ran = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            if !PosixThread.startDetached({ continuation.resume(returning: true) }) {
                continuation.resume(returning: false)
            }
        }
        #expect(ran)
    }
}
