/**
 * The market-data service's personal routes (spec 4.5): follows (Pro 25, Max 100), rules (20,
 * pattern params validated), personal signals (`/v1/me/signals`, cursor `next_after`, up to 200
 * a page), own groups (Pro 1, Max 5, 25 wallets each, private to the account) and the watchlist
 * (200 wallets).
 *
 * Shapes (the data service's plain bodies, spec 7):
 * - 401 `{"error": "invalid api key"}` comes ready from `authenticate`.
 * - 403 `{"error": "requires Pro or Max"}` for a Free account on follows, rules, personal
 *   signals and own groups (the watchlist is open to every plan).
 * - 429 `{"error": "<what> limit reached", "quota": n, "used": n}` over a cap.
 * - 404 `{"error": "<what> not found"}` for an id that is not the caller's.
 * - 400 is the shared `VALIDATION_FAILED` envelope naming the field (as `/v1/signals`);
 *   a database failure is 503 `FEED_UNAVAILABLE` (retryable).
 * Store failures (`PersonalError`) map through the one table (`api/ErrorTable.ts`).
 *
 * The watchlist also checks the key's scopes (spec 4.5: `account:read` to read, `launch:write` to
 * change): 403 `SCOPE_MISSING`, the code of spec 5, in its envelope.
 *
 * Order of checks: credential, plan and scope (through the route's `authenticate`), parameters (declared;
 * the router decodes them), then the write; every refusal records nothing.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import type { PlanId as DataPlan } from "../../../src/domain/Plans.js"
import type { Signal } from "../../../src/domain/Signal.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { type ApiError, apiError, validationFailed } from "../../../src/domain/ApiError.js"
import type { PersonalSignalsRunner } from "../../../src/services/personal/PersonalSignals.js"
import {
  CAPS,
  LABEL_MAX,
  makePersonalStore,
  NAME_MAX,
  type PaidPlan,
  type PersonalError,
  type PersonalStore,
  SIGNALS_PAGE_DEFAULT,
  SIGNALS_PAGE_MAX
} from "../../../src/services/personal/PersonalStore.js"
import { isRuleProblem, type RuleParams, validateRule } from "../../../src/services/personal/Rules.js"
import type { Pattern } from "../../../src/domain/Signal.js"
import { projectForPlan } from "../../../src/services/signals/SignalTape.js"
import type { TrackingShape } from "../../../src/services/tracking/Tracking.js"
import { answerFailure } from "../../ErrorTable.js"
import { errorReply, json, type Reply, type Request } from "../../Http.js"
import { intParam, isApiError as isErr, param, stringParam } from "../../QueryParams.js"
import { decodedBody, route, type RouteDef } from "../../Router.js"
import { answer as answerDoc, plainError, plainErrorOrEnvelope, refusal } from "../../OpenApi.js"
import { Follow, Follows, OwnGroup, OwnGroups, PersonalDeleted, PersonalSignals, Rule, Rules, Watch, Watchlist } from "../reads/internal/responses.js"


export interface PersonalCaller {
  readonly accountId: string
  readonly plan: DataPlan
  /** The bearer key's scopes (the watchlist checks them). */
  readonly scopes: ReadonlyArray<string>
}

/**
 * Spec 4.5: the watchlist needs `account:read` to read and `launch:write` to change. Reading is
 * also open to `launch:write` (a key that may change the list may see it; keys issued before
 * `account:read` existed keep their stored scopes): docs/decisions.md.
 */
export const WATCHLIST_READ_SCOPES: ReadonlyArray<string> = ["account:read", "launch:write"]
export const WATCHLIST_WRITE_SCOPES: ReadonlyArray<string> = ["launch:write"]

