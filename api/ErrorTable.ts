/**
 * The one table from a service failure to the wire. Services fail with their own tagged errors
 * (`KeyError`, ... each a `reason` union, see `src/domain/ServiceFailure.ts`); this module says,
 * for every tag and every reason, which spec `code` answers it, with which HTTP status, `field`,
 * wire `reason` and `retryable`. Routes call `toApiError` / `mapFailure` (or `answerFailure` on the
 * market-data service, whose refusals are plain bodies) and never build a refusal for a service failure
 * themselves.
 *
 * Invariants:
 * - Exhaustive by construction: `Rows<E>` is a record over `E["reason"]`, so a new reason without
 *   a row does not compile; `test/conformance/errorTable.test.ts` also reads each error class's
 *   reasons from its Schema at run time and every row's code from `ErrorCodes`.
 * - A row's `status` is set only where the spec names a different status for that situation
 *   than the code's usual one (the overrides `ErrorCodes` lists); otherwise the code's status.
 * - The failure's own members win over the row's defaults: `field` (a decoder's path), the
 *   `retryable` flag when it depends on the situation, and `details`, written beside the code.
 * - `SqlError` that reaches a route unconverted (a repository read in auth or a route module)
 *   is `INTERNAL`; services decide their storage failures themselves.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { ApiError, apiError } from "../src/domain/ApiError.js"
import { type ErrorCode, ErrorCodes } from "../src/domain/ErrorCodes.js"
import type { FailureMembers } from "../src/domain/ServiceFailure.js"
import { AccountError } from "../src/services/accounts/AccountError.js"
import { DEVICE_POLL_INTERVAL_SEC } from "../src/services/accounts/Devices.js"
import { KeyError } from "../src/services/keys/KeyError.js"
import { json, type Reply } from "./Http.js"

export interface Row {
  readonly code: ErrorCode
  /** Only where the spec gives this situation a status other than the code's usual one. */
  readonly status?: number
  /** The field the refusal names when the failure carries none. */
  readonly field?: string
  /** The spec's `reason` member, written beside `code` (a failure's `details.reason` wins). */
  readonly reason?: string
  /** When the failure does not carry its own flag; absent: the code's hint (`ErrorCodes`). */
  readonly retryable?: boolean
  /** Response headers the spec names for this refusal. */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * The market-data service answers this refusal with its plain body `{error: message,
   * ...details}` and the row's status instead of the envelope (spec document 2, section 7).
   */
  readonly plain?: true
}

/** One row per reason: a missing reason is a compile error. */
export type Rows<E extends { readonly reason: string }> = { readonly [R in E["reason"]]: Row }

const KeyRows: Rows<KeyError> = {
  account_gone: { code: "UNAUTHORIZED" },
  agent_features_off: { code: "VALIDATION_FAILED", status: 403 },
  not_delegated: { code: "AGENT_WALLET_NOT_DELEGATED", retryable: true },
  wallets_unreachable: { code: "KEY_ISSUANCE_FAILED", retryable: true },
  issuance_storage: { code: "KEY_ISSUANCE_FAILED", retryable: true },
  active_key_limit: { code: "VALIDATION_FAILED" },
  not_found: { code: "VALIDATION_FAILED", status: 404, field: "prefix" },
  revoked: { code: "VALIDATION_FAILED", status: 409 },
  expired: { code: "VALIDATION_FAILED", status: 409 },
  partner_key: { code: "KEY_ACCESS_PARTNER_KEY" },
  access_stale: { code: "KEY_ACCESS_STALE" },
  loosen_requires_session: { code: "LOOSEN_REQUIRES_SESSION" },
  access_unavailable: { code: "SWAP_FAILED", status: 503, retryable: true },
  spend_limit_exceeded: { code: "SPEND_LIMIT_EXCEEDED" },
  tx_limit_reached: { code: "KEY_LIMIT_REACHED" },
  storage: { code: "INTERNAL" }
}

