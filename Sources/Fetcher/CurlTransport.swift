// HTTP over libcurl's easy interface. Each transfer runs `curl_easy_perform` on a thread of its
// own, where libcurl sleeps in poll() until the socket or its timers need it: waiting for a slow
// server costs no CPU (URLSession on Linux polled for writability in a loop, about one CPU-second
// per second of server latency). Finished handles are kept for the next transfer, and with them
// their open connections (keep-alive); libcurl itself sends a request again, once, on a fresh
// connection when a kept-alive one turns out closed before any answer (a server's idle timeout).
//
// Decisions:
// - `CURLOPT_TIMEOUT_MS` is the whole attempt (connect, head and body), not an idle timeout, so a
//   body trickling in slowly is cut off at the deadline like a server that never answers.
// - Redirects are never followed (libcurl's default, kept): the 3xx is handed back as it came.
// - `Accept-Encoding` lists what this libcurl can decode (`CURLOPT_ACCEPT_ENCODING` ""), and the
//   body limit counts the *decoded* bytes in the write callback, as they are decoded: a 2 MB gzip
//   that unpacks to 2 GB stops at the limit, never held whole.
// - Only http and https: a base URL of `file://` or `ftp://` is refused, not fetched.
// - libcurl is opened (dlopen) at the first transfer, not linked: see Sources/CCurl/shim.h.
import CCurl
import FoundationEssentials
import Synchronization
import WxCore

#if canImport(Glibc)
    import Glibc
#endif

/// libcurl as an `HTTPTransport`.
public final class CurlTransport: Sendable {
    /// `curl_global_init` once, before the first handle; not thread-safe itself, hence a static.
    private static let initialized: Bool = wxdb_curl_global_init() == CURLE_OK

    /// Handles whose transfer is done, each with its connection cache, for the next transfer.
    private let idle = Mutex<[EasyHandle]>([])
    /// More handles than this are closed after use: more transfers than this at once are rare.
    private static let maxIdle = 16

    public init() {}

    deinit {
        for handle in idle.withLock({ $0 }) { wxdb_curl_easy_cleanup(handle.pointer) }
    }

    /// This transport as the plain function `HTTPClient` takes.
    public var transport: HTTPTransport { { request in await self.send(request) } }

    /// Sends `request` on a worker thread; cancelling the calling task aborts the transfer.
    public func send(_ request: HTTPRequest) async -> Result<HTTPResponse, FetchError> {
        let transfer = Transfer(request)
        return await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<HTTPResponse, FetchError>, Never>) in
                // A thread of its own: a blocked thread of the cooperative pool would stall other tasks.
                let started = PosixThread.startDetached { continuation.resume(returning: self.perform(transfer)) }
                if !started {
                    continuation.resume(returning: .failure(.transport("could not start a thread for the request")))
                }
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
        }
    }

    private func take() -> UnsafeMutableRawPointer? {
        idle.withLock { $0.popLast()?.pointer } ?? wxdb_curl_easy_init()
    }

    private func giveBack(_ handle: UnsafeMutableRawPointer) {
        // Reset drops every option (and so every pointer into this transfer) but keeps the connections.
        wxdb_curl_easy_reset(handle)
        let kept = idle.withLock { list -> Bool in
            guard list.count < Self.maxIdle else { return false }
            list.append(EasyHandle(pointer: handle))
            return true
        }
        if !kept { wxdb_curl_easy_cleanup(handle) }
    }

    /// One blocking transfer, on the worker thread.
    private func perform(_ transfer: Transfer) -> Result<HTTPResponse, FetchError> {
        guard wxdb_curl_available() != 0 else {
            return .failure(.transport("libcurl is not installed (Debian: apt-get install libcurl4)"))
        }
        guard Self.initialized else { return .failure(.transport("libcurl could not be initialised")) }
        if transfer.cancelled.load(ordering: .relaxed) { return .failure(.transport("the request was cancelled")) }
        guard let handle = take() else { return .failure(.transport("libcurl could not start a transfer")) }
        defer { giveBack(handle) }
        transfer.handle = handle
        let request = transfer.request

        var headerList: UnsafeMutablePointer<curl_slist>?
        for header in request.headers {
            headerList = wxdb_curl_slist_append(headerList, "\(header.name): \(header.value)")
        }
        defer { wxdb_curl_slist_free_all(headerList) }
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        let code = errorText.withUnsafeMutableBufferPointer { errors -> CURLcode in
            withExtendedLifetime(transfer) {
                let context = Unmanaged.passUnretained(transfer).toOpaque()
                // Strings are copied by libcurl; the header list and the error buffer live until perform returns.
                _ = wxdb_curl_set_string(handle, CURLOPT_URL, request.url.absoluteString)
                _ = wxdb_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
                _ = wxdb_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
                _ = wxdb_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
                _ = wxdb_curl_set_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int((request.deadline * 1000).rounded(.up))))
                _ = wxdb_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, "")
                _ = wxdb_curl_set_pointer(handle, CURLOPT_HTTPHEADER, headerList)
                _ = wxdb_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
                _ = wxdb_curl_set_write(handle, CURLOPT_WRITEFUNCTION, curlWriteBody)
                _ = wxdb_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
                _ = wxdb_curl_set_write(handle, CURLOPT_HEADERFUNCTION, curlWriteHeader)
                _ = wxdb_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
                _ = wxdb_curl_set_xferinfo(handle, curlProgress)
                _ = wxdb_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context)
                _ = wxdb_curl_set_long(handle, CURLOPT_NOPROGRESS, 0)
                return wxdb_curl_easy_perform(handle)
            }
        }
        let detail = errorText.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return transfer.outcome(code, detail: detail)
    }
}