/** The 403 `SCOPE_MISSING` envelope when the key holds none of `scopes` (the main service's code, spec 5). */
export const scopeRefusal = (caller: PersonalCaller, scopes: ReadonlyArray<string>): Reply | undefined =>
  scopes.some((s) => caller.scopes.includes(s))
    ? undefined
    : errorReply(
        apiError("SCOPE_MISSING", scopes.length === 1 ? `This key lacks the ${scopes[0]} scope` : `This key needs one of ${scopes.join(", ")}`, {
          extra: { scope: scopes[0] }
        })
      )

export interface PersonalRoutesDeps {
  readonly sql: SqlClient.SqlClient
  /** The data bearer: the caller, or a ready refusal (the plain 401). */
  readonly authenticate: (req: Request) => Effect.Effect<PersonalCaller, Reply>
  /** Tracked wallets: validates a rule's `wallet_id` against the plan and hides groups the plan may not see in signals. */
  readonly tracking?: TrackingShape
  /** The personal-signals writer of this process: told when follows, rules or groups change. */
  readonly personal?: PersonalSignalsRunner
  /** Store options (tests): ids. Time is the runtime's `Clock`. */
  readonly newId?: (prefix: string) => string
}

export const REQUIRES_PRO_OR_MAX_BODY = { error: "requires Pro or Max" } as const
export const requiresProOrMaxReply = (): Reply => json(403, REQUIRES_PRO_OR_MAX_BODY)

const ADDRESS_FORMAT: Record<ChainId, RegExp> = { solana: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, hood: /^0x[0-9a-fA-F]{40}$/ }
const ID_FORMAT = /^[A-Za-z0-9_.:-]{1,128}$/
const AUTH_HEADERS = ["authorization"]

type Parsed<A> = A | ApiError

/** An object body with only the allowed fields, or the first problem. */
const objectBody = (body: unknown, allowed: ReadonlyArray<string>): Parsed<Record<string, unknown>> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return validationFailed("body", "Request body must be a JSON object")
  for (const k of Object.keys(body)) if (!allowed.includes(k)) return validationFailed(k, `Unknown field '${k}'; expected ${allowed.join(", ")}`)
  return body as Record<string, unknown>
}

const parseChain = (v: unknown): Parsed<ChainId> => {
  if (v === undefined || v === null) return "solana"
  if (v !== "solana" && v !== "hood") return validationFailed("chain", "chain must be solana or hood")
  return v
}

const parseAddress = (chain: ChainId, v: unknown): Parsed<string> => {
  if (typeof v !== "string" || !ADDRESS_FORMAT[chain].test(v)) {
    return validationFailed("address", chain === "solana" ? "address must be a base58 Solana address" : "address must be a 0x-prefixed 20-byte address")
  }
  return chain === "hood" ? v.toLowerCase() : v
}

const parseText = (field: string, v: unknown, max: number, required: boolean): Parsed<string | null> => {
  if (v === undefined || v === null) return required ? validationFailed(field, `${field} is required`) : null
  if (typeof v !== "string" || v.trim().length === 0 || v.length > max) return validationFailed(field, `${field} must be 1 to ${max} characters`)
  return v.trim()
}

const parseId = (field: string, v: unknown): Parsed<string> =>
  typeof v === "string" && ID_FORMAT.test(v) ? v : validationFailed(field, `${field} must be an id`)

/** `{chain?, address}` (plus `extra` fields, returned as they are) from an object of fields. */
const chainAddressOf = (fields: Record<string, unknown>): Parsed<{ chain: ChainId; address: string }> => {
  const chain = parseChain(fields.chain)
  if (isErr(chain)) return chain
  const address = parseAddress(chain, fields.address)
  return isErr(address) ? address : { chain, address }
}

/** A JSON body `{chain?, address}`. */
const chainAddressBody = (body: unknown): Parsed<{ chain: ChainId; address: string }> => {
  const b = objectBody(body, ["chain", "address"])
  return isErr(b) ? b : chainAddressOf(b)
}

const idPath = (description: string) => ({
  id: param({ description, required: true, schema: { type: "string", pattern: ID_FORMAT.source }, decode: (raw, name) => parseId(name, raw) })
})

