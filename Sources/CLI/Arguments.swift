/// A small command-line parser in the style of swift-argument-parser. Each command has an options
/// struct (``CommandOptions``) whose table of typed options (``Opt``) is the one description that
/// parsing, validation, help, usage lines, "did you mean" and shell completion all read.

/// How one option or flag looks on the command line and in help.
public struct OptionSpec: Sendable {
    public var name: String
    public var valueName: String?  // nil for a flag
    public var help: String
    /// May be given more than once (every value is kept).
    public var repeatable = false
    /// Must be given; shown in the USAGE line.
    public var required = false
    public var defaultDescription: String?
    /// Values shell completion offers (a choice's cases, variable names).
    public var completions: [String] = []
    /// Whether the value is a saved location's name (completed from the database): every
    /// `--location` is.
    public var completesLocations: Bool { name == "location" }
}

/// What shell completion offers for a positional argument.
public enum ArgumentCompletion: Sendable, Equatable {
    case files
    /// A saved location's name, read from the database.
    case locations
    case values([String])
    /// Nothing to offer (a new name).
    case none
}

/// One positional argument.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var optional = false
    public var variadic = false
    public var completion: ArgumentCompletion = .files
}

/// One typed option of the options struct `Root`: its spec, and how its values are stored.
///
/// Key paths are taken as autoclosures, so building an option table instantiates none of them
/// (each costs a metadata lookup the first time): a run applies only the options it was given.
struct Opt<Root> {
    var spec: OptionSpec
    /// Stores every value given (at least one; a flag gets `[""]`); throws ``UsageError`` on a bad value.
    var apply: (inout Root, [String]) throws -> Void

    /// The same option on a struct that holds `Root` at `path` (how option groups are shared).
    func lifted<Outer>(_ path: @autoclosure @escaping () -> WritableKeyPath<Outer, Root>) -> Opt<Outer> {
        let apply = self.apply
        return Opt<Outer>(spec: spec) { outer, values in try apply(&outer[keyPath: path()], values) }
    }

    static func string(
        _ name: String, _ valueName: String, _ help: String, required: Bool = false,
        default defaultValue: String? = nil,
        completions: [String] = [], _ path: @autoclosure @escaping () -> WritableKeyPath<Root, String?>
    ) -> Opt {
        Opt(
            spec: OptionSpec(
                name: name, valueName: valueName, help: help, required: required, defaultDescription: defaultValue,
                completions: completions)
        ) { root, values in
            root[keyPath: path()] = values.last
        }
    }

    /// A list: `--var a,b` and `--var a --var b` are the same.
    static func list(
        _ name: String, _ valueName: String, _ help: String, default defaultValue: String? = nil,
        completions: [String] = [], _ path: @autoclosure @escaping () -> WritableKeyPath<Root, [String]>
    ) -> Opt {
        Opt(
            spec: OptionSpec(
                name: name, valueName: valueName, help: help + " Comma-separated or repeated.", repeatable: true,
                defaultDescription: defaultValue, completions: completions)
        ) { root, values in
            let items = values.flatMap { $0.split(separator: ",") }.map { $0.trimmed(.whitespaces) }
                .filter { !$0.isEmpty }
            guard !items.isEmpty else { throw UsageError("--\(name) needs at least one \(valueName)") }
            root[keyPath: path()] = items
        }
    }

