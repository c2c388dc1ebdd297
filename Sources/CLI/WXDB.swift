import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `wxdb` command line: parses arguments, runs the command, maps errors to exit codes.
public enum WXDB {
    public static let version = "0.1.0"

    /// The command tree.
    public static var root: Command {
        Command(
            name: "wxdb",
            abstract: "Keep every weather forecast run, store what happened, and score the forecasts.",
            discussion:
                "wxdb fetches Open-Meteo forecasts for saved locations into a local SQLite file and answers\nwhat was forecast, what happened, and how good the forecasts were.",
            subcommands: [
                LocationsCommand.command, IngestCommand.command, BackfillCommand.command, ImportCommand.command,
                ObserveCommand.command, Query.command, ExportCommand.command, ScheduleCommand.command,
                PruneCommand.command, ReportCommand.command, StatsCommand.command, DoctorCommand.command,
                CopyCommand.command,
                CompletionCommand.command
            ]
        )
    }

    /// Runs `wxdb` with `arguments` (without the program name) and returns the exit code.
    public static func main(_ arguments: [String], context: Context = Context()) async -> Int32 {
        switch start(arguments, context: context) {
        case .finished(let code): return code
        case .pending(let command): return await command.finish()
        }
    }

    /// Parses `arguments` and runs the command if it runs at once (every command but those that
    /// wait on the network), without Swift concurrency: `main.swift` awaits only what is left.
    public static func start(_ arguments: [String], context: Context = Context()) -> Start {
        let parser = ArgumentParser(root: root)
        var usage = (path: ["wxdb"], command: root)
        do {
            switch try parser.parse(arguments) {
            case .version:
                context.out("wxdb \(version)\n")
                context.flush()
                return .finished(0)
            case .help(let command, let path):
                context.out(Help.text(command, path: path))
                context.flush()
                return .finished(0)
            case .run(let command, let parsed):
                usage = (parsed.commandPath, command)
                // Parse and validate every option before anything runs: a usage error changes nothing.
                let runner = try command.prepare!(parsed)
                context.quiet = !parsed.values("quiet").isEmpty
                context.verbose = !parsed.values("verbose").isEmpty
                context.wide = !parsed.values("wide").isEmpty
                switch runner {
                case .now(let run):
                    try run(context)
                    try context.finishOutput()
                    return .finished(0)
                case .later(let run):
                    return .pending(
                        PendingCommand(
                            run: run, context: context, arguments: arguments, usagePath: usage.path,
                            usageCommand: usage.command))
                }
            }
        } catch {
            return .finished(
                exitCode(for: error, arguments: arguments, usagePath: usage.path, usageCommand: usage.command, context))
        }
    }

    /// What `start` leaves to do.
    public enum Start {
        /// The command ran, or was refused: exit with this code.
        case finished(Int32)
        /// The command waits on the network: `finish()` runs it.
        case pending(PendingCommand)
    }

    /// A parsed, validated command that runs on Swift concurrency.
    public struct PendingCommand {
        let run: (Context) async throws -> Void
        let context: Context
        let arguments: [String]
        let usagePath: [String]
        let usageCommand: Command

        /// Runs the command and returns the exit code.
        public func finish() async -> Int32 {
            do {
                try await run(context)
                try context.finishOutput()
                return 0
            } catch {
                return exitCode(
                    for: error, arguments: arguments, usagePath: usagePath, usageCommand: usageCommand, context)
            }
        }
    }

    /// The exit code for a command that threw `error`, after saying what went wrong.
    static func exitCode(
        for error: any Error, arguments: [String], usagePath: [String], usageCommand: Command, _ context: Context
    ) -> Int32 {
        var usagePath = usagePath
        var usageCommand = usageCommand
        switch error {
        case let error as UsageError:
            context.flush()
            // Find the command the user was reaching for, for the usage line.
            if case .some(let (command, path)) = deepestCommand(arguments) {
                usageCommand = command
                usagePath = path
            }
            context.err("Error: \(error.message)")
            context.err("Usage: \(Help.usage(usageCommand, path: usagePath))")
            context.err("  See '\(usagePath.joined(separator: " ")) --help' for more information.")
            return 64
        case is IngestFailed:
            context.flush()
            return 1
        case let error as CSVWriteError where error.code == EPIPE:
            // The reader went away (`wxdb export ... | head`): not a failure of ours.
            return 0
        case let error as OutputWriteError where error.code == EPIPE && error.path == nil:
            return 0
        default:
            context.flush()
            context.err("Error: \(context.withoutAPIKey(userMessage(for: error)))")
            return 1
        }
    }

    static func deepestCommand(_ arguments: [String]) -> (Command, [String])? {
        var command = root
        var path = ["wxdb"]
        var index = 0
        while index < arguments.count {
            let arg = arguments[index]
            index += 1
            if arg.hasPrefix("--") {
                // Skip an option's value so `--db PATH query` still finds `query`.
                let name = String(arg.dropFirst(2))
                if !name.contains("="), ArgumentParser(root: root).allOptions[name]?.valueName != nil {
                    index += 1
                }
                continue
            }
            guard let sub = command.subcommands.first(where: { $0.name == arg }) else {
                if arg == "help" { continue }
                break
            }
            command = sub
            path.append(arg)
        }
        return (command, path)
    }
}