const followBody = chainAddressBody

const ruleBody = (body: unknown): Parsed<{ name: string; pattern: Pattern; walletId: string | null; params: RuleParams }> => {
  const b = objectBody(body, ["name", "pattern", "wallet_id", "params"])
  if (isErr(b)) return b
  const name = parseText("name", b.name, NAME_MAX, true)
  if (isErr(name)) return name
  const rule = validateRule(b.pattern, b.params)
  if (isRuleProblem(rule)) return validationFailed(rule.field, rule.message)
  let walletId: string | null = null
  if (b.wallet_id !== undefined && b.wallet_id !== null) {
    const id = parseId("wallet_id", b.wallet_id)
    if (isErr(id)) return id
    walletId = id
  }
  return { name: name!, pattern: rule.pattern, walletId, params: rule.params }
}

const groupBody = (body: unknown): Parsed<string> => {
  const b = objectBody(body, ["name"])
  if (isErr(b)) return b
  const name = parseText("name", b.name, NAME_MAX, true)
  return isErr(name) ? name : name!
}

/** The group id of `{id}`, or undefined when no body was sent (the query's `id` then). */
const groupIdBody = (body: unknown): Parsed<string | undefined> => {
  if (body === undefined) return undefined
  const b = objectBody(body, ["id"])
  return isErr(b) ? b : parseId("id", b.id)
}

const groupWalletBody = (body: unknown): Parsed<{ chain: ChainId; address: string }> =>
  body === undefined ? validationFailed("body", "Request body must be a JSON object `{chain, address}`") : chainAddressBody(body)

/** `{chain?, address}` of a JSON body, or undefined when none was sent (the query's then). */
const optionalChainAddressBody = (body: unknown): Parsed<{ chain: ChainId; address: string } | undefined> =>
  body === undefined ? undefined : chainAddressBody(body)

const watchBody = (body: unknown): Parsed<{ chain: ChainId; address: string; label: string | null }> => {
  const b = objectBody(body, ["chain", "address", "label"])
  if (isErr(b)) return b
  const w = chainAddressOf(b)
  if (isErr(w)) return w
  const label = parseText("label", b.label, LABEL_MAX, false)
  return isErr(label) ? label : { ...w, label }
}

const CURSOR_FORMAT = /^\d{1,19}$/
const signalsQuery = {
  after: param({
    description: "The previous page's next_after (omit for the oldest kept)",
    schema: { type: "string", pattern: CURSOR_FORMAT.source },
    decode: (raw, name) =>
      raw === undefined
        ? undefined
        : CURSOR_FORMAT.test(raw) && BigInt(raw) <= 9_223_372_036_854_775_807n
          ? BigInt(raw)
          : validationFailed(name, `${name} must be a next_after cursor`)
  }),
  limit: intParam(`1 to ${SIGNALS_PAGE_MAX}, default ${SIGNALS_PAGE_DEFAULT}`, { min: 1, max: SIGNALS_PAGE_MAX, default: SIGNALS_PAGE_DEFAULT })
}

