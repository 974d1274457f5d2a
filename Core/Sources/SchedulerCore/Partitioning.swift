/// Stable partitioning of alarm ids (FNV-1a 64): the same id lands in the same partition in
/// every process and release (a replica's leases are partitions; a change here would move timers
/// between owners).
public enum Partitioning {
    public static func partition(of alarmId: String, partitions: Int) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in alarmId.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return Int(hash % UInt64(partitions))
    }
}
