// Shell completion offers what the commands accept, and accepts what it offers (issue 27, point 5):
// each shell's generated script is run in that shell, and what it offers is checked against the parser.
import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// One thing to complete: the words before the cursor, and what the parser says about values there.
private struct Probe {
    var words: [String]
    /// The option whose value is completed (nil: a positional argument).
    var option: OptionSpec?
    var command: Command
    var path: [String]
}

private enum Shells {
    static func find(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/bin/\(name)", "/usr/local/bin/\(name)"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// The built `wxdb` beside the test bundle: the completion scripts call it for location names.
    static let wxdb: String? = {
        var dir = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("wxdb")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()

    /// Values a required option gets so the parser reaches the option under test.
    static let requiredValues: [String: String] = [
        "location": "Here", "lead": "24", "at": "now", "keep-days": "30", "fetched-at": "2026-01-01T00:00Z",
        "sensor": "temperature_2m=sensor.t", "from": "2026-01-01", "to": "2026-01-02"
    ]

    /// Every command path and option whose values come from a table (choices, variables, models).
    static func probes() -> [Probe] {
        var probes: [Probe] = []
        for (path, command) in CompletionCommand.paths(WXDB.root) where !command.isGroup {
            for option in CompletionCommand.options(command) where !option.completions.isEmpty {
                probes.append(Probe(words: path + ["--" + option.name], option: option, command: command, path: path))
            }
        }
        return probes
    }

    /// The parser's verdict on `value` for the probe's option: nil when accepted, else its message.
    static func refusal(_ probe: Probe, _ value: String) -> String? {
        var words = probe.path
        for argument in probe.command.arguments where !argument.optional {
            words.append(probe.path == ["completion"] ? "bash" : "x")
        }
        // Required options, and --location wherever a command has it (some require it in validate()).
        for option in probe.command.options
        where (option.required || requiredValues[option.name] != nil) && option.name != probe.option?.name {
            words += ["--" + option.name, requiredValues[option.name] ?? "1"]
        }
        words += ["--" + probe.option!.name, value]
        do {
            guard case .run(let command, let parsed) = try ArgumentParser(root: WXDB.root).parse(words) else {
                return "not a command run"
            }
            _ = try command.prepare!(parsed)
            return nil
        } catch let error as UsageError {
            // Only a refusal of this value counts; other checks (option combinations) are not the point.
            #expect(!error.message.hasPrefix("missing"), "\(words): \(error.message)")
            return error.message.contains("'\(value)'") ? error.message : nil
        } catch {
            return nil
        }
    }

    /// What `shell` offers for each line (words typed, the cursor after a space), in order.
    static func offered(_ shell: String, _ lines: [[String]], db: String) throws -> [[String]] {
        let wxdb = try #require(Self.wxdb)
        let script = Scratch.path("completion", suffix: "." + shell)
        let driver = Scratch.path("driver", suffix: "." + shell)
        defer {
            try? FileManager.default.removeItem(atPath: script)
            try? FileManager.default.removeItem(atPath: driver)
        }
        let generated = try #require(
            String(data: try Subprocess.run(wxdb, ["completion", shell]).output, encoding: .utf8))
        try generated.write(toFile: script, atomically: true, encoding: .utf8)
        func quote(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        var text: String
        switch shell {
        case "fish":
            // fish runs `wxdb` from PATH for location names; the folder holds a link to the built one.
            text = "source \(quote(script))\n"
            for line in lines {
                text +=
                    "complete -C \(quote((["wxdb"] + line).joined(separator: " ") + " ")) | string replace -r '\\t.*' ''; echo '@@'\n"
            }
        default:
            text = shell == "zsh" ? "autoload -U +X compinit && compinit -u\n" : ""
            text += "source \(quote(script))\n"
            if shell == "zsh" { text += "setopt ksharrays\n" }
            text +=
                "probe() { COMP_WORDS=(\"$@\" ''); COMP_CWORD=$#; _wxdb; printf '%s\\n' \"${COMPREPLY[@]}\"; echo '@@'; }\n"
            for line in lines { text += "probe \(quote(wxdb)) " + line.map(quote).joined(separator: " ") + "\n" }
        }
        try text.write(toFile: driver, atomically: true, encoding: .utf8)
        let bin = Scratch.folder("completion-bin")
        defer { try? FileManager.default.removeItem(at: bin) }
        try FileManager.default.createSymbolicLink(
            atPath: bin.appendingPathComponent("wxdb").path, withDestinationPath: wxdb)
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try Subprocess.run(
            "/usr/bin/env", ["WXDB_DB=\(db)", "PATH=\(path)", "HOME=\(bin.path)", try #require(find(shell)), driver])
        let output = String(decoding: result.output, as: UTF8.self)
        var answers: [[String]] = [[]]
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "@@" {
                answers.append([])
            } else if !line.isEmpty {
                answers[answers.count - 1].append(String(line))
            }
        }
        return Array(answers.dropLast())
    }
}

@Suite("shell completion offers what the parser accepts", .serialized)
struct CompletionTests {
    @Test(
        "every offered value is accepted, every accepted value is offered; location names from the database",
        arguments: ["bash", "zsh", "fish"])
    func offersWhatIsAccepted(_ shell: String) async throws {
        guard Shells.find(shell) != nil, Shells.wxdb != nil else {
            // Not installed here (zsh and fish are optional): nothing to run the script in.
            return
        }
        let box = Sandbox()
        defer { box.remove() }
        for name in ["Berlin", "New York"] {
            #expect(await box.run("locations", "add", name, "--lat", "1", "--lon", "2").code == 0)
        }
        let probes = Shells.probes()
        let extra: [[String]] = [
            ["query", "verify", "--location"], ["locations", "show"], ["locations", "remove"], ["completion"],
            ["export", "pairs", "--location"]
        ]
        let answers = try Shells.offered(shell, probes.map(\.words) + extra, db: box.db)
        try #require(answers.count == probes.count + extra.count, "\(shell) answered \(answers.count) probes")

        // Every value any command offers for an option of that name, and one no command takes.
        var universe: [String: Set<String>] = ["": []]
        for probe in probes { universe[probe.option!.name, default: ["zzzz"]].formUnion(probe.option!.completions) }
        for (probe, offered) in zip(probes, answers) {
            let name = probe.option!.name
            let shown = Set(offered)
            let accepted = Set(universe[name]!.filter { Shells.refusal(probe, $0) == nil })
            #expect(
                shown == accepted,
                "\(shell): wxdb \(probe.words.joined(separator: " ")) offers \(shown.sorted()), accepts \(accepted.sorted())"
            )
        }
        let rest = Array(answers.suffix(extra.count))
        for names in [rest[0], rest[1], rest[2], rest[4]] {
            #expect(
                names.map { $0.replacingOccurrences(of: "\\ ", with: " ") }.sorted() == ["Berlin", "New York"],
                "\(shell)")
        }
        #expect(Set(rest[3].filter { !$0.hasPrefix("-") }) == ["bash", "zsh", "fish"], "\(shell)")
    }
}