    static func int(
        _ name: String, _ valueName: String, _ help: String, in range: ClosedRange<Int>, required: Bool = false,
        default defaultValue: String? = nil, _ path: @autoclosure @escaping () -> WritableKeyPath<Root, Int?>
    ) -> Opt {
        Opt(
            spec: OptionSpec(
                name: name, valueName: valueName, help: help, required: required, defaultDescription: defaultValue)
        ) { root, values in
            let text = values.last!
            guard let number = Int(text), range.contains(number) else {
                throw UsageError(
                    "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
            }
            root[keyPath: path()] = number
        }
    }

    static func double(
        _ name: String, _ valueName: String, _ help: String, in range: ClosedRange<Double>, required: Bool = false,
        default defaultValue: String? = nil, _ path: @autoclosure @escaping () -> WritableKeyPath<Root, Double?>
    ) -> Opt {
        Opt(
            spec: OptionSpec(
                name: name, valueName: valueName, help: help, required: required, defaultDescription: defaultValue)
        ) { root, values in
            let text = values.last!
            guard let number = Double(text), number.isFinite, range.contains(number) else {
                throw UsageError(
                    "--\(name) must be a number from \(formatNumber(range.lowerBound, places: 3)) to \(formatNumber(range.upperBound, places: 3)), not '\(text)'"
                )
            }
            root[keyPath: path()] = number
        }
    }

    /// One of an enum's raw values.
    static func choice<T: RawRepresentable & CaseIterable>(
        _ name: String, _ valueName: String, _ help: String, allowed: [T]? = nil,
        default defaultValue: T? = nil, _ path: @autoclosure @escaping () -> WritableKeyPath<Root, T>
    ) -> Opt
    where T.RawValue == String {
        let allowed = allowed ?? Array(T.allCases)
        let names = allowed.map(\.rawValue)
        return Opt(
            spec: OptionSpec(
                name: name, valueName: valueName, help: help, defaultDescription: defaultValue?.rawValue,
                completions: names)
        ) { root, values in
            let text = values.last!
            guard let value = T(rawValue: text), names.contains(text) else {
                throw UsageError(
                    "--\(name) must be one of \(names.joined(separator: ", ")), not '\(text)'"
                        + Suggest.phrase(text, among: names))
            }
            root[keyPath: path()] = value
        }
    }

    /// One of an enum's raw values, nil when the option is not given (so another can stand in for it).
    static func choice<T: RawRepresentable & CaseIterable>(
        _ name: String, _ valueName: String, _ help: String, default defaultValue: T? = nil,
        _ path: @autoclosure @escaping () -> WritableKeyPath<Root, T?>
    ) -> Opt
    where T.RawValue == String {
        let names = T.allCases.map(\.rawValue)
        return Opt(
            spec: OptionSpec(
                name: name, valueName: valueName, help: help, defaultDescription: defaultValue?.rawValue,
                completions: names)
        ) { root, values in
            let text = values.last!
            guard let value = T(rawValue: text) else {
                throw UsageError(
                    "--\(name) must be one of \(names.joined(separator: ", ")), not '\(text)'"
                        + Suggest.phrase(text, among: names))
            }
            root[keyPath: path()] = value
        }
    }

    static func flag(_ name: String, _ help: String, _ path: @autoclosure @escaping () -> WritableKeyPath<Root, Bool>)
        -> Opt
    {
        Opt(spec: OptionSpec(name: name, valueName: nil, help: help)) { root, _ in root[keyPath: path()] = true }
    }
}

/// The options of one command: parsed from its table, then validated, before anything runs.
protocol CommandOptions {
    init()
    /// Every option the command offers, in help order.
    static var table: [Opt<Self>] { get }
    /// Positional arguments, in order.
    static var arguments: [ArgumentSpec] { get }
    /// Stores the positional arguments (their count is already checked).
    mutating func take(_ positionals: [String]) throws
    /// Checks that the options fit together; throws ``UsageError``. Runs before the command.
    func validate() throws
}

extension CommandOptions {
    static var arguments: [ArgumentSpec] { [] }
    mutating func take(_ positionals: [String]) throws {}
    func validate() throws {}
}

/// A command with no options of its own.
struct NoOptions: CommandOptions {
    static var table: [Opt<NoOptions>] { [] }
}

/// A command or subcommand, as the parser, help and completion see it.
public struct Command {
    public var name: String
    public var abstract: String
    public var discussion: String?
    public var arguments: [ArgumentSpec] = []
    public var options: [OptionSpec] = []
    /// A group's commands, built the first time they are asked for: a command line names one path
    /// through the tree, and building every command's options at each start cost about 1 ms of CPU.
    public var subcommands: [Command] { children.commands }
    private var children = Children { [] }
    /// Turns the raw command line into a ready-to-run command (throws ``UsageError``); nil for a group.
    var prepare: ((ParsedArguments) throws -> Runner)?

