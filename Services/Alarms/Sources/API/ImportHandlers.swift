import Contracts
import Foundation
import Messaging

extension AlarmHandlers {
    /// The most alarms one import takes.
    static let maxImport = 500

    /// Creates each alarm as `alarms.create` would (same rules, same tier limits), without the
    /// per-minute creation limit; each alarm's id is the client's, so an alarm already imported
    /// with the same body is `unchanged` and a retried batch creates nothing twice. One alarm
    /// failing does not stop the others: its result says why.
    func batchImport(_ req: AlarmImport, actor: String) async throws -> AlarmImportResult {
        guard !req.alarms.isEmpty, req.alarms.count <= Self.maxImport else {
            throw ServiceError(.validationFailed, "alarms must hold 1 to \(Self.maxImport) alarms")
        }
        guard req.alarms.allSatisfy({ $0.id != nil }) else {
            throw ServiceError(.validationFailed, "every imported alarm needs its id (the client's), so a retry imports it once")
        }
        var results: [AlarmImportResult.Item] = []
        var created = 0
        var failed = 0
        for alarm in req.alarms {
            do {
                let r = try await create(alarm, actor: actor, rateLimited: false)
                results.append(.init(id: r.alarm.id, status: r.created ? "created" : "unchanged"))
                if r.created { created += 1 }
            } catch let error as ServiceError where error.code != .serviceUnavailable && error.code != .internalError {
                results.append(.init(id: alarm.id, status: "failed", error: error))
                failed += 1
            }
        }
        return AlarmImportResult(results: results, created: created, failed: failed)
    }
}
