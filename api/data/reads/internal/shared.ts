/**
 * What the data service's read routes share: a ClickHouse failure is the retryable 503
 * `FEED_UNAVAILABLE` (logged with its cause; the client sees only the code), and timestamps are
 * ISO 8601 or null.
 */
import { Effect } from "effect"
import type { ClickHouseError } from "../../../../clickhouse/ClickHouseError.js"
import { type ApiError, apiError } from "../../../../src/domain/ApiError.js"

export const feedUnavailable = (e: ClickHouseError): ApiError =>
  apiError("FEED_UNAVAILABLE", `Market history is unavailable; retry shortly (${e.reason})`, { retryable: true, headers: { "Retry-After": "2" } })

/** A ClickHouse read for `what` (e.g. "token read"); its failure is logged and answered 503. */
export const chRead =
  (what: string) =>
  <A>(effect: Effect.Effect<A, ClickHouseError>): Effect.Effect<A, ApiError> =>
    effect.pipe(
      Effect.tapError((e) => Effect.logWarning(`${what} failed: ${e.message}`)),
      Effect.mapError(feedUnavailable)
    )

export const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString())