    /// A group of subcommands.
    init(
        name: String, abstract: String, discussion: String? = nil,
        subcommands: @autoclosure @escaping () -> [Command]
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.children = Children(subcommands)
    }

    /// Builds a group's commands once, however often the parser, help or completion ask.
    private final class Children {
        private let make: () -> [Command]
        private var built: [Command]?
        init(_ make: @escaping () -> [Command]) { self.make = make }
        var commands: [Command] {
            if let built { return built }
            let commands = make()
            built = commands
            return commands
        }
    }

    /// A command whose options are `O`; `run` gets them parsed and validated. `table` and `make`
    /// are for one options type shared by several commands (the exports), each offering its part.
    init<O: CommandOptions>(
        name: String, abstract: String, discussion: String? = nil, options _: O.Type,
        table: [Opt<O>] = O.table, make: @escaping () -> O = O.init,
        run: @escaping (O, Context) throws -> Void
    ) {
        self.init(name: name, abstract: abstract, discussion: discussion, table: table, make: make) { ready in
            .now { context in try run(ready, context) }
        }
    }

    /// A command that waits on the network (`run` is async): it runs on Swift concurrency.
    init<O: CommandOptions>(
        name: String, abstract: String, discussion: String? = nil, options _: O.Type,
        table: [Opt<O>] = O.table, make: @escaping () -> O = O.init,
        run: @escaping (O, Context) async throws -> Void
    ) {
        self.init(name: name, abstract: abstract, discussion: discussion, table: table, make: make) { ready in
            .later { context in try await run(ready, context) }
        }
    }

    private init<O: CommandOptions>(
        name: String, abstract: String, discussion: String?, table: [Opt<O>], make: @escaping () -> O,
        runner: @escaping (O) -> Runner
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = O.arguments
        self.options = table.map(\.spec)
        self.prepare = { parsed in
            var options = make()
            for opt in table {
                let values = parsed.values(opt.spec.name)
                if values.isEmpty {
                    if opt.spec.required { throw UsageError("missing --\(opt.spec.name)") }
                    continue
                }
                if values.count > 1 && !opt.spec.repeatable {
                    throw UsageError("--\(opt.spec.name) was given more than once")
                }
                try opt.apply(&options, values)
            }
            try options.take(parsed.positionals)
            try options.validate()
            return runner(options)
        }
    }

    var isGroup: Bool { prepare == nil }
}

/// How a prepared command runs. Most run at once, on the main thread: a process that only reads
/// the database then never starts Swift concurrency's threads (about 1 ms of CPU at every start,
/// paid by every cron job and dashboard call). Commands that wait on the network run `later`.
enum Runner {
    case now((Context) throws -> Void)
    case later((Context) async throws -> Void)
}

/// The raw words of one command line, sorted into options and positionals.
public struct ParsedArguments: Sendable {
    public var commandPath: [String] = []
    public var positionals: [String] = []
    /// Option names in the order given, each with its value (`""` for a flag).
    public var options: [(name: String, value: String)] = []

    public func values(_ name: String) -> [String] { options.filter { $0.name == name }.map(\.value) }
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

/// Flags every command takes: how much goes to stderr.
let verbosityOptions: [OptionSpec] = [
    OptionSpec(name: "quiet", valueName: nil, help: "Print less on stderr."),
    OptionSpec(name: "verbose", valueName: nil, help: "Print more on stderr."),
    OptionSpec(name: "wide", valueName: nil, help: "Tables: every column (default: as many as fit 100 characters).")
]

enum ParseResult {
    case run(Command, ParsedArguments)
    case help(Command, path: [String])
    case version
}

struct ArgumentParser {
    let root: Command
    /// `--db`, as every command that opens the database offers it (see `DatabaseOption`).
    static let databaseOption = OptionSpec(name: "db", valueName: "path", help: "The SQLite database (env WXDB_DB).")

    /// Every option any command offers, by name: whether a word after `--name` is its value must be
    /// known before the command is (`wxdb --db PATH query ...`).
    var allOptions: [String: OptionSpec] {
        var all: [String: OptionSpec] = [:]
        func walk(_ command: Command) {
            for option in command.options + verbosityOptions where all[option.name] == nil { all[option.name] = option }
            command.subcommands.forEach(walk)
        }
        walk(root)
        return all
    }

