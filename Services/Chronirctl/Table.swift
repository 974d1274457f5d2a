/// Plain-text tables for terminal output.
enum Table {
    static func render(header: [String], rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (k, cell) in row.enumerated() where k < widths.count { widths[k] = max(widths[k], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { k, c in k == cells.count - 1 ? c : c.padding(toLength: widths[k], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}