const ChainAddressBody = Schema.Struct({ chain: Schema.optional(Schema.Literal("solana", "hood")), address: Schema.String })
const RuleBody = Schema.Struct({
  name: Schema.String,
  pattern: Schema.String,
  wallet_id: Schema.optional(Schema.String),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
const GroupBody = Schema.Struct({ name: Schema.String })
const GroupIdBody = Schema.Struct({ id: Schema.String })
const WatchBody = Schema.Struct({ chain: Schema.optional(Schema.Literal("solana", "hood")), address: Schema.String, label: Schema.optional(Schema.String) })

const common = {
  401: plainError("`{\"error\": \"invalid api key\"}`"),
  503: refusal(["FEED_UNAVAILABLE"], "retryable")
} as const
const paid = { ...common, 403: plainError("`{\"error\": \"requires Pro or Max\"}` (Free)") } as const

export const personalRoutes = (deps: PersonalRoutesDeps): ReadonlyArray<RouteDef> => {
  const store: PersonalStore = makePersonalStore(deps.sql, deps.newId !== undefined ? { newId: deps.newId } : {})
  const changed = () => deps.personal?.invalidate()

  type Caller = PersonalCaller & { readonly paid: PaidPlan }
  // `paid` is the plan whose caps apply; a Free caller reaches only ungated routes, whose caps do not vary by plan.
  const withCaps = (caller: PersonalCaller): Caller => ({ ...caller, paid: caller.plan === "max" ? "max" : "pro" })
  /** Any plan with one of `scopes` (the watchlist). */
  const anyPlan =
    (scopes: ReadonlyArray<string>) =>
    (req: Request): Effect.Effect<Caller, Reply> =>
      Effect.flatMap(deps.authenticate(req), (caller) => {
        const refused = scopeRefusal(caller, scopes)
        return refused === undefined ? Effect.succeed(withCaps(caller)) : Effect.fail(refused)
      })
  /** Pro or Max; Free is the plain 403. */
  const paidPlan = (req: Request): Effect.Effect<Caller, Reply> =>
    Effect.flatMap(deps.authenticate(req), (caller) => (caller.plan === "free" ? Effect.fail(requiresProOrMaxReply()) : Effect.succeed(withCaps(caller))))
  /** Store failures go through the table. */
  const answer = (e: Effect.Effect<Reply, ApiError | PersonalError>): Effect.Effect<Reply, ApiError> => e.pipe(Effect.catchTag("PersonalError", answerFailure))

  const project = (plan: DataPlan, s: Signal): Signal => (deps.tracking === undefined ? s : projectForPlan(deps.tracking, plan, s))

  return [
    // ---------------------------------------------------------------- follows
    route({
      method: "GET",
      path: "/v1/me/follows",
      operationId: "listFollows",
      summary: "The account's follows (tokens or wallets)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: { ...paid, 200: answerDoc("`{follows: [{id, chain, address, created_at}], quota, used}`", Follows) },
      authenticate: paidPlan,
      handler: (_req, _input, c) =>
        answer(Effect.map(store.follows(c.accountId), (follows) => json(200, { follows, quota: CAPS.follows[c.paid], used: follows.length } satisfies typeof Follows.Type)))
    }),
    route({
      method: "POST",
      path: "/v1/me/follows",
      operationId: "addFollow",
      summary: "Follow a token or a wallet: its signals reach /v1/me/signals",
      description: "Pro 25, Max 100. Following an address already followed answers the existing follow (200).",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: decodedBody({ schema: ChainAddressBody, maxBytes: 4_096, decode: followBody }),
      responses: {
        ...paid,
        200: answerDoc("already followed: the existing follow", Follow),
        201: answerDoc("`{id, chain, address, created_at}`", Follow),
        400: refusal(["VALIDATION_FAILED"], "naming the field"),
        429: plainErrorOrEnvelope("`{\"error\": \"follow limit reached\", \"quota\", \"used\"}`", ["RATE_LIMITED"])
      },
      authenticate: paidPlan,
      handler: (_req, { body: { address, chain } }, c) =>
        answer(
          Effect.map(store.addFollow(c.accountId, c.paid, chain, address), ({ created, follow }) => {
            if (created) changed()
            return json(created ? 201 : 200, follow satisfies typeof Follow.Type)
          })
        )
    }),
    route({
      method: "DELETE",
      path: "/v1/me/follows/{id}",
      operationId: "removeFollow",
      summary: "Stop following",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: idPath("The follow's id"),
      responses: { ...paid, 200: answerDoc("`{id, deleted: true}`", PersonalDeleted), 404: plainError("`{\"error\": \"follow not found\"}`") },
      authenticate: paidPlan,
      handler: (_req, { id }, c) => answer(Effect.map(store.removeFollow(c.accountId, id), () => (changed(), json(200, { id, deleted: true as const } satisfies typeof PersonalDeleted.Type))))
    }),
    // ---------------------------------------------------------------- rules
    route({
      method: "GET",
      path: "/v1/me/rules",
      operationId: "listRules",
      summary: "The account's signal rules",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: { ...paid, 200: answerDoc("`{rules: [{id, name, pattern, wallet_id, params, created_at}], quota, used}`", Rules) },
      authenticate: paidPlan,
      handler: (_req, _input, c) => answer(Effect.map(store.rules(c.accountId), (rules) => json(200, { rules, quota: CAPS.rules, used: rules.length } satisfies typeof Rules.Type)))
    }),
    route({
      method: "POST",
      path: "/v1/me/rules",
      operationId: "addRule",
      summary: "Add a rule: a pattern, optionally one tracked wallet, and the pattern's params",
      description:
        "Up to 20 rules. Params: new_ticker (min_usd?), confluence (wallets 2 or more, window_minutes), large_move (min_usd), dormancy (days), distribution (min_usd?); deployer, intra_book and kol_mention take none.",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: decodedBody({ schema: RuleBody, maxBytes: 4_096, decode: ruleBody }),
      responses: {
        ...paid,
        201: answerDoc("`{id, name, pattern, wallet_id, params, created_at}`", Rule),
        400: refusal(["VALIDATION_FAILED"], "naming the field (`params.<name>` for a param)"),
        429: plainErrorOrEnvelope("`{\"error\": \"rule limit reached\", \"quota\", \"used\"}`", ["RATE_LIMITED"])
      },
      authenticate: paidPlan,
      handler: (_req, { body: rule }, c) => {
        // Which wallets exist depends on the plan: checked against the tracked set, after the body's shape.
        if (rule.walletId !== null && deps.tracking !== undefined && deps.tracking.wallet(c.plan, rule.walletId) === undefined) {
          return Effect.fail(validationFailed("wallet_id", `Unknown wallet_id '${rule.walletId}' (see /v1/wallets)`))
        }
        return answer(Effect.map(store.addRule(c.accountId, rule), (created) => (changed(), json(201, created satisfies typeof Rule.Type))))
      }
    }),
    route({
      method: "DELETE",
      path: "/v1/me/rules/{id}",
      operationId: "removeRule",
      summary: "Delete a rule",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: idPath("The rule's id"),
      responses: { ...paid, 200: answerDoc("`{id, deleted: true}`", PersonalDeleted), 404: plainError("`{\"error\": \"rule not found\"}`") },
      authenticate: paidPlan,
      handler: (_req, { id }, c) => answer(Effect.map(store.removeRule(c.accountId, id), () => (changed(), json(200, { id, deleted: true as const } satisfies typeof PersonalDeleted.Type))))
    }),
    // ---------------------------------------------------------------- personal signals
    route({
      method: "GET",
      path: "/v1/me/signals",
      operationId: "personalSignals",
      summary: "Signals matching the account's follows, rules and own groups, oldest first after the cursor",
      description: "Polled, never pushed. Pass the previous page's `next_after` as `after`; the newest 10,000 per account are kept.",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      query: signalsQuery,
      closedQuery: true,
      responses: {
        ...paid,
        200: answerDoc("`{signals: [signal + {cursor, matched: [{kind, id}]}], next_after}`", PersonalSignals),
        400: refusal(["VALIDATION_FAILED"], "naming the parameter")
      },
      authenticate: paidPlan,
      handler: (_req, { after, limit }, c) =>
        answer(
          Effect.map(store.signals(c.accountId, after, limit), (page) =>
            json(200, {
              signals: page.rows.map((r) => ({ ...project(c.plan, r.signal), cursor: r.cursor, matched: r.matched })),
              next_after: page.next_after
            } satisfies typeof PersonalSignals.Type)
          )
        )
    }),
    // ---------------------------------------------------------------- own groups
    route({
      method: "GET",
      path: "/v1/me/groups",
      operationId: "listOwnGroups",
      summary: "The account's own wallet groups (private to the account)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: { ...paid, 200: answerDoc("`{groups: [{id, name, visibility: private, wallets, created_at}], quota, used, wallets_per_group}`", OwnGroups) },
      authenticate: paidPlan,
      handler: (_req, _input, c) =>
        answer(
          Effect.map(store.groups(c.accountId), (groups) =>
            json(200, { groups, quota: CAPS.groups[c.paid], used: groups.length, wallets_per_group: CAPS.groupWallets } satisfies typeof OwnGroups.Type)
          )
        )
    }),
    route({
      method: "POST",
      path: "/v1/me/groups",
      operationId: "createOwnGroup",
      summary: "Create an own wallet group",
      description: "Pro 1 group, Max 5.",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: decodedBody({ schema: GroupBody, maxBytes: 4_096, decode: groupBody }),
      responses: {
        ...paid,
        201: answerDoc("the group", OwnGroup),
        400: refusal(["VALIDATION_FAILED"], "naming the field"),
        429: plainErrorOrEnvelope("`{\"error\": \"group limit reached\", \"quota\", \"used\"}`", ["RATE_LIMITED"])
      },
      authenticate: paidPlan,
      handler: (_req, { body: name }, c) => answer(Effect.map(store.createGroup(c.accountId, c.paid, name), (group) => json(201, group satisfies typeof OwnGroup.Type)))
    }),
    route({
      method: "DELETE",
      path: "/v1/me/groups",
      operationId: "deleteOwnGroup",
      summary: "Delete an own group (its id in the body `{id}` or the query `?id=`)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      query: { id: stringParam("The group's id (when no body is sent)") },
      body: decodedBody({ schema: GroupIdBody, maxBytes: 1_024, decode: groupIdBody }),
      responses: { ...paid, 200: answerDoc("`{id, deleted: true}`", PersonalDeleted), 400: refusal(["VALIDATION_FAILED"], "id"), 404: plainError("`{\"error\": \"group not found\"}`") },
      authenticate: paidPlan,
      handler: (_req, { body, id: queryId }, c) => {
        const id = body ?? parseId("id", queryId)
        return isErr(id) ? Effect.fail(id) : answer(Effect.map(store.deleteGroup(c.accountId, id), () => (changed(), json(200, { id, deleted: true as const } satisfies typeof PersonalDeleted.Type))))
      }
    }),
    route({
      method: "POST",
      path: "/v1/me/groups/{id}/wallets",
      operationId: "addOwnGroupWallet",
      summary: "Add a wallet `{chain, address}` to an own group",
      description: "Up to 25 wallets a group; adding a wallet already in the group answers the group (200).",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: idPath("The group's id"),
      body: decodedBody({ schema: ChainAddressBody, maxBytes: 4_096, decode: groupWalletBody }),
      responses: {
        ...paid,
        200: answerDoc("the wallet was already in the group: the group", OwnGroup),
        201: answerDoc("the group with the wallet", OwnGroup),
        400: refusal(["VALIDATION_FAILED"], "naming the field"),
        404: plainError("`{\"error\": \"group not found\"}`"),
        429: plainErrorOrEnvelope("`{\"error\": \"group wallet limit reached\", \"quota\": 25, \"used\"}`", ["RATE_LIMITED"])
      },
      authenticate: paidPlan,
      handler: (_req, { body: w, id }, c) =>
        answer(
          Effect.map(store.addGroupWallet(c.accountId, id, w.chain, w.address), ({ created, group }) => {
            if (created) changed()
            return json(created ? 201 : 200, group satisfies typeof OwnGroup.Type)
          })
        )
    }),
    route({
      method: "DELETE",
      path: "/v1/me/groups/{id}/wallets",
      operationId: "removeOwnGroupWallet",
      summary: "Remove a wallet from an own group (`{chain, address}` in the body or the query)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: idPath("The group's id"),
      query: { chain: stringParam("solana (default) or hood (when no body is sent)"), address: stringParam("The wallet (when no body is sent)") },
      closedQuery: true,
      body: decodedBody({ schema: ChainAddressBody, maxBytes: 4_096, decode: optionalChainAddressBody }),
      responses: {
        ...paid,
        200: answerDoc("the group without the wallet", OwnGroup),
        400: refusal(["VALIDATION_FAILED"], "naming the field"),
        404: plainError("`{\"error\": \"group not found\"}` or `{\"error\": \"wallet not in group\"}`")
      },
      authenticate: paidPlan,
      handler: (_req, { address, body, chain, id }, c) => {
        const w = body ?? chainAddressOf({ chain, address })
        return isErr(w) ? Effect.fail(w) : answer(Effect.map(store.removeGroupWallet(c.accountId, id, w.chain, w.address), (group) => (changed(), json(200, group satisfies typeof OwnGroup.Type))))
      }
    }),
    // ---------------------------------------------------------------- watchlist
    route({
      method: "GET",
      path: "/v1/me/watchlist",
      operationId: "listWatchlist",
      summary: "The account's watchlist (wallets whose trades and launches reach its webhooks)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: {
        ...common,
        200: answerDoc("`{watchlist: [{id, chain, address, label, created_at}], quota: 200, used}`", Watchlist),
        403: refusal(["SCOPE_MISSING"], "account:read or launch:write")
      },
      authenticate: anyPlan(WATCHLIST_READ_SCOPES),
      handler: (_req, _input, c) =>
        answer(Effect.map(store.watchlist(c.accountId), (watchlist) => json(200, { watchlist, quota: CAPS.watchlist, used: watchlist.length } satisfies typeof Watchlist.Type)))
    }),
    route({
      method: "POST",
      path: "/v1/me/watchlist",
      operationId: "addWatchlistWallet",
      summary: "Watch a wallet `{chain, address, label?}`",
      description: "Up to 200 wallets, every plan. Watching a wallet already watched answers the existing entry (200).",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: decodedBody({ schema: WatchBody, maxBytes: 4_096, decode: watchBody }),
      responses: {
        ...common,
        200: answerDoc("already watched: the existing entry", Watch),
        201: answerDoc("`{id, chain, address, label, created_at}`", Watch),
        400: refusal(["VALIDATION_FAILED"], "naming the field"),
        403: refusal(["SCOPE_MISSING"], "launch:write"),
        429: plainErrorOrEnvelope("`{\"error\": \"watchlist limit reached\", \"quota\": 200, \"used\"}`", ["RATE_LIMITED"])
      },
      authenticate: anyPlan(WATCHLIST_WRITE_SCOPES),
      handler: (_req, { body: { address, chain, label } }, c) =>
        answer(Effect.map(store.addWatch(c.accountId, chain, address, label), ({ created, entry }) => json(created ? 201 : 200, entry satisfies typeof Watch.Type)))
    }),
    route({
      method: "DELETE",
      path: "/v1/me/watchlist/{id}",
      operationId: "removeWatchlistWallet",
      summary: "Stop watching a wallet",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: idPath("The watchlist entry's id"),
      responses: {
        ...common,
        200: answerDoc("`{id, deleted: true}`", PersonalDeleted),
        403: refusal(["SCOPE_MISSING"], "launch:write"),
        404: plainError("`{\"error\": \"watchlist entry not found\"}`")
      },
      authenticate: anyPlan(WATCHLIST_WRITE_SCOPES),
      handler: (_req, { id }, c) => answer(Effect.map(store.removeWatch(c.accountId, id), () => json(200, { id, deleted: true as const } satisfies typeof PersonalDeleted.Type)))
    })
  ]
}
