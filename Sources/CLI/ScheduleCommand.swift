import FoundationEssentials
import WxCore
import WxPostgres
import WxStore
import WxStoreSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum ScheduleCommand {
    enum Kind: String { case cron, systemd, launchd }

    struct Options: CommandOptions {
        var database = DatabaseOption()
        var kinds: [Kind] = []
        var log: String?

        static var table: [Opt<Options>] {
            [
                Opt(
                    spec: OptionSpec(
                        name: "cron", valueName: nil, help: "A crontab line (append it with 'crontab -e').")
                ) { options, _ in options.kinds.append(.cron) },
                Opt(spec: OptionSpec(name: "systemd", valueName: nil, help: "A systemd user service and timer.")) {
                    options, _ in options.kinds.append(.systemd)
                },
                Opt(spec: OptionSpec(name: "launchd", valueName: nil, help: "A launchd agent property list (macOS).")) {
                    options, _ in options.kinds.append(.launchd)
                },
                .string(
                    "log", "file", "Where cron and launchd write output.", default: "wxdb.log beside the database",
                    \.log)
            ]
                + DatabaseOption.options(\.database)
        }

        func validate() throws {
            guard kinds.count == 1 else { throw UsageError("choose one of --cron, --systemd or --launchd") }
        }
    }

    static var command: Command {
        Command(
            name: "schedule",
            abstract: "Print ready-to-install text that runs 'wxdb ingest' every hour.",
            discussion: """
                The minute is fixed per database (derived from its path), not :00, so many installs do not all
                call Open-Meteo at once. Scripts/install-schedule installs the systemd user timer or the crontab line.
                The API key is never written into the text; with WXDB_API_KEY set, a note says how to give the job its key.
                """,
            options: Options.self, run: run)
    }

    /// A minute in 1...58 fixed for this machine and database, so reinstalling gives the same
    /// schedule while different installs spread over the hour.
    static func minute(for path: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (ProcessInfo.processInfo.hostName + "\u{0}" + path).utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return 1 + Int(hash % 58)
    }

    /// A name part per database, so installing a schedule for one database never replaces
    /// another's: empty for the default database (the names wxdb always used), else `-` and eight
    /// hex digits of its path.
    static func unitSuffix(for db: String, environment: [String: String]) -> String {
        if db == absolute(defaultDatabasePath(environment: environment)) { return "" }
        var hash: UInt32 = 0x811c_9dc5
        for byte in db.utf8 {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        let hex = String(hash, radix: 16)
        return "-" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func run(_ options: Options, _ context: Context) throws {
        let kind = options.kinds[0]
        let binary = executablePath()
        let chosen = options.database.path(context)
        // A PostgreSQL --db is written without its password (libpq reads it from the passfile),
        // and its log goes where the default database would be.
        let postgres = PostgresTarget.conninfo(chosen)
        let db = postgres.map(ConnectionString.redacted) ?? absolute(chosen)
        if let postgres, !ConnectionString.secrets(in: postgres).isEmpty {
            context.note(
                "Note: the password in --db is not written into the schedule; put it in ~/.pgpass (or PGPASSFILE) for the scheduled ingest"
            )
        }
        let logFolder = PathText.folder(
            of: postgres == nil ? db : defaultDatabasePath(environment: context.environment))
        let log = absolute(options.log ?? (logFolder + "/wxdb.log"))
        let minute = minute(for: db)
        let unit = "wxdb-ingest" + unitSuffix(for: db, environment: context.environment)
        let label =
            "com.wxdb.ingest"
            + unitSuffix(for: db, environment: context.environment).replacing("-", with: ".")
        // A newline would end a crontab line or unit setting and start another (injecting a second
        // entry); no format can carry control characters safely, so such paths are refused.
        for (label, path) in [("the wxdb binary", binary), ("the database", db), ("the log", log)]
        where path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw CLIError(
                "\(label) path \(path.debugDescription) holds a newline or another control character, which a schedule cannot carry safely; use a path without one"
            )
        }
        notes(kind, context)
        // Endpoint overrides and the key are not written out: the key must never land in a file we print.
        switch kind {
        case .cron:
            context.out("# wxdb: fetch forecasts every hour at minute \(minute)\n")
            // The trailing comment tags the line as wxdb's for this database, so
            // Scripts/install-schedule replaces only this database's line and never another's.
            context.out(
                cron(
                    "\(minute) * * * * \(shell(binary)) --db \(shell(db)) --quiet ingest >> \(shell(log)) 2>&1 \(cronTag(db))"
                ) + "\n")
        case .systemd:
            context.out(
                """
                # ~/.config/systemd/user/\(unit).service
                [Unit]
                Description=wxdb: fetch and store weather forecasts
                Wants=network-online.target
                After=network-online.target

                [Service]
                Type=oneshot
                ExecStart=\(systemdQuote(binary)) --db \(systemdQuote(db)) --quiet ingest
                # output goes to the journal: journalctl --user -u \(unit)

                # ~/.config/systemd/user/\(unit).timer
                [Unit]
                Description=Run wxdb ingest every hour

                [Timer]
                OnCalendar=*-*-* *:\(minute < 10 ? "0" : "")\(minute):00
                Persistent=true
                RandomizedDelaySec=60

                [Install]
                WantedBy=timers.target

                """)
        default:
            context.out(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <!-- ~/Library/LaunchAgents/\(label).plist; load with: launchctl load <this file> -->
                <plist version="1.0">
                <dict>
                    <key>Label</key><string>\(label)</string>
                    <key>ProgramArguments</key>
                    <array>
                        <string>\(xml(binary))</string>
                        <string>--db</string>
                        <string>\(xml(db))</string>
                        <string>--quiet</string>
                        <string>ingest</string>
                    </array>
                    <key>StartCalendarInterval</key>
                    <dict><key>Minute</key><integer>\(minute)</integer></dict>
                    <key>StandardOutPath</key><string>\(xml(log))</string>
                    <key>StandardErrorPath</key><string>\(xml(log))</string>
                </dict>
                </plist>

                """)
        }
    }

    /// What the printed text leaves to the user: the API key (never printed) and, for systemd,
    /// lingering, without which a user timer stops when its user logs out.
    static func notes(_ kind: Kind, _ context: Context) {
        if !(context.environment["WXDB_API_KEY"] ?? "").isEmpty {
            context.note(
                "Note: WXDB_API_KEY is set, but the key is not in this text (wxdb never prints it), so the job would run on the free limits."
            )
            switch kind {
            case .cron:
                context.note("  Keep the key in a file only you can read, and let the line read it:")
                context.note(
                    "    (umask 077; mkdir -p ~/.config/wxdb; printf '%s' \"$WXDB_API_KEY\" > ~/.config/wxdb/api-key)")
                context.note(
                    "  then start the command in the crontab line with: WXDB_API_KEY=$(cat ~/.config/wxdb/api-key) ")
            case .systemd:
                context.note("  Keep the key in an environment file only you can read, and name it in the service:")
                context.note(
                    "    (umask 077; mkdir -p ~/.config/wxdb; printf 'WXDB_API_KEY=%s\\n' \"$WXDB_API_KEY\" > ~/.config/wxdb/wxdb.env)"
                )
                context.note("  and add under [Service]: EnvironmentFile=%h/.config/wxdb/wxdb.env")
            case .launchd:
                context.note(
                    "  Add it under EnvironmentVariables in the property list, and keep the file readable only by you (chmod 600)."
                )
            }
        }
        if kind == .systemd {
            context.note(
                "Note: on a server, run 'loginctl enable-linger $USER' once, or the timer stops when you log out.")
        }
    }

    /// The absolute path of the running wxdb binary.
    static func executablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return resolved
        }
        return absolute(CommandLine.arguments.first ?? "wxdb")
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return PathText.standardized(path) }
        return PathText.standardized(PathText.join(FileManager.default.currentDirectoryPath, path))
    }

    /// Single-quotes for sh, so paths with spaces survive cron.
    static func shell(_ text: String) -> String {
        if text.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+:@".contains($0) }) { return text }
        return "'" + text.replacing("'", with: "'\\''") + "'"
    }

    /// The comment that marks a crontab line as wxdb's schedule for `db` (an absolute path).
    static func cronTag(_ db: String) -> String { "# wxdb-schedule db=" + db }

    /// Escapes `%`, which cron turns into a newline (the rest of the line becomes stdin) unless
    /// written `\%`; cron removes the backslash before the shell sees the line.
    static func cron(_ line: String) -> String {
        line.replacing("%", with: "\\%")
    }

    /// One ExecStart word: double-quoted with `\` and `"` escaped (systemd's own unquoting), `$`
    /// doubled (else an environment variable) and `%` doubled (else a unit specifier).
    static func systemdQuote(_ text: String) -> String {
        var quoted = ""
        for char in text {
            switch char {
            case "\\": quoted += "\\\\"
            case "\"": quoted += "\\\""
            case "$": quoted += "$$"
            case "%": quoted += "%%"
            default: quoted.append(char)
            }
        }
        return "\"" + quoted + "\""
    }

    static func xml(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;")
            .replacing("\"", with: "&quot;").replacing("'", with: "&apos;")
    }
}
