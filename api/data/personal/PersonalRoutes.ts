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
 * Order of checks: credential, plan, parameters, then the write; every refusal records nothing.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import type { PlanId as DataPlan } from "../../../src/domain/Plans.js"
import type { Signal } from "../../../src/domain/Signal.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { type ApiError, validationFailed } from "../../../src/domain/ApiError.js"
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
import { validateRule, isRuleProblem } from "../../../src/services/personal/Rules.js"
import { projectForPlan } from "../../../src/services/signals/SignalTape.js"
import type { TrackingShape } from "../../../src/services/tracking/Tracking.js"
import { answerFailure } from "../../ErrorTable.js"
import { json, type Reply, type Request } from "../../Http.js"
import { isApiError as isErr } from "../../QueryParams.js"
import type { ParamDoc, RouteDef } from "../../Router.js"


export interface PersonalCaller {
  readonly accountId: string
  readonly plan: DataPlan
}

export interface PersonalRoutesDeps {
  readonly sql: SqlClient.SqlClient
  /** The data bearer: the caller, or a ready refusal (the plain 401). */
  readonly authenticate: (req: Request) => Effect.Effect<PersonalCaller, Reply>
  /** Tracked wallets: validates a rule's `wallet_id` against the plan and hides groups the plan may not see in signals. */
  readonly tracking?: TrackingShape
  /** The personal-signals writer of this process: told when follows, rules or groups change. */
  readonly personal?: PersonalSignalsRunner
  /** Store options (tests): clock and ids. */
  readonly nowMs?: () => number
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

/** `{chain?, address}` from a JSON body or, when there is none, from the query string. */
const chainAddress = (req: Request, extra: ReadonlyArray<string> = []): Parsed<{ chain: ChainId; address: string; fields: Record<string, unknown> }> => {
  let fields: Record<string, unknown>
  if (req.body === undefined) {
    const q = new URLSearchParams(req.query)
    fields = {}
    for (const [k, v] of q) {
      if (![...extra, "chain", "address"].includes(k)) return validationFailed(k, `Unknown parameter '${k}'`)
      if (v !== "") fields[k] = v
    }
  } else {
    const b = objectBody(req.body, ["chain", "address", ...extra])
    if (isErr(b)) return b
    fields = b
  }
  const chain = parseChain(fields.chain)
  if (isErr(chain)) return chain
  const address = parseAddress(chain, fields.address)
  if (isErr(address)) return address
  return { chain, address, fields }
}

const q = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }): ParamDoc => ({ name, description, schema })
const idParam = (description: string): ParamDoc => ({ name: "id", description, required: true, schema: { type: "string" } })

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
  401: { description: "`{\"error\": \"invalid api key\"}`" },
  503: { description: "FEED_UNAVAILABLE (retryable)" }
} as const
const paid = { ...common, 403: { description: "`{\"error\": \"requires Pro or Max\"}` (Free)" } } as const

