// A POSIX thread of wxdb's own, for work kept off Swift's cooperative pool: a blocking libcurl
// transfer (Fetcher/CurlTransport.swift, detached) and the next chunk of an import made while this
// one is stored (Store/ResponseBatches.swift, joined). FoundationEssentials has no Thread, and a
// C thread function can capture nothing, so the closure travels as a retained box.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A started thread, to be joined or detached once; one dropped without either is detached.
public struct PosixThread: ~Copyable {
    private let thread: pthread_t

    private init(_ thread: pthread_t) { self.thread = thread }

    /// Starts `body` on a new joinable thread; nil when none could be started. `body` need not be
    /// `Sendable`: a caller passing one that is not keeps it from running alongside anything it
    /// touches (and reads what it wrote only after `join`).
    public static func start(_ body: @escaping () -> Void) -> PosixThread? {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { raw in
                Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, box)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return nil
        }
        return PosixThread(thread)
    }

    /// Starts `body` on a new thread nobody waits for; false when none could be started.
    public static func startDetached(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard let thread = start(body) else { return false }
        thread.detach()
        return true
    }

    /// Waits for the thread to end: what it wrote is then safe to read.
    public consuming func join() {
        pthread_join(thread, nil)
        discard self
    }

    /// Lets the thread end on its own; its resources go when it does.
    public consuming func detach() {
        pthread_detach(thread)
        discard self
    }

    deinit { pthread_detach(thread) }
}

/// The closure a thread runs (a C thread function takes one pointer and captures nothing).
private final class Body {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
