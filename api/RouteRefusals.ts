/**
 * A route's documented refusals, read from the error table (issue 32: every refusal carries its
 * route's possible codes). A route names the failure classes its service call can fail with
 * (their `Rows` in `ErrorTable`) and the codes it or its key check answers itself; each status
 * those rows reach becomes a `refusal` with exactly the codes answered there. The document thus
 * follows the table: a row added to a class shows up in every route whose service fails with it.
 *
 * A class's rows are all of its reasons, so a route may list a code one of its paths never
 * reaches today (docs/decisions.md "Typed contract: refusal codes"); never the reverse.
 */
import type { ErrorCode } from "../src/domain/ErrorCodes.js"
import type { AuthNeed } from "../src/services/wallets/Principal.js"
import type { AgentAuthRequirements } from "./auth/AgentKeyAuth.js"
import { type Row, statusOf } from "./ErrorTable.js"
import { refusal } from "./OpenApi.js"
import type { ResponseDoc } from "./Router.js"

export type RowTable = Readonly<Record<string, Row>>
export type CodesByStatus = Readonly<Record<number, ReadonlyArray<ErrorCode>>>

/**
 * What the agent-key check (`AgentKeyAuth.authenticate`) answers with `req`, beyond the router's
 * 429: a bad or expired key, a missing scope, the plan, a test key on a rail without test mode, a
 * paused key (403 VALIDATION_FAILED, reason key_paused).
 */
export const keyCheckRefusals = (req: AgentAuthRequirements): CodesByStatus => {
  const forbidden: Array<ErrorCode> = [
    ...(req.scopes !== undefined || req.anyScope !== undefined ? (["SCOPE_MISSING"] as const) : []),
    ...(req.minTier !== undefined ? (["TIER_REQUIRED"] as const) : []),
    ...(req.testKeys === "forbid" ? (["TEST_ENVIRONMENT_FORBIDDEN"] as const) : []),
    ...(req.whilePaused !== "allow" ? (["VALIDATION_FAILED"] as const) : [])
  ]
  return { 401: ["UNAUTHORIZED", "KEY_EXPIRED"], ...(forbidden.length > 0 ? { 403: forbidden } : {}) }
}

/**
 * What the owner-or-key check of the wallet and transfer routes (`makeWalletAuthenticate`, then
 * the route's `admit`) answers for `need`: an agent key's check (a scope, a paused key), or an
 * owner credential's 401 (a credential of a kind the route does not take is 401 too).
 */
export const callerRefusals = (need: AuthNeed): CodesByStatus =>
  need.credentials.includes("agentKey")
    ? keyCheckRefusals({ ...(need.scope !== undefined ? { scopes: [need.scope] } : {}), ...(need.whilePaused !== undefined ? { whilePaused: need.whilePaused } : {}) })
    : { 401: ["UNAUTHORIZED"] }

/** Codes by status, merged (each code once per status, in order). */
export const mergeCodes = (...parts: ReadonlyArray<CodesByStatus>): CodesByStatus => {
  const out: Record<number, Array<ErrorCode>> = {}
  for (const part of parts) {
    for (const [status, codes] of Object.entries(part)) {
      const at = (out[Number(status)] ??= [])
      for (const c of codes) if (!at.includes(c)) at.push(c)
    }
  }
  return out
}

/** The envelope codes `tables` answer, by status (plain rows left out: not the envelope). */
export const tableCodes = (...tables: ReadonlyArray<RowTable>): CodesByStatus =>
  mergeCodes(...tables.flatMap((t) => Object.values(t).filter((r) => r.plain !== true).map((r) => ({ [statusOf(r)]: [r.code] }))))

/**
 * The refusals of a route whose service fails with `tables`, plus the codes the route answers
 * itself (`own`: its key check, a guard, its own decoding), a note per status. A 500 only the
 * storage rows reach (`INTERNAL`) stays the router's (`x-router-refusals`).
 */
export const tableRefusals = (
  tables: ReadonlyArray<RowTable>,
  own: CodesByStatus = {},
  notes: Readonly<Record<number, string>> = {}
): Record<number, ResponseDoc> =>
  Object.fromEntries(
    Object.entries(mergeCodes(own, tableCodes(...tables)))
      .filter(([status, codes]) => !(status === "500" && codes.every((c) => c === "INTERNAL") && own[500] === undefined))
      .map(([status, codes]) => [Number(status), refusal(codes as unknown as readonly [ErrorCode, ...ErrorCode[]], notes[Number(status)])])
  )
