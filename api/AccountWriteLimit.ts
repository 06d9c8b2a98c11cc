/**
 * The per-account write limits of spec document 2, section 8 (staking writes and fee claims, 6 a
 * minute each), answered as 429 `RATE_LIMITED` with `Retry-After`. The count lives in PostgreSQL
 * (`src/db/WindowTakes.ts`), so it holds across restarts and across engine processes.
 */
import { Effect } from "effect"
import { type ApiError, apiError } from "../src/domain/ApiError.js"
import type { AccountWriteWindow } from "../src/db/WindowTakes.js"
import { mapFailure } from "./ErrorTable.js"

/** Counts one write of the account, or fails 429 with the whole seconds until one leaves the window. */
export const takeAccountWrite = (window: AccountWriteWindow, accountId: string, nowMs: number, what: string): Effect.Effect<void, ApiError> =>
  Effect.flatMap(mapFailure(window.take(accountId, nowMs)), (take) => {
    if (take.taken) return Effect.void
    const retryAfterSec = Math.max(1, Math.ceil(take.retryAfterMs / 1000))
    return Effect.fail(
      apiError("RATE_LIMITED", `Over ${window.limit} ${what} per minute for this account`, {
        extra: { limitPerMin: window.limit, retryAfter: retryAfterSec },
        headers: { "Retry-After": String(retryAfterSec) }
      })
    )
  })
