/**
 * The delivery retry schedule of spec section 6: after a failed attempt the next one waits 1 min,
 * 5 min, 15 min, 30 min, 1 h, 2 h, then 4 h; the 8th failed attempt is final (about 8 hours after
 * the event).
 */
const MINUTE_MS = 60_000

/** Wait after the n-th failed attempt (index n-1), in milliseconds. */
export const retryDelaysMs: ReadonlyArray<number> = [1, 5, 15, 30, 60, 120, 240].map((m) => m * MINUTE_MS)

/** Attempts per delivery, the first included. */
export const maxAttempts = retryDelaysMs.length + 1

/**
 * When to try again after `attempts` failed attempts ended at `failedAtMs`; undefined when that
 * failure was the last allowed.
 */
export const nextAttemptAtMs = (attempts: number, failedAtMs: number): number | undefined => {
  const delay = retryDelaysMs[attempts - 1]
  return attempts >= 1 && delay !== undefined ? failedAtMs + delay : undefined
}