const AccountRows: Rows<AccountError> = {
  account_not_found: { code: "VALIDATION_FAILED", status: 404, field: "accountId" },
  disable_refused: { code: "VALIDATION_FAILED", status: 403, field: "enabled" },
  solana_wallet_missing: { code: "VALIDATION_FAILED", status: 403, field: "enabled" },
  wallets_unreachable: { code: "KEY_ISSUANCE_FAILED", retryable: true },
  user_code_not_found: { code: "VALIDATION_FAILED", status: 404, field: "userCode" },
  already_decided: { code: "VALIDATION_FAILED", status: 409, field: "userCode" },
  device_not_found: { code: "VALIDATION_FAILED", status: 404, field: "prefix" },
  // RFC 8628 section 3.5 error names, in the spec's `reason` member.
  invalid_grant: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "invalid_grant" },
  access_denied: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "access_denied" },
  expired_token: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "expired_token" },
  authorization_pending: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "authorization_pending", retryable: true },
  slow_down: { code: "RATE_LIMITED", reason: "slow_down", headers: { "Retry-After": String(DEVICE_POLL_INTERVAL_SEC) } },
  storage: { code: "INTERNAL" }
}

/** Every service failure a route may see. */
export type ServiceFailure = KeyError | AccountError | SqlError

/** The error classes whose reasons the table covers (the conformance test reads their Schemas). */
export const FailureClasses = [KeyError, AccountError] as const

type ReasonedTag = Exclude<ServiceFailure, SqlError>["_tag"]

export const ErrorTable: { readonly [T in ReasonedTag]: Rows<Extract<ServiceFailure, { readonly _tag: T }>> } & { readonly SqlError: Row } = {
  KeyError: KeyRows,
  AccountError: AccountRows,
  SqlError: { code: "INTERNAL" }
}

const sqlMessage = "Internal error; nothing was recorded"

/** The row that answers `e`. */
export const rowOf = (e: ServiceFailure): Row =>
  e._tag === "SqlError" ? ErrorTable.SqlError : (ErrorTable[e._tag] as Readonly<Record<string, Row>>)[e.reason]!

/** The wire error for a service failure (the envelope refusal). */
export const toApiError = (e: ServiceFailure): ApiError => {
  const row = rowOf(e)
  if (e._tag === "SqlError") return apiError(row.code, sqlMessage)
  const f: FailureMembers = e
  const extra = { ...(row.reason !== undefined ? { reason: row.reason } : {}), ...f.details }
  const field = f.field ?? row.field
  const retryable = f.retryable ?? row.retryable
  return new ApiError({
    code: row.code,
    message: f.message,
    ...(field !== undefined ? { field } : {}),
    ...(row.status !== undefined ? { status: row.status } : {}),
    ...(retryable !== undefined ? { retryable } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
    ...(row.headers !== undefined ? { headers: { ...row.headers } } : {})
  })
}

/**
 * What a market-data route answers for a failure: the plain reply for a plain row (a success of
 * the handler), the envelope refusal otherwise.
 */
export const answerFailure = (e: ServiceFailure): Effect.Effect<Reply, ApiError> => {
  const row = rowOf(e)
  if (row.plain === true && e._tag !== "SqlError") {
    const f: FailureMembers = e
    return Effect.succeed(json(row.status ?? ErrorCodes[row.code].status, { error: f.message, ...f.details }))
  }
  return Effect.fail(toApiError(e))
}

/** An unconverted storage failure (a repository read in auth or a route module): logged, then its row. */
export const storageRefusal = (e: SqlError): Effect.Effect<never, ApiError> =>
  Effect.zipRight(Effect.logError("storage failure", e), Effect.fail(toApiError(e)))

/** Maps an effect's failures through the table. */
export const mapFailure = <A, R>(self: Effect.Effect<A, ServiceFailure, R>): Effect.Effect<A, ApiError, R> =>
  Effect.catchAll(self, (e) => (e._tag === "SqlError" ? storageRefusal(e) : Effect.fail(toApiError(e))))
