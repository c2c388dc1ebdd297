// The replay server's connections: the accept loop, a thread per connection, and one request
// served at a time on each (a plain answer, or the fault queued for its path).
// Foundation: Thread and DispatchSemaphore run its connections (a test server, not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ReplayServer {
    // MARK: Lifecycle

    /// Binds 127.0.0.1 (`port` 0 = any free port) and starts accepting on a background thread.
    public func start(port requested: Int = 0) throws {
        let (fd, port) = try Socket.listenLoopback(port: requested)
        let done = DispatchSemaphore(value: 0)
        lock.withLock {
            listenFD = fd
            boundPort = port
            acceptDone = done
        }
        let thread = Thread { [weak self] in
            // A thread per connection: the suite's concurrency is tiny, and a blocked fault
            // (delay, trickle) must not hold up other requests.
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break  // shutdown() by stop(), or the fd is gone
                }
                guard let server = self else {
                    close(client)
                    break
                }
                Socket.configureAccepted(client)
                let worker = Thread { server.handle(client) }
                worker.stackSize = 1 << 20
                worker.start()
            }
            close(fd)
            done.signal()
        }
        thread.name = "ReplayServer.accept"
        thread.start()
    }

    /// Stops accepting. Connections already being served finish on their own.
    public func stop() {
        let (fd, done) = lock.withLock { () -> (Int32, DispatchSemaphore?) in
            let r = (listenFD, acceptDone)
            listenFD = -1
            acceptDone = nil
            return r
        }
        guard fd >= 0 else { return }
        // Under the lock a connection is removed under before it is closed: an fd number that
        // was closed and reused meanwhile is never shut down.
        lock.withLock { for client in clients { shutdown(client, Int32(SHUT_RD)) } }
        // shutdown() wakes the thread blocked in accept(); that thread closes the fd, so the fd
        // number cannot be reused under it.
        shutdown(fd, Int32(SHUT_RDWR))
        _ = done?.wait(timeout: .now() + 2)
    }

    // MARK: Connection handling

    /// Serves a connection's requests until one asks to close, a fault ends it, or the client
    /// goes quiet. Persistent like Open-Meteo's own servers: a client that opened a new connection
    /// for every request would measure connection set-up, not the fetcher (and FoundationNetworking
    /// on Linux keeps polling a new connection for writability until its first answer arrives).
    func handle(_ fd: Int32) {
        lock.withLock { _ = clients.insert(fd) }
        var next = Next.keepOpen
        while next == .keepOpen { next = serve(fd) }
        lock.withLock { _ = clients.remove(fd) }
        if next == .reset {
            Socket.resetAndClose(fd)
            return
        }
        // Orderly close: FIN after the last byte, so the client sees the whole response.
        shutdown(fd, Int32(SHUT_WR))
        close(fd)
    }

    /// Answers one request.
    func serve(_ fd: Int32) -> Next {
        guard let head = Socket.readRequestHead(fd) else { return .close }
        let requestLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count >= 2 else {
            write(fd, Response(status: 400, body: Self.errorBody("Malformed request line")))
            return .close
        }
        let method = String(parts[0])
        let target = String(parts[1])
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")

        if path.hasPrefix("/_control/") {
            write(fd, control(path: path, target: target))
            return .close
        }
        // A ranged request is logged with its range, so a test can tell a resumed download.
        let range = Self.rangeStart(head)
        lock.withLock { log.append(target + (range.map { " Range: bytes=\($0)-" } ?? "")) }

        guard method == "GET" || method == "HEAD" else {
            write(fd, Response(status: 405, body: Self.errorBody("Method not allowed")))
            return .close
        }

        guard let fault = nextFault(for: path) else {
            let keep = !head.lowercased().contains("\r\nconnection: close")
            write(fd, Self.ranged(route(path: path, target: target), from: range), keepAlive: keep)
            return keep ? .keepOpen : .close
        }
        return answer(fd, with: fault, path: path, target: target, range: range)
    }
}