export const personalRoutes = (deps: PersonalRoutesDeps): ReadonlyArray<RouteDef> => {
  const store: PersonalStore = makePersonalStore(deps.sql, {
    ...(deps.nowMs !== undefined ? { nowMs: deps.nowMs } : {}),
    ...(deps.newId !== undefined ? { newId: deps.newId } : {})
  })
  const changed = () => deps.personal?.invalidate()

  /** Authenticates, gates the plan (`paid`: Pro or Max), runs `f`; store failures go through the table. */
  const handle =
    (gate: "paid" | "any", f: (caller: PersonalCaller & { readonly paid: PaidPlan }, req: Request) => Effect.Effect<Reply, ApiError | PersonalError>) =>
    (req: Request): Effect.Effect<Reply, ApiError> =>
      deps.authenticate(req).pipe(
        Effect.matchEffect({
          onFailure: (reply) => Effect.succeed(reply),
          onSuccess: (caller): Effect.Effect<Reply, ApiError> => {
            if (gate === "paid" && caller.plan === "free") return Effect.succeed(requiresProOrMaxReply())
            // `paid` is the plan whose caps apply; a Free caller reaches only ungated routes, whose caps do not vary by plan.
            const paidPlan: PaidPlan = caller.plan === "max" ? "max" : "pro"
            return f({ ...caller, paid: paidPlan }, req).pipe(Effect.catchTag("PersonalError", answerFailure))
          }
        })
      )

  const project = (plan: DataPlan, s: Signal): Signal => (deps.tracking === undefined ? s : projectForPlan(deps.tracking, plan, s))

  return [
    // ---------------------------------------------------------------- follows
    {
      method: "GET",
      path: "/v1/me/follows",
      operationId: "listFollows",
      summary: "The account's follows (tokens or wallets)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: { ...paid, 200: { description: "`{follows: [{id, chain, address, created_at}], quota, used}`" } },
      handler: handle("paid", (c) =>
        Effect.map(store.follows(c.accountId), (follows) => json(200, { follows, quota: CAPS.follows[c.paid], used: follows.length }))
      )
    },
    {
      method: "POST",
      path: "/v1/me/follows",
      operationId: "addFollow",
      summary: "Follow a token or a wallet: its signals reach /v1/me/signals",
      description: "Pro 25, Max 100. Following an address already followed answers the existing follow (200).",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: { schema: ChainAddressBody, maxBytes: 4_096 },
      responses: {
        ...paid,
        200: { description: "already followed: the existing follow" },
        201: { description: "`{id, chain, address, created_at}`" },
        400: { description: "VALIDATION_FAILED naming the field" },
        429: { description: "`{\"error\": \"follow limit reached\", \"quota\", \"used\"}`" }
      },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const body = objectBody(req.body, ["chain", "address"])
          if (isErr(body)) return yield* body
          const chain = parseChain(body.chain)
          if (isErr(chain)) return yield* chain
          const address = parseAddress(chain, body.address)
          if (isErr(address)) return yield* address
          const { follow, created } = yield* store.addFollow(c.accountId, c.paid, chain, address)
          if (created) changed()
          return json(created ? 201 : 200, follow)
        })
      )
    },
    {
      method: "DELETE",
      path: "/v1/me/follows/{id}",
      operationId: "removeFollow",
      summary: "Stop following",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: [idParam("The follow's id")],
      responses: { ...paid, 200: { description: "`{id, deleted: true}`" }, 404: { description: "`{\"error\": \"follow not found\"}`" } },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const id = parseId("id", req.params[0])
          if (isErr(id)) return yield* id
          yield* store.removeFollow(c.accountId, id)
          changed()
          return json(200, { id, deleted: true })
        })
      )
    },
    // ---------------------------------------------------------------- rules
    {
      method: "GET",
      path: "/v1/me/rules",
      operationId: "listRules",
      summary: "The account's signal rules",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: { ...paid, 200: { description: "`{rules: [{id, name, pattern, wallet_id, params, created_at}], quota, used}`" } },
      handler: handle("paid", (c) => Effect.map(store.rules(c.accountId), (rules) => json(200, { rules, quota: CAPS.rules, used: rules.length })))
    },
    {
      method: "POST",
      path: "/v1/me/rules",
      operationId: "addRule",
      summary: "Add a rule: a pattern, optionally one tracked wallet, and the pattern's params",
      description:
        "Up to 20 rules. Params: new_ticker (min_usd?), confluence (wallets 2 or more, window_minutes), large_move (min_usd), dormancy (days), distribution (min_usd?); deployer, intra_book and kol_mention take none.",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: { schema: RuleBody, maxBytes: 4_096 },
      responses: {
        ...paid,
        201: { description: "`{id, name, pattern, wallet_id, params, created_at}`" },
        400: { description: "VALIDATION_FAILED naming the field (`params.<name>` for a param)" },
        429: { description: "`{\"error\": \"rule limit reached\", \"quota\", \"used\"}`" }
      },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const body = objectBody(req.body, ["name", "pattern", "wallet_id", "params"])
          if (isErr(body)) return yield* body
          const name = parseText("name", body.name, NAME_MAX, true)
          if (isErr(name)) return yield* name
          const rule = validateRule(body.pattern, body.params)
          if (isRuleProblem(rule)) return yield* validationFailed(rule.field, rule.message)
          let walletId: string | null = null
          if (body.wallet_id !== undefined && body.wallet_id !== null) {
            const id = parseId("wallet_id", body.wallet_id)
            if (isErr(id)) return yield* id
            if (deps.tracking !== undefined && deps.tracking.wallet(c.plan, id) === undefined) {
              return yield* validationFailed("wallet_id", `Unknown wallet_id '${id}' (see /v1/wallets)`)
            }
            walletId = id
          }
          const created = yield* store.addRule(c.accountId, { name: name!, pattern: rule.pattern, walletId, params: rule.params })
          changed()
          return json(201, created)
        })
      )
    },
    {
      method: "DELETE",
      path: "/v1/me/rules/{id}",
      operationId: "removeRule",
      summary: "Delete a rule",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: [idParam("The rule's id")],
      responses: { ...paid, 200: { description: "`{id, deleted: true}`" }, 404: { description: "`{\"error\": \"rule not found\"}`" } },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const id = parseId("id", req.params[0])
          if (isErr(id)) return yield* id
          yield* store.removeRule(c.accountId, id)
          changed()
          return json(200, { id, deleted: true })
        })
      )
    },
    // ---------------------------------------------------------------- personal signals
    {
      method: "GET",
      path: "/v1/me/signals",
      operationId: "personalSignals",
      summary: "Signals matching the account's follows, rules and own groups, oldest first after the cursor",
      description: "Polled, never pushed. Pass the previous page's `next_after` as `after`; the newest 10,000 per account are kept.",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      query: [
        q("after", "The previous page's next_after (omit for the oldest kept)"),
        q("limit", `1 to ${SIGNALS_PAGE_MAX}, default ${SIGNALS_PAGE_DEFAULT}`, { type: "integer", minimum: 1, maximum: SIGNALS_PAGE_MAX, default: SIGNALS_PAGE_DEFAULT })
      ],
      responses: {
        ...paid,
        200: { description: "`{signals: [signal + {cursor, matched: [{kind, id}]}], next_after}`" },
        400: { description: "VALIDATION_FAILED naming the parameter" }
      },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const p = new URLSearchParams(req.query)
          for (const k of p.keys()) if (k !== "after" && k !== "limit") return yield* validationFailed(k, `Unknown parameter '${k}'; expected after, limit`)
          const afterRaw = p.get("after") ?? ""
          let after: bigint | undefined
          if (afterRaw !== "") {
            if (!/^\d{1,19}$/.test(afterRaw) || BigInt(afterRaw) > 9_223_372_036_854_775_807n) return yield* validationFailed("after", "after must be a next_after cursor")
            after = BigInt(afterRaw)
          }
          const limitRaw = p.get("limit") ?? ""
          let limit = SIGNALS_PAGE_DEFAULT
          if (limitRaw !== "") {
            if (!/^\d{1,4}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > SIGNALS_PAGE_MAX) {
              return yield* validationFailed("limit", `limit must be an integer from 1 to ${SIGNALS_PAGE_MAX}`)
            }
            limit = Number(limitRaw)
          }
          const page = yield* store.signals(c.accountId, after, limit)
          return json(200, {
            signals: page.rows.map((r) => ({ ...project(c.plan, r.signal), cursor: r.cursor, matched: r.matched })),
            next_after: page.next_after
          })
        })
      )
    },
    // ---------------------------------------------------------------- own groups
    {
      method: "GET",
      path: "/v1/me/groups",
      operationId: "listOwnGroups",
      summary: "The account's own wallet groups (private to the account)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: { ...paid, 200: { description: "`{groups: [{id, name, visibility: private, wallets, created_at}], quota, used, wallets_per_group}`" } },
      handler: handle("paid", (c) =>
        Effect.map(store.groups(c.accountId), (groups) =>
          json(200, { groups, quota: CAPS.groups[c.paid], used: groups.length, wallets_per_group: CAPS.groupWallets })
        )
      )
    },
    {
      method: "POST",
      path: "/v1/me/groups",
      operationId: "createOwnGroup",
      summary: "Create an own wallet group",
      description: "Pro 1 group, Max 5.",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: { schema: GroupBody, maxBytes: 4_096 },
      responses: {
        ...paid,
        201: { description: "the group" },
        400: { description: "VALIDATION_FAILED naming the field" },
        429: { description: "`{\"error\": \"group limit reached\", \"quota\", \"used\"}`" }
      },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const body = objectBody(req.body, ["name"])
          if (isErr(body)) return yield* body
          const name = parseText("name", body.name, NAME_MAX, true)
          if (isErr(name)) return yield* name
          return json(201, yield* store.createGroup(c.accountId, c.paid, name!))
        })
      )
    },
    {
      method: "DELETE",
      path: "/v1/me/groups",
      operationId: "deleteOwnGroup",
      summary: "Delete an own group (its id in the body `{id}` or the query `?id=`)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      query: [q("id", "The group's id (when no body is sent)")],
      body: { schema: GroupIdBody, maxBytes: 1_024 },
      responses: { ...paid, 200: { description: "`{id, deleted: true}`" }, 400: { description: "VALIDATION_FAILED: id" }, 404: { description: "`{\"error\": \"group not found\"}`" } },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          let raw: unknown
          if (req.body === undefined) raw = new URLSearchParams(req.query).get("id") ?? undefined
          else {
            const body = objectBody(req.body, ["id"])
            if (isErr(body)) return yield* body
            raw = body.id
          }
          const id = parseId("id", raw)
          if (isErr(id)) return yield* id
          yield* store.deleteGroup(c.accountId, id)
          changed()
          return json(200, { id, deleted: true })
        })
      )
    },
    {
      method: "POST",
      path: "/v1/me/groups/{id}/wallets",
      operationId: "addOwnGroupWallet",
      summary: "Add a wallet `{chain, address}` to an own group",
      description: "Up to 25 wallets a group; adding a wallet already in the group answers the group (200).",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: [idParam("The group's id")],
      body: { schema: ChainAddressBody, maxBytes: 4_096 },
      responses: {
        ...paid,
        201: { description: "the group with the wallet" },
        400: { description: "VALIDATION_FAILED naming the field" },
        404: { description: "`{\"error\": \"group not found\"}`" },
        429: { description: "`{\"error\": \"group wallet limit reached\", \"quota\": 25, \"used\"}`" }
      },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const id = parseId("id", req.params[0])
          if (isErr(id)) return yield* id
          if (req.body === undefined) return yield* validationFailed("body", "Request body must be a JSON object `{chain, address}`")
          const w = chainAddress(req)
          if (isErr(w)) return yield* w
          const { group, created } = yield* store.addGroupWallet(c.accountId, id, w.chain, w.address)
          if (created) changed()
          return json(created ? 201 : 200, group)
        })
      )
    },
    {
      method: "DELETE",
      path: "/v1/me/groups/{id}/wallets",
      operationId: "removeOwnGroupWallet",
      summary: "Remove a wallet from an own group (`{chain, address}` in the body or the query)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: [idParam("The group's id")],
      query: [q("chain", "solana (default) or hood"), q("address", "The wallet (when no body is sent)")],
      body: { schema: ChainAddressBody, maxBytes: 4_096 },
      responses: {
        ...paid,
        200: { description: "the group without the wallet" },
        400: { description: "VALIDATION_FAILED naming the field" },
        404: { description: "`{\"error\": \"group not found\"}` or `{\"error\": \"wallet not in group\"}`" }
      },
      handler: handle("paid", (c, req) =>
        Effect.gen(function* () {
          const id = parseId("id", req.params[0])
          if (isErr(id)) return yield* id
          const w = chainAddress(req)
          if (isErr(w)) return yield* w
          const group = yield* store.removeGroupWallet(c.accountId, id, w.chain, w.address)
          changed()
          return json(200, group)
        })
      )
    },
    // ---------------------------------------------------------------- watchlist
    {
      method: "GET",
      path: "/v1/me/watchlist",
      operationId: "listWatchlist",
      summary: "The account's watchlist (wallets whose trades and launches reach its webhooks)",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      responses: { ...common, 200: { description: "`{watchlist: [{id, chain, address, label, created_at}], quota: 200, used}`" } },
      handler: handle("any", (c) =>
        Effect.map(store.watchlist(c.accountId), (watchlist) => json(200, { watchlist, quota: CAPS.watchlist, used: watchlist.length }))
      )
    },
    {
      method: "POST",
      path: "/v1/me/watchlist",
      operationId: "addWatchlistWallet",
      summary: "Watch a wallet `{chain, address, label?}`",
      description: "Up to 200 wallets, every plan. Watching a wallet already watched answers the existing entry (200).",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      body: { schema: WatchBody, maxBytes: 4_096 },
      responses: {
        ...common,
        200: { description: "already watched: the existing entry" },
        201: { description: "`{id, chain, address, label, created_at}`" },
        400: { description: "VALIDATION_FAILED naming the field" },
        429: { description: "`{\"error\": \"watchlist limit reached\", \"quota\": 200, \"used\"}`" }
      },
      handler: handle("any", (c, req) =>
        Effect.gen(function* () {
          const body = objectBody(req.body, ["chain", "address", "label"])
          if (isErr(body)) return yield* body
          const chain = parseChain(body.chain)
          if (isErr(chain)) return yield* chain
          const address = parseAddress(chain, body.address)
          if (isErr(address)) return yield* address
          const label = parseText("label", body.label, LABEL_MAX, false)
          if (isErr(label)) return yield* label
          const { entry, created } = yield* store.addWatch(c.accountId, chain, address, label)
          return json(created ? 201 : 200, entry)
        })
      )
    },
    {
      method: "DELETE",
      path: "/v1/me/watchlist/{id}",
      operationId: "removeWatchlistWallet",
      summary: "Stop watching a wallet",
      tags: ["market-data"],
      auth: "bearer",
      headers: AUTH_HEADERS,
      pathParams: [idParam("The watchlist entry's id")],
      responses: { ...common, 200: { description: "`{id, deleted: true}`" }, 404: { description: "`{\"error\": \"watchlist entry not found\"}`" } },
      handler: handle("any", (c, req) =>
        Effect.gen(function* () {
          const id = parseId("id", req.params[0])
          if (isErr(id)) return yield* id
          yield* store.removeWatch(c.accountId, id)
          return json(200, { id, deleted: true })
        })
      )
    }
  ]
}