/// A `CURL *` handed between threads: only the thread that took it from the pool uses it.
private struct EasyHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// The state of one transfer. The callbacks run on the worker thread only; `cancelled` is the one
/// field another thread writes.
private final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let cancelled = Atomic<Bool>(false)
    var handle: UnsafeMutableRawPointer?
    var headers: [String: String] = [:]
    var body = Data()
    var tooLarge = false
    private var checkedLength = false

    init(_ request: HTTPRequest) { self.request = request }

    /// Body bytes as libcurl decoded them; false stops the transfer.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !checkedLength, let handle {
            checkedLength = true
            // A declared length past the limit is refused before the body is kept.
            var declared: curl_off_t = -1
            if wxdb_curl_info_off(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared) == CURLE_OK,
                declared > Int64(request.maxBodyBytes)
            {
                tooLarge = true
                return false
            }
        }
        guard body.count + bytes.count <= request.maxBodyBytes else {
            tooLarge = true
            return false
        }
        body.append(contentsOf: bytes.bindMemory(to: UInt8.self))
        return true
    }

    /// One header line; a status line starts a new head (after a 100 Continue, say).
    func header(_ bytes: UnsafeRawBufferPointer) {
        var line = Substring(String(decoding: bytes, as: UTF8.self))
        while let last = line.last, last == "\r\n" || last == "\n" || last == "\r" { line.removeLast() }
        if line.hasPrefix("HTTP/") {
            headers = [:]
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
        // Repeated headers are joined, as URLSession did.
        headers[name] = headers[name].map { $0 + ", " + value } ?? value
    }

    func outcome(_ code: CURLcode, detail: String) -> Result<HTTPResponse, FetchError> {
        switch code {
        case CURLE_OK:
            var status = 0
            _ = wxdb_curl_info_long(handle, CURLINFO_RESPONSE_CODE, &status)
            var shown = headers
            // A Content-Length counts the encoded bytes, the body holds the decoded ones; libcurl
            // itself fails a transfer that ends short of it (CURLE_PARTIAL_FILE).
            if let encoding = shown["content-encoding"], encoding.lowercased() != "identity" {
                shown["content-length"] = nil
            }
            return .success(
                HTTPResponse(status: status, headers: shown, body: body, url: HTTPClient.redacted(request.url)))
        case CURLE_WRITE_ERROR where tooLarge:
            return .failure(.tooLarge(limit: request.maxBodyBytes))
        case CURLE_ABORTED_BY_CALLBACK:
            return .failure(.transport("the request was cancelled"))
        case CURLE_OPERATION_TIMEDOUT:
            return .failure(.timedOut(seconds: request.deadline))
        case CURLE_COULDNT_CONNECT:
            return .failure(.transport("connection refused"))
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .failure(.transport("the host name could not be resolved"))
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            var status = 0
            _ = wxdb_curl_info_long(handle, CURLINFO_RESPONSE_CODE, &status)
            if request.keepsPartialBody, code != CURLE_SEND_ERROR, !body.isEmpty, (200..<300).contains(status) {
                return .success(
                    HTTPResponse(
                        status: status, headers: headers, body: body, url: HTTPClient.redacted(request.url),
                        complete: false))
            }
            return .failure(.transport("the connection was lost before the response was complete"))
        case CURLE_GOT_NOTHING:
            return .failure(.transport("the server sent no HTTP response"))
        case CURLE_BAD_CONTENT_ENCODING:
            let encoding = headers["content-encoding"] ?? "compressed"
            return .failure(.invalidBody("the \(encoding) body could not be decoded"))
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .failure(.transport("only http and https URLs can be fetched"))
        default:
            let text = detail.isEmpty ? String(cString: wxdb_curl_easy_strerror(code)) : detail
            return .failure(.transport("\(HTTPClient.scrub(text)) (curl error \(code.rawValue))"))
        }
    }
}

private let curlWriteBody: curl_write_callback = { data, size, count, context in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
    return transfer.receive(bytes) ? size * count : 0
}

private let curlWriteHeader: curl_write_callback = { data, size, count, context in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    transfer.header(UnsafeRawBufferPointer(start: data, count: size * count))
    return size * count
}

/// Called about once a second while idle, more often while data flows: the way to abort on cancel.
private let curlProgress: curl_xferinfo_callback = { context, _, _, _, _ in
    Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().cancelled.load(ordering: .relaxed) ? 1 : 0
}
