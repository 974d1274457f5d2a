import Foundation

/// One field of the completions CSV export.
public enum CSVField {
    /// RFC 4180 quoting; a leading =, +, -, @, tab or CR is prefixed with ' so spreadsheets do
    /// not run it. Looks at Unicode scalars: `"\r\n"` is one `Character`, equal to neither
    /// `"\r"` nor `"\n"`, and a note holding it went out unquoted, starting a row of its own.
    public static func escape(_ value: String) -> String {
        var v = value
        if let first = v.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { v = "'" + v }
        guard v.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return v }
        return "\"" + v.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
