extension EventLoop: TaskExecutor {
    /// Runs a task's job on the loop thread.
    ///
    /// The loop is a `TaskExecutor`: a task started with `Task(executorPreference: loop)` (or code in
    /// `withTaskExecutorPreference(loop)`) runs its non-isolated async code on the loop thread, so a
    /// frame handed to it by the loop is picked up in the same loop iteration, without waking another
    /// thread. Such code must never block: it would stall every connection of the loop.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
