// A socket's writes corked for the rest of the event loop's turn (pgliteWorker.mjs). Plain JS so
// the worker loads it the same under tsx, vitest and node.

/**
 * pglite-socket answers each protocol message PGlite writes with its own `socket.write`, on a
 * socket set NoDelay: a statement's BindComplete, rows, CommandComplete and ReadyForQuery went out
 * as three to five `write` calls, and each woke the engine's thread for a read and a parse. A
 * connection's writes are corked from the first of a turn to the end of it, so a reply goes out
 * as one `writev`. The end is `process.nextTick`: a tick queued from a promise continuation runs
 * once the microtask queue is drained, and pglite-socket runs a client chunk's messages in promise
 * continuations of one callback (PGlite executes synchronously), so the tick comes after the last
 * of them and before the event loop moves on (`setImmediate` measured 0.2–0.4 ms later on the
 * orders' hand-off: the next loop iteration). Nothing is held longer than the callback, and the
 * bytes and their order are pglite-socket's own.
 */
export const corkEachTurn = (socket) => {
  const write = socket.write
  let corked = false
  const uncork = () => {
    corked = false
    socket.uncork()
  }
  socket.write = function (...args) {
    if (!corked) {
      corked = true
      socket.cork()
      process.nextTick(uncork)
    }
    return write.apply(socket, args)
  }
  return socket
}
