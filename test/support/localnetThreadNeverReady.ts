/**
 * A thread program for `LocalnetThread.test.ts` that never reports `ready` (a chain whose start
 * hangs): it only keeps its thread alive, so the engine's start bound must end it.
 */
setInterval(() => {}, 1_000)