    /// Parses `arguments` (without the program name).
    func parse(_ arguments: [String]) throws -> ParseResult {
        var command = root
        var path = [root.name]
        var parsed = ParsedArguments()
        var index = 0
        var wantsHelp = false
        var sawPositional = false
        // Every command's options, needed only for an option the command reached so far does not
        // offer (`wxdb --db PATH query ...`): walking the whole tree builds every command.
        var everyOption: [String: OptionSpec]?
        func known() -> [String: OptionSpec] {
            if let everyOption { return everyOption }
            let all = allOptions
            everyOption = all
            return all
        }

        // `wxdb help <command> ...` is `wxdb <command> ... --help`; so is `wxdb <group> help <sub>`.
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
                let here = command.options + verbosityOptions
                // `--db` before the command (`wxdb --db PATH import ...`, as cron lines and scripts
                // put it) takes a value wherever it is offered (StartupTests checks that names agree
                // across the tree), so knowing that needs no walk of the whole tree (~0.5 ms).
                let shared = name == Self.databaseOption.name ? Self.databaseOption : nil
                guard let spec = here.first(where: { $0.name == name }) ?? shared ?? known()[name] else {
                    if wantsHelp { continue }
                    throw UsageError(
                        "unknown option '--\(name)'"
                            + (Suggest.phrase(name, among: here.map(\.name), prefix: "--").nonEmpty
                                ?? Suggest.phrase(name, among: known().keys.sorted(), prefix: "--")))
                }
                if spec.valueName == nil {
                    if inlineValue != nil { throw UsageError("--\(name) takes no value") }
                    parsed.options.append((name, ""))
                } else {
                    let value: String
                    if let inlineValue {
                        value = inlineValue
                    } else {
                        // A value may start with '-' (`--lon -118.24`): the next word is always the value.
                        guard index < args.count else {
                            throw UsageError("missing value for '--\(name) <\(spec.valueName!)>'")
                        }
                        value = args[index]
                        index += 1
                    }
                    parsed.options.append((name, value))
                }
                continue
            }
            if arg.hasPrefix("-") && arg.count > 1 && Double(arg) == nil {
                if wantsHelp { continue }
                throw UsageError("unknown option '\(arg)'")
            }
            if !sawPositional && command.isGroup && arg == "help" {
                wantsHelp = true
                continue
            }
            if !sawPositional, let sub = command.subcommands.first(where: { $0.name == arg }) {
                command = sub
                path.append(sub.name)
                continue
            }
            if command.isGroup && !command.subcommands.isEmpty {
                if wantsHelp { break }
                let names = command.subcommands.map(\.name)
                let kind = path.count == 1 ? "command" : "subcommand of '\(path.dropFirst().joined(separator: " "))'"
                throw UsageError(
                    "unknown \(kind) '\(arg)'"
                        + (Suggest.phrase(arg, among: names).nonEmpty
                            ?? "; expected one of: \(names.joined(separator: ", "))"))
            }
            sawPositional = true
            parsed.positionals.append(arg)
        }
        parsed.commandPath = path
        if wantsHelp { return .help(command, path: path) }
        if command.isGroup {
            if path.count == 1 && parsed.positionals.isEmpty && parsed.options.isEmpty {
                return .help(command, path: path)
            }
            throw UsageError(
                path.count == 1
                    ? "missing command" : "missing subcommand of '\(path.dropFirst().joined(separator: " "))'")
        }
        // Options of other commands are known words, but not this command's.
        let offered = Set((command.options + verbosityOptions).map(\.name))
        for (name, _) in parsed.options where !offered.contains(name) {
            throw UsageError(
                "'\(path.joined(separator: " "))' does not take --\(name)"
                    + Suggest.phrase(name, among: offered.sorted(), prefix: "--"))
        }
        if parsed.values("quiet").count > 0 && parsed.values("verbose").count > 0 {
            throw UsageError("--quiet and --verbose contradict each other; give one of them")
        }
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

extension String {
    /// nil when empty, so `a.nonEmpty ?? b` picks the first text that says something.
    var nonEmpty: String? { isEmpty ? nil : self }
}
