import Foundation
import WxCore

enum ScheduleCommand {
    enum Kind: String { case cron, systemd, launchd }

    struct Options: CommandOptions {
        var database = DatabaseOption()
        var kinds: [Kind] = []
        var log: String?

        static var table: [Opt<Options>] {
            [Opt(spec: OptionSpec(name: "cron", valueName: nil, help: "A crontab line (append it with 'crontab -e').")) { options, _ in options.kinds.append(.cron) },
             Opt(spec: OptionSpec(name: "systemd", valueName: nil, help: "A systemd user service and timer.")) { options, _ in options.kinds.append(.systemd) },
             Opt(spec: OptionSpec(name: "launchd", valueName: nil, help: "A launchd agent property list (macOS).")) { options, _ in options.kinds.append(.launchd) },
             .string("log", "file", "Where cron and launchd write output.", default: "wxdb.log beside the database", \.log)]
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

    static func run(_ options: Options, _ context: Context) throws {
        let kind = options.kinds[0]
        let binary = executablePath()
        let db = absolute(options.database.path(context))
        let log = absolute(options.log ?? ((db as NSString).deletingLastPathComponent + "/wxdb.log"))
        notes(kind, context)
        let minute = minute(for: db)
        // Endpoint overrides and the key are not written out: the key must never land in a file we print.
        switch kind {
        case .cron:
            context.out("# wxdb: fetch forecasts every hour at minute \(minute)\n")
            context.out("\(minute) * * * * \(shell(binary)) --db \(shell(db)) --quiet ingest >> \(shell(log)) 2>&1\n")
        case .systemd:
            context.out("""
                # ~/.config/systemd/user/wxdb-ingest.service
                [Unit]
                Description=wxdb: fetch and store weather forecasts
                Wants=network-online.target
                After=network-online.target

                [Service]
                Type=oneshot
                ExecStart=\(systemdQuote(binary)) --db \(systemdQuote(db)) --quiet ingest
                # output goes to the journal: journalctl --user -u wxdb-ingest

                # ~/.config/systemd/user/wxdb-ingest.timer
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
            context.out("""
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <!-- ~/Library/LaunchAgents/com.wxdb.ingest.plist; load with: launchctl load <this file> -->
                <plist version="1.0">
                <dict>
                    <key>Label</key><string>com.wxdb.ingest</string>
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
            context.note("Note: WXDB_API_KEY is set, but the key is not in this text (wxdb never prints it), so the job would run on the free limits.")
            switch kind {
            case .cron:
                context.note("  Keep the key in a file only you can read, and let the line read it:")
                context.note("    (umask 077; mkdir -p ~/.config/wxdb; printf '%s' \"$WXDB_API_KEY\" > ~/.config/wxdb/api-key)")
                context.note("  then start the command in the crontab line with: WXDB_API_KEY=$(cat ~/.config/wxdb/api-key) ")
            case .systemd:
                context.note("  Keep the key in an environment file only you can read, and name it in the service:")
                context.note("    (umask 077; mkdir -p ~/.config/wxdb; printf 'WXDB_API_KEY=%s\\n' \"$WXDB_API_KEY\" > ~/.config/wxdb/wxdb.env)")
                context.note("  and add under [Service]: EnvironmentFile=%h/.config/wxdb/wxdb.env")
            case .launchd:
                context.note("  Add it under EnvironmentVariables in the property list, and keep the file readable only by you (chmod 600).")
            }
        }
        if kind == .systemd {
            context.note("Note: on a server, run 'loginctl enable-linger $USER' once, or the timer stops when you log out.")
        }
    }

    /// The absolute path of the running wxdb binary.
    static func executablePath() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return absolute(CommandLine.arguments.first ?? "wxdb")
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return (path as NSString).standardizingPath }
        return ((FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path) as NSString).standardizingPath
    }

    /// Single-quotes for sh, so paths with spaces survive cron.
    static func shell(_ text: String) -> String {
        if text.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+:@".contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func systemdQuote(_ text: String) -> String {
        text.contains(" ") ? "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : text
    }

    static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
