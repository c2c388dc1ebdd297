// A lock with lock()/unlock() as NSLock had them, for code that cannot put its critical section
// in a closure (FoundationEssentials has no NSLock; Synchronization's Mutex only has withLock).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A non-recursive lock.
public final class PlainLock: @unchecked Sendable {
    private let raw = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() { pthread_mutex_init(raw, nil) }

    deinit {
        pthread_mutex_destroy(raw)
        raw.deallocate()
    }

    public func lock() { pthread_mutex_lock(raw) }
    public func unlock() { pthread_mutex_unlock(raw) }
}
