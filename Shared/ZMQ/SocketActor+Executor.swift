/// A socket's thread as a task executor: a task started with
/// `Task(executorPreference: socket)` runs its jobs on the thread that owns the socket,
/// interleaved with the socket's reads and sends. A server that answers light requests this
/// way spends no thread hop to start a request and none to hand its reply to the socket (the
/// reply is queued from the owning thread, which is awake). A job that computes for long
/// holds up the socket meanwhile, so only short, mostly-waiting work belongs here; anything
/// heavier prefers `globalConcurrentExecutor` for its part.
extension SocketActor: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueueJob(UnownedJob(job))
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
