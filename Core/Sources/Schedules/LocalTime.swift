import Foundation
import Wire

/// Converts between instants and local wall-clock times of one zone, with the rules of
/// RFC 5545 §3.3.5: a local time inside a spring-forward gap is read with the offset before
/// the gap (02:30 → 03:30 local); an ambiguous local time (fall-back overlap) takes its first
/// occurrence.
struct LocalTime: Sendable {
    let zone: TimeZone

    /// UTC offset in seconds at an instant.
    func offset(at seconds: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
    }

    /// The local day number at an instant.
    func localDay(at seconds: Int64) -> Int {
        Int(CivilCalendar.floorDiv(Int(seconds + offset(at: seconds)), 86_400))
    }

    /// The instant of a local day and time of day.
    func instant(day: Int, secondOfDay: Int) -> Int64 {
        let naive = Int64(day) * 86_400 + Int64(secondOfDay)
        // Offsets a day before and after: at most one transition lies in between for every
        // real zone, so the two bracket both readings of the local time.
        let before = offset(at: naive - 86_400)
        let after = offset(at: naive + 86_400)
        let t1 = naive - before
        if before == after {
            if offset(at: t1) == before { return t1 }
            // A transition and its reversal within two days (rare historic cases): search.
            return search(naive)
        }
        let t2 = naive - after
        let v1 = offset(at: t1) == before
        let v2 = offset(at: t2) == after
        switch (v1, v2) {
        case (true, true): return min(t1, t2)   // overlap: the first occurrence
        case (true, false): return t1
        case (false, true): return t2
        case (false, false): return t1          // gap: the offset before the gap
        }
    }

    private func search(_ naive: Int64) -> Int64 {
        var candidates: [Int64] = []
        var probe = naive - 86_400
        while probe <= naive + 86_400 {
            let o = offset(at: probe)
            let t = naive - o
            if offset(at: t) == o { candidates.append(t) }
            probe += 3600
        }
        return candidates.min() ?? (naive - offset(at: naive - 86_400))
    }
}
