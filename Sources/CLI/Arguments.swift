/// A small command-line parser in the style of swift-argument-parser: commands declare their
/// arguments and options, and help and usage errors are generated from that declaration.

/// One option or flag a command accepts.
public struct OptionSpec: Sendable {
    public var name: String
    public var valueName: String?  // nil for a flag
    public var help: String
    public var repeatable = false
    public var defaultDescription: String?

    public static func option(_ name: String, _ valueName: String, _ help: String, repeatable: Bool = false, default defaultValue: String? = nil) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, repeatable: repeatable, defaultDescription: defaultValue)
    }
    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }
}

/// One positional argument.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var optional = false
    public var variadic = false
}

/// A command or subcommand.
public struct Command: Sendable {
    public var name: String
    public var abstract: String
    public var discussion: String?
    public var arguments: [ArgumentSpec] = []
    public var options: [OptionSpec] = []
    public var subcommands: [Command] = []
    public var run: (@Sendable (ParsedArguments, Context) async throws -> Void)?
}

/// The parsed values of one command line.
public struct ParsedArguments: Sendable {
    public var commandPath: [String] = []
    public var positionals: [String] = []
    public var options: [String: [String]] = [:]
    public var flags: Set<String> = []

    public func value(_ name: String) -> String? { options[name]?.last }
    public func values(_ name: String) -> [String] { options[name] ?? [] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// A required option's value, or a usage error naming it.
    public func require(_ name: String) throws -> String {
        guard let value = value(name) else { throw UsageError("missing --\(name)") }
        return value
    }

    /// An integer option within `range`, or nil when absent.
    public func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    public func double(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            throw UsageError("--\(name) must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }
}

/// A mistake in how the command was called: exit 64 with usage.
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A failure the user can fix: printed as `Error: ...`, exit 1.
public struct CLIError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Options every command accepts.
let globalOptions: [OptionSpec] = [
    .option("db", "path", "The SQLite database (env WXDB_DB).", default: "$XDG_DATA_HOME/wxdb/wxdb.sqlite"),
    .option("api-key", "key", "Open-Meteo commercial API key (env WXDB_API_KEY); never printed or stored."),
    .flag("quiet", "Print less on stderr."),
    .flag("verbose", "Print more on stderr."),
]

enum ParseResult {
    case run(Command, ParsedArguments)
    case help(Command, path: [String])
    case version
}

struct ArgumentParser {
    let root: Command

    /// Parses `arguments` (without the program name).
    func parse(_ arguments: [String]) throws -> ParseResult {
        var command = root
        var path = [root.name]
        var parsed = ParsedArguments()
        var index = 0
        var wantsHelp = false
        var sawPositional = false

        // `wxdb help <command> ...` is `wxdb <command> ... --help`.
        var args = arguments
        if args.first == "help" {
            args.removeFirst()
            args.append("--help")
        }

        while index < args.count {
            let arg = args[index]
            index += 1
            if arg == "--help" || arg == "-h" {
                wantsHelp = true
                continue
            }
            if arg == "--version" && path.count == 1 { return .version }
            if arg == "--" {
                parsed.positionals.append(contentsOf: args[index...])
                break
            }
            if arg.hasPrefix("--") && arg.count > 2 {
                var name = String(arg.dropFirst(2))
                var inlineValue: String?
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                guard let spec = (command.options + globalOptions).first(where: { $0.name == name }) else {
                    if wantsHelp { continue }
                    throw UsageError("unknown option '--\(name)'")
                }
                if spec.valueName == nil {
                    if inlineValue != nil { throw UsageError("--\(name) takes no value") }
                    parsed.flags.insert(name)
                } else {
                    let value: String
                    if let inlineValue {
                        value = inlineValue
                    } else {
                        // A value may start with '-' (`--lon -118.24`): the next word is always the value.
                        guard index < args.count else { throw UsageError("missing value for '--\(name) <\(spec.valueName!)>'") }
                        value = args[index]
                        index += 1
                    }
                    if !spec.repeatable, parsed.options[name] != nil, !globalOptions.contains(where: { $0.name == name }) {
                        throw UsageError("--\(name) was given more than once")
                    }
                    parsed.options[name, default: []].append(value)
                }
                continue
            }
            if arg.hasPrefix("-") && arg.count > 1 && Double(arg) == nil {
                if wantsHelp { continue }
                throw UsageError("unknown option '\(arg)'")
            }
            if !sawPositional, let sub = command.subcommands.first(where: { $0.name == arg }) {
                command = sub
                path.append(sub.name)
                continue
            }
            if command.run == nil && !command.subcommands.isEmpty {
                if wantsHelp { break }
                throw UsageError("unknown command '\(arg)'; expected one of: \(command.subcommands.map(\.name).joined(separator: ", "))")
            }
            sawPositional = true
            parsed.positionals.append(arg)
        }
        parsed.commandPath = path
        if wantsHelp { return .help(command, path: path) }
        if command.run == nil {
            if path.count == 1 && parsed.positionals.isEmpty { return .help(command, path: path) }
            throw UsageError(path.count == 1 ? "missing command" : "missing subcommand of '\(path.dropFirst().joined(separator: " "))'")
        }
        // Check positional counts.
        let required = command.arguments.filter { !$0.optional }.count
        let variadic = command.arguments.contains { $0.variadic }
        if parsed.positionals.count < required {
            let missing = command.arguments[parsed.positionals.count]
            throw UsageError("missing argument <\(missing.name)>")
        }
        if !variadic && parsed.positionals.count > command.arguments.count {
            throw UsageError("unexpected argument '\(parsed.positionals[command.arguments.count])'")
        }
        return .run(command, parsed)
    }
}

enum Help {
    static func usage(_ command: Command, path: [String]) -> String {
        var parts = [path.joined(separator: " ")]
        if !command.subcommands.isEmpty && command.run == nil {
            parts.append("<subcommand>")
        } else {
            for argument in command.arguments {
                let text = "<\(argument.name)>" + (argument.variadic ? " ..." : "")
                parts.append(argument.optional ? "[\(text)]" : text)
            }
            if !command.options.isEmpty { parts.append("[<options>]") }
        }
        return parts.joined(separator: " ")
    }

    static func text(_ command: Command, path: [String]) -> String {
        var out = "OVERVIEW: \(command.abstract)\n"
        if let discussion = command.discussion { out += "\n\(discussion)\n" }
        out += "\nUSAGE: \(usage(command, path: path))\n"
        if !command.arguments.isEmpty {
            out += "\nARGUMENTS:\n"
            for argument in command.arguments {
                out += row("<\(argument.name)>", argument.help)
            }
        }
        let options = command.options + globalOptions
        out += "\nOPTIONS:\n"
        for option in options {
            var label = "--\(option.name)"
            if let valueName = option.valueName { label += " <\(valueName)>" }
            var help = option.help
            if let defaultDescription = option.defaultDescription { help += " (default: \(defaultDescription))" }
            if option.repeatable { help += " Can be repeated." }
            out += row(label, help)
        }
        if path.count == 1 { out += row("--version", "Show the version.") }
        out += row("-h, --help", "Show help information.")
        if !command.subcommands.isEmpty {
            out += "\nSUBCOMMANDS:\n"
            for sub in command.subcommands { out += row(sub.name, sub.abstract) }
            out += "\n  See '\(path.joined(separator: " ")) help <subcommand>' for detailed help.\n"
        }
        return out
    }

    static func row(_ label: String, _ help: String) -> String {
        let padded = "  " + label
        if padded.count < 26 {
            return padded + String(repeating: " ", count: 26 - padded.count) + help + "\n"
        }
        return padded + "\n" + String(repeating: " ", count: 26) + help + "\n"
    }
}
