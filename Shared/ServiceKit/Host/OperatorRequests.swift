import Foundation
import Logging
import Messaging
import Outbox
import Persistence

/// The operator's requests every service with a database answers: skip the event a consumer
/// is stopped at, and list, replay or drop dead letters.
enum OperatorRequests {
    static func register(in router: inout RPCRouter, consumers: ConsumerRegistry, database: Database, logger: Logger) {
        router.on(SystemMethods.ConsumerSkip.self) { req, _ in
            guard let consumer = consumers.consumer(of: req.stream) else {
                throw ServiceError.notFound("this service consumes no stream \(req.stream)")
            }
            let reason = req.reason.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !reason.isEmpty else { throw ServiceError.validation("a reason is required: it is recorded with the skipped event") }
            try await consumer.skip(seq: req.seq, reason: reason)
            return Empty()
        }
        router.on(SystemMethods.DeadLetters.self) { req, _ in
            let limit = req.limit ?? 100
            guard (1...10_000).contains(limit) else { throw ServiceError.validation("limit must be 1…10000") }
            return .init(deadLetters: try await DeadLetterStore.list(in: database, stream: req.stream, limit: limit))
        }
        router.on(SystemMethods.DeadLetterReplay.self) { req, _ in
            guard let applier = consumers.applier(of: req.stream) else {
                throw ServiceError.notFound("this service consumes no stream \(req.stream)")
            }
            try await applier.replayDeadLetter(stream: req.stream, seq: req.seq)
            return Empty()
        }
        router.on(SystemMethods.DeadLetterDrop.self) { req, _ in
            guard try await DeadLetterStore.drop(in: database, stream: req.stream, seq: req.seq) else {
                throw ServiceError.notFound("no dead letter \(req.stream)/\(req.seq)")
            }
            logger.notice("dead letter dropped by an operator", metadata: ["stream": "\(req.stream)", "seq": "\(req.seq)"])
            return Empty()
        }
    }
}
