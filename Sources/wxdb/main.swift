import FoundationEssentials
import WxCLI

#if canImport(Glibc)
    import Glibc

    @_silgen_name("mallopt") private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
    // glibc gives each thread that allocates a heap ("arena") of its own and seldom returns what
    // is freed in it. An ingest resumes on whichever pool thread after each request, so every
    // batch's peak landed in another arena: a 1,000-location cycle peaked at 67 MB RSS, 55 MB with
    // one arena. wxdb's work is sequential, so one arena costs it nothing. (M_ARENA_MAX is -8.)
    _ = mallopt(-8, 1)
#endif

// Pipes closed early (`wxdb export ... | head`) should end quietly, not kill us with SIGPIPE.
signal(SIGPIPE, SIG_IGN)
// Commands run before the first `await`, on this thread, unless they wait on the network: awaiting
// an async function here starts Swift concurrency's thread pool, about 1 ms of CPU at every start.
switch WXDB.start(Array(CommandLine.arguments.dropFirst())) {
case .finished(let code): exit(code)
case .pending(let command): exit(await command.finish())
}
