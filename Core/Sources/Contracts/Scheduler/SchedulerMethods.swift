import Foundation
import Wire

/// What `chronirctl scheduler status` shows.
public struct SchedulerStatus: Codable, Sendable {
    public struct Replica: Codable, Sendable {
        public var instance: String
        public var heartbeatAt: Date
        public var alive: Bool
        public var partitions: Int
        public var minEpoch: Int64?
        public var maxEpoch: Int64?
        public var timersInWheel: Int
        public var firesLastMinute: Int
        public var latenessP50Ms: Double
        public var latenessP99Ms: Double
        public var latenessMaxMs: Double

        public init(instance: String, heartbeatAt: Date, alive: Bool, partitions: Int, minEpoch: Int64?, maxEpoch: Int64?,
                    timersInWheel: Int, firesLastMinute: Int, latenessP50Ms: Double, latenessP99Ms: Double, latenessMaxMs: Double) {
            self.instance = instance
            self.heartbeatAt = heartbeatAt
            self.alive = alive
            self.partitions = partitions
            self.minEpoch = minEpoch
            self.maxEpoch = maxEpoch
            self.timersInWheel = timersInWheel
            self.firesLastMinute = firesLastMinute
            self.latenessP50Ms = latenessP50Ms
            self.latenessP99Ms = latenessP99Ms
            self.latenessMaxMs = latenessMaxMs
        }
    }

    public var partitions: Int
    public var unownedPartitions: Int
    public var replicas: [Replica]
    /// Pending timers in the table (all, and due within the horizon).
    public var timersInTable: Int
    public var timersInHorizon: Int
    public var firesLastMinute: Int

    public init(partitions: Int, unownedPartitions: Int, replicas: [Replica], timersInTable: Int, timersInHorizon: Int, firesLastMinute: Int) {
        self.partitions = partitions
        self.unownedPartitions = unownedPartitions
        self.replicas = replicas
        self.timersInTable = timersInTable
        self.timersInHorizon = timersInHorizon
        self.firesLastMinute = firesLastMinute
    }
}

/// Requests the scheduler answers (any replica).
public enum SchedulerMethods {
    public struct Status: RPCMethod {
        public typealias Request = Empty
        public typealias Response = SchedulerStatus
        public static let type = "scheduler.status"
        /// Read-only: the operator, and the gateway for its operations route (`/v1/ops/status`).
        public static let access = MethodAccess.principals([BusPolicy.operatorPrincipal, "gateway"])
    }
}
