import Foundation
import TestSupport
import Testing

@testable import WxCLI

/// Every command in the tree, with its path.
private func everyCommand(_ command: Command = WXDB.root, _ path: [String] = []) -> [([String], Command)] {
    [(path, command)] + command.subcommands.flatMap { everyCommand($0, path + [$0.name]) }
}

/// What a process pays at every start (issue 33): commands that do not wait on the network run
/// before Swift concurrency is started, and nothing reads more of the command tree than it needs.
@Suite("Start-up: commands run at once unless they wait on the network")
struct StartupTests {
    /// A context like the sandbox's, writing stdout to a file of its folder.
    private func context(_ sandbox: Sandbox) -> (Context, String) {
        let out = sandbox.folder.appendingPathComponent("stdout-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let fd = open(out, O_WRONLY | O_TRUNC)
        let context = Context(
            environment: sandbox.environment, stdoutFD: fd, stdoutIsTerminal: false, stderrIsTerminal: false)
        context.captureStderr = true
        return (context, out)
    }

    @Test(
        "reading, importing and usage errors finish in start(), without an await",
        arguments: [
            (["--version"], 0), (["locations", "list"], 0), (["stats"], 0),
            (["query", "runs", "--location", "Nowhere"], 1),
            (["query", "nonsense"], 64), (["--db"], 64)
        ])
    func finishesAtOnce(arguments: [String], code: Int) async throws {
        let sandbox = Sandbox()
        await sandbox.run(
            "locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin")
        let (context, out) = context(sandbox)
        guard case .finished(let exit) = WXDB.start(arguments, context: context) else {
            Issue.record("\(arguments) was left to finish on Swift concurrency")
            return
        }
        #expect(Int(exit) == code)
        if arguments == ["--version"] {
            #expect(try String(contentsOfFile: out, encoding: .utf8) == "wxdb \(WXDB.version)\n")
        }
    }

    @Test("ingest and backfill wait on the network: start() leaves them to finish(), having run nothing")
    func networkCommandsArePending() async throws {
        for arguments in [["ingest"], ["backfill", "--location", "Berlin", "--days", "1"]] {
            let sandbox = Sandbox()
            let (context, _) = context(sandbox)
            guard case .pending(let command) = WXDB.start(arguments, context: context) else {
                Issue.record("\(arguments) ran at once")
                continue
            }
            // Parsed and validated, but nothing opened yet: no database file.
            #expect(!FileManager.default.fileExists(atPath: sandbox.db))
            #expect(await command.finish() == 1)
            #expect(context.capturedStderr.contains { $0.hasPrefix("Error: ") })
        }
    }

    /// The parser looks an option up in the command reached so far before it walks the whole tree,
    /// so every option name must mean the same thing wherever it is offered.
    @Test("an option name takes a value in every command or in none")
    func optionNamesAgreeOnValues() {
        var takesValue: [String: (Bool, [String])] = [:]
        for (path, command) in everyCommand() {
            for option in command.options + verbosityOptions {
                let here = option.valueName != nil
                if let (first, where_) = takesValue[option.name] {
                    #expect(
                        first == here,
                        "--\(option.name) takes a value in '\(where_.joined(separator: " "))' but not in '\(path.joined(separator: " "))', or the other way round"
                    )
                } else {
                    takesValue[option.name] = (here, path)
                }
            }
        }
        #expect(takesValue.count > 20)
    }

    @Test("the parser's --db, known before the command without walking the tree, is every command's --db")
    func databaseOptionBeforeTheCommandMatchesTheTree() {
        let shortcut = ArgumentParser.databaseOption
        var offered = 0
        for (path, command) in everyCommand() {
            for option in command.options where option.name == shortcut.name {
                offered += 1
                #expect(option.valueName == shortcut.valueName, "--db in '\(path.joined(separator: " "))'")
            }
        }
        #expect(offered > 20)
    }

    @Test("a global option before the command still finds its value (--db PATH query ...)")
    func optionBeforeTheCommand() async throws {
        let sandbox = Sandbox()
        let other = sandbox.folder.appendingPathComponent("other.sqlite").path
        var result = await sandbox.run(
            "--db", other, "locations", "add", "Oslo", "--lat", "59.91", "--lon", "10.75", "--timezone", "Europe/Oslo")
        #expect(result.code == 0)
        result = await sandbox.run("--db", other, "locations", "list", "--format", "csv")
        #expect(result.code == 0)
        #expect(result.stdout.contains("Oslo"))
        // An option of another command, placed before this one's name, is still refused by name.
        result = await sandbox.run("--lat", "1", "stats")
        #expect(result.code == 64)
        #expect(result.stderrText.contains("'wxdb stats' does not take --lat"))
    }

    @Test("the environment read from environ is ProcessInfo's")
    func environmentMatchesProcessInfo() {
        #expect(Context.processEnvironment() == ProcessInfo.processInfo.environment)
    }
}
