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
                ObserveCommand.command, QueryCommand.command, ExportCommand.command, ScheduleCommand.command,
                PruneCommand.command, ReportCommand.command, StatsCommand.command, DoctorCommand.command,
                CompletionCommand.command
            ]
        )
    }

    /// Runs `wxdb` with `arguments` (without the program name) and returns the exit code.
    public static func main(_ arguments: [String], context: Context = Context()) async -> Int32 {
        let parser = ArgumentParser(root: root)
        var usagePath = ["wxdb"]
        var usageCommand = root
        do {
            switch try parser.parse(arguments) {
            case .version:
                context.out("wxdb \(version)\n")
                context.flush()
                return 0
            case .help(let command, let path):
                context.out(Help.text(command, path: path))
                context.flush()
                return 0
            case .run(let command, let parsed):
                usagePath = parsed.commandPath
                usageCommand = command
                // Parse and validate every option before anything runs: a usage error changes nothing.
                let run = try command.prepare!(parsed)
                context.quiet = !parsed.values("quiet").isEmpty
                context.verbose = !parsed.values("verbose").isEmpty
                context.wide = !parsed.values("wide").isEmpty
                try await run(context)
                try context.finishOutput()
                return 0
            }
        } catch let error as UsageError {
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
        } catch is IngestFailed {
            context.flush()
            return 1
        } catch let error as CSVWriteError where error.code == EPIPE {
            // The reader went away (`wxdb export ... | head`): not a failure of ours.
            return 0
        } catch let error as OutputWriteError where error.code == EPIPE && error.path == nil {
            return 0
        } catch {
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
