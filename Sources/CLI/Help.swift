/// Help text and usage lines, generated from the command tree and its option tables.
enum Help {
    static func usage(_ command: Command, path: [String]) -> String {
        var parts = [path.joined(separator: " ")]
        if command.isGroup {
            parts.append("<subcommand>")
        } else {
            for argument in command.arguments {
                let text = "<\(argument.name)>" + (argument.variadic ? " ..." : "")
                parts.append(argument.optional ? "[\(text)]" : text)
            }
            for option in command.options where option.required {
                parts.append("--\(option.name)" + (option.valueName.map { " <\($0)>" } ?? ""))
            }
            if command.options.contains(where: { !$0.required }) { parts.append("[<options>]") }
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
        out += "\nOPTIONS:\n"
        for option in command.isGroup ? [] : command.options + verbosityOptions {
            var label = "--\(option.name)"
            if let valueName = option.valueName { label += " <\(valueName)>" }
            var help = option.help
            if let defaultDescription = option.defaultDescription { help += " (default: \(defaultDescription))" }
            out += row(label, help)
        }
        if path.count == 1 {
            // Options every command takes (or most: --db), so they can come before the command.
            out += row("--db <path>", "The SQLite database (env WXDB_DB; every command but completion).")
            for option in verbosityOptions { out += row("--\(option.name)", option.help) }
            out += row("--version", "Show the version.")
        }
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
