/**
 * Failed-authentication throttle per client address (hardening issue 17, item 6): an address
 * whose credentials were refused 401 `failuresPerWindow` times within the sliding window is
 * answered 429 `RATE_LIMITED` (with `Retry-After`) on every credentialed route, before its
 * credential is looked at (no key lookup, no query), until the window slides past the failures.
 * Successful requests and public routes neither count nor are refused.
 *
 * Bounded: at most `maxClients` addresses are tracked (least recently failed evicted first, which
 * can only make the throttle more lenient). The address is the connection's: behind a proxy every
 * client shares the proxy's budget (README, "Behind a proxy").
 */
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import { RateLimiter } from "../RateLimiter.js"
import type { SharedScope } from "../../src/db/SharedWindowCounts.js"

export interface FailedAuthLimits {
  readonly failuresPerWindow: number
  readonly windowMs: number
  readonly maxClients: number
}

/** 30 refused credentials a minute per address; 10,000 addresses tracked. */
export const DefaultFailedAuthLimits: FailedAuthLimits = { failuresPerWindow: 30, windowMs: 60_000, maxClients: 10_000 }

export class FailedAuthThrottle {
  readonly limits: FailedAuthLimits
  readonly #failures: RateLimiter

  /** `shared`: failures other API processes counted for the same clients (replicas behind one database). */
  constructor(limits: Partial<FailedAuthLimits> = {}, shared?: SharedScope) {
    this.limits = { ...DefaultFailedAuthLimits, ...limits }
    this.#failures = new RateLimiter({ limit: this.limits.failuresPerWindow, windowMs: this.limits.windowMs, maxKeys: this.limits.maxClients, shared })
  }

  /** Addresses tracked now (at most `maxClients`). */
  get size(): number {
    return this.#failures.size
  }

  /** The 429 for an address over its budget of failures, or undefined. Counts nothing. */
  refusal(address: string, nowMs: number): ApiError | undefined {
    const d = this.#failures.check(address, nowMs)
    if (d.allowed) return undefined
    return apiError("RATE_LIMITED", `Too many refused credentials from this address; retry after ${d.retryAfterSec} s`, {
      retryable: true,
      extra: { limitPerWindow: this.limits.failuresPerWindow, windowSec: this.limits.windowMs / 1000, retryAfter: d.retryAfterSec },
      headers: { "Retry-After": String(d.retryAfterSec) }
    })
  }

  /** Counts one refused credential (a 401) from `address`. */
  failed(address: string, nowMs: number): void {
    this.#failures.hit(address, nowMs)
  }
}
