import Foundation

/// Runs a reference tool (verif, Python with BoM's scores) and collects what it prints.
public enum Subprocess {
    /// Runs `executable arguments` in `folder` (the current one when nil), stderr discarded, and
    /// returns its exit status and standard output.
    public static func run(_ executable: String, _ arguments: [String], in folder: URL? = nil) throws -> (
        status: Int32, output: Data
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }
}
