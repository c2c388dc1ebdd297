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
// A parent may start us with terminating signals blocked (a test runner's thread, some
// supervisors). Commands run on this thread, which keeps that mask, and no other thread exists to
// take them (Swift concurrency's pool threads, which ran every command before, unblock them), so
// unblock them here: SIGTERM must still end wxdb, and export's handlers must still run.
var terminating = sigset_t()
sigemptyset(&terminating)
for number in [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2] { sigaddset(&terminating, number) }
pthread_sigmask(SIG_UNBLOCK, &terminating, nil)
// Commands run before the first `await`, on this thread, unless they wait on the network: awaiting
// an async function here starts Swift concurrency's thread pool, about 1 ms of CPU at every start.
switch WXDB.start(Array(CommandLine.arguments.dropFirst())) {
case .finished(let code): exit(code)
case .pending(let command): exit(await command.finish())
}
