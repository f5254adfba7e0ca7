extension EventLoop: TaskExecutor {
    /// Runs a task's job on the loop thread.
    ///
    /// The loop is a `TaskExecutor`: a task started with `Task(executorPreference: loop)` (or code in
    /// `withTaskExecutorPreference(loop)`) runs its non-isolated async code on the loop thread, and so
    /// does the code of a default actor it calls, so a frame handed to it by the loop is picked up in
    /// the same loop iteration, without waking another thread. A job that holds the thread longer than
    /// the loop's `takeover` bound gets the loop taken over by a standby thread (sockets and timers go
    /// on there); such a job only delays the tasks queued behind it.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueueTaskJob(UnownedJob(job))
    }
}
