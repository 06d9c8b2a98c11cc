/**
 * `GET /api/v1/agent/transactions` over PGlite: one account's movements of every kind recorded by
 * the rails' own store functions (trades, staking operations, reward claims, transfers) or, for a
 * launch, rows matching the launch ledger's schema; read newest first across two pages with the
 * cursor, filtered by kind, chain and time; another account's rows never appear; rows that moved
 * nothing (a failed launch, an unsigned staking build) are not listed; a malformed cursor is
 * VALIDATION_FAILED, in the store's error and through the route over HTTP.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AgentAuth } from "../../api/auth/AgentKeyAuth.js"
import { toApiError } from "../../api/ErrorTable.js"
import { tradeRoutes } from "../../api/routes/TradeRoutes.js"
import * as Database from "../../src/db/Database.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { makeClaimStore, makeStakingStore, type OperationRow } from "../../src/services/staking/StakingStore.js"
import { type AgentTransactions, makeAgentTransactions, type TransactionQuery } from "../../src/services/trade/AgentTransactions.js"
import { makeTradeStore, type TradeRow } from "../../src/services/trade/TradeStore.js"
import { MAIN_PAYER, makeTransferStore, type TransferRow } from "../../src/services/transfers/TransferStore.js"
import { mountRoutes } from "../support/httpRoutes.js"
import { clockAt } from "../support/clock.js"
import { tradeRow } from "../support/tradeRows.js"

const A = `acct-txns-a-${process.pid}`
const B = `acct-txns-b-${process.pid}`
/** 2026-11-25T12:00:00Z */
const T0 = Date.UTC(2026, 10, 25, 12, 0, 0)
const at = (s: number) => T0 + s * 1000
const iso = (s: number) => new Date(at(s)).toISOString()
const HASH = "a".repeat(64)

const trade = (accountId: string, id: string, s: number, o: Partial<TradeRow> = {}): TradeRow =>
  tradeRow(accountId, id, { state: "executed", amountOutRaw: 42n, createdAtMs: at(s), ...o })

const op = (accountId: string, id: string, action: OperationRow["action"], state: OperationRow["state"], amountRaw: string | null): OperationRow => ({
  accountId,
  clientStakeId: id,
  action,
  payer: "main",
  walletId: null,
  wallet: "Wallet1111111111111111111111111111111111111",
  keyId: null,
  bodyHash: HASH,
  state,
  amountRaw,
  withdrawal: null,
  signature: state === "built" ? null : `sig-${id}`,
  transaction: null,
  messageHash: null,
  claimId: null,
  lastValidBlockHeight: null,
  builtAtMs: null,
  expiresAtMs: null,
  error: null
})

const transfer = (accountId: string, id: string, o: Partial<TransferRow> = {}): TransferRow => ({
  ...MAIN_PAYER,
  accountId,
  clientTransferId: id,
  keyId: "kid",
  keyPrefix: "cs_live_x",
  requestHash: HASH,
  chain: "hood",
  asset: "eth",
  mint: null,
  amountRaw: 7_000_000_000_000_000n,
  from: `0x${"11".repeat(20)}`,
  to: `0x${"22".repeat(20)}`,
  destinationClass: "own",
  destinationKind: "embedded",
  toWalletId: null,
  state: "sending",
  signature: `0x${"ab".repeat(32)}`,
  lastValidBlockHeight: null,
  error: null,
  createdAtMs: 0,
  ...o
})

describe("agent transactions", () => {
  let scope: Scope.CloseableScope
  let sql: SqlClient.SqlClient
  let txns: AgentTransactions
  let clockMs = T0
  const nowMs = () => clockMs
  const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Promise<A> => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql))
  const list = (accountId: string, q: TransactionQuery = {}) => run(txns.list(accountId, q))

  const launch = (accountId: string, id: string, s: number, state: "confirmed" | "failed") =>
    run(
      Effect.all([
        sql`INSERT INTO launch_ledger (account_id, client_launch_id, path, chain, payer, key_id, body_hash, state, attempt, error_code, mint, pool, signature, result,
              created_at, attempt_started_at, updated_at)
            VALUES (${accountId}, ${id}, 'headless', 'solana', 'embedded', 'kid', ${HASH}, ${state}, 1, ${state === "failed" ? "LAUNCH_FAILED" : null},
              ${state === "confirmed" ? `Mint-${id}` : null}, null, ${`sig-${id}`},
              ${state === "confirmed" ? JSON.stringify({ signature: `sig-${id}`, quoteAsset: "sol", devBuy: { signature: `sig-${id}`, fee: { bps: 100, feeRaw: "50000", treasury: "T" } } }) : null}::jsonb,
              ${new Date(at(s))}, ${new Date(at(s))}, ${new Date(at(s))})`,
        sql`INSERT INTO headless_launch_attempts (account_id, client_launch_id, attempt, request, resolved, created_at)
            VALUES (${accountId}, ${id}, 1, ${JSON.stringify({ clientLaunchId: id, buyAmountRaw: "5000000" })}::jsonb, '{}'::jsonb, ${new Date(at(s))})`
      ])
    )

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const ctx = await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))
    sql = await Effect.runPromise(Effect.provide(SqlClient.SqlClient, ctx))
    txns = makeAgentTransactions(sql)
    const trades = makeTradeStore(sql, clockAt(nowMs))
    const staking = makeStakingStore(sql, clockAt(nowMs))
    const claims = makeClaimStore(sql, clockAt(nowMs))
    const transfers = makeTransferStore(sql, undefined as never, clockAt(nowMs))
    // The stores read the clock when they build their statement: set it first.
    const when = <X>(s: number, e: () => Effect.Effect<X, unknown, SqlClient.SqlClient>) => {
      clockMs = at(s)
      return run(e())
    }
    // Account A: one of each kind, two at the same instant (ordered by kind), and rows that moved nothing.
    await launch(A, "launch-1", 1, "confirmed")
    await launch(A, "launch-failed", 1.5, "failed")
    await when(2, () => trades.save(undefined, trade(A, "trade-buy", 2), []))
    await when(3, () => trades.save(undefined, trade(A, "trade-sell", 3, { chain: "hood", side: "sell", mint: `0x${"33".repeat(20)}`, quoteAsset: "ETH" }), []))
    await when(4, () => staking.insert(op(A, "stake-1", "stake", "sending", "900")))
    await when(4.5, () => staking.insert(op(A, "stake-built", "stake", "built", "100")))
    await when(5, () => staking.insert(op(A, "finish-1", "finish", "confirmed", null)))
    await when(6, () => claims.insert({ rewardId: "reward-1", accountId: A, owner: "Owner", mint: "RewardMint", amountRaw: "777", state: "claimed", signature: "sig-reward", lastValidBlockHeight: 5n }))
    await when(7, () => transfers.save(undefined, transfer(A, "transfer-1")))
    await when(7, () => trades.save(undefined, trade(A, "trade-late", 7), []))
    // Account B: rows between A's that must never show in A's list.
    await launch(B, "launch-b", 2.5, "confirmed")
    await when(2.5, () => trades.save(undefined, trade(B, "trade-b", 2.5), []))
    await when(3.5, () => transfers.save(undefined, transfer(B, "transfer-b")))
    await when(3.5, () => claims.insert({ rewardId: "reward-b", accountId: B, owner: "Owner", mint: "RewardMint", amountRaw: "1", state: "claiming", signature: "sig-b", lastValidBlockHeight: 5n }))
  }, 120_000)

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("lists every kind newest first across two pages, each item with what its record holds", async () => {
    const first = await list(A, { limit: 5 })
    expect(first.transactions.map((t) => [t.kind, t.id])).toEqual([
      ["transfer", "transfer-1"],
      ["trade", "trade-late"],
      ["reward_claim", "reward-1"],
      ["unstake_finish", "finish-1"],
      ["stake", "stake-1"]
    ])
    expect(first.nextCursor).not.toBeNull()
    const second = await list(A, { limit: 5, cursor: first.nextCursor! })
    expect(second.transactions.map((t) => [t.kind, t.id])).toEqual([
      ["trade", "trade-sell"],
      ["trade", "trade-buy"],
      ["launch", "launch-1"]
    ])
    expect(second.nextCursor).toBeNull()
    expect((await list(A, {})).transactions.map((t) => t.id)).toEqual([...first.transactions, ...second.transactions].map((t) => t.id))

    const byId = new Map([...first.transactions, ...second.transactions].map((t) => [t.id, t]))
    expect(byId.get("launch-1")).toEqual({
      kind: "launch", chain: "solana", id: "launch-1", at: iso(1), status: "confirmed", signature: "sig-launch-1", mint: "Mint-launch-1", side: null,
      asset: "sol", amountRaw: "5000000", fee: { bps: 100, feeRaw: "50000" }, ref: "/api/v1/launch/headless/jobs/launch-1"
    })
    expect(byId.get("trade-sell")).toEqual({
      kind: "trade", chain: "hood", id: "trade-sell", at: iso(3), status: "executed", signature: "sig-trade-sell", mint: `0x${"33".repeat(20)}`, side: "sell",
      asset: `0x${"33".repeat(20)}`, amountRaw: "1000000", fee: { bps: 25, feeRaw: "2500" }, ref: "/api/v1/trade/agent/trades/trade-sell"
    })
    expect(byId.get("trade-buy")).toMatchObject({ side: "buy", asset: "SOL", amountRaw: "1000000" })
    expect(byId.get("stake-1")).toEqual({
      kind: "stake", chain: "solana", id: "stake-1", at: iso(4), status: "sending", signature: "sig-stake-1", mint: null, side: null,
      asset: "svc", amountRaw: "900", fee: null, ref: null
    })
    expect(byId.get("finish-1")).toMatchObject({ kind: "unstake_finish", status: "confirmed", amountRaw: null })
    expect(byId.get("reward-1")).toMatchObject({ kind: "reward_claim", chain: "solana", status: "claimed", mint: "RewardMint", asset: "RewardMint", amountRaw: "777", at: iso(6) })
    expect(byId.get("transfer-1")).toEqual({
      kind: "transfer", chain: "hood", id: "transfer-1", at: iso(7), status: "sending", signature: `0x${"ab".repeat(32)}`, mint: null, side: null,
      asset: "eth", amountRaw: "7000000000000000", fee: null, ref: null
    })
    // Moved nothing: a failed launch, an unsigned staking build.
    expect(byId.has("launch-failed")).toBe(false)
    expect(byId.has("stake-built")).toBe(false)
  })

  it("pages of one walk every row exactly once", async () => {
    const ids: Array<string> = []
    let cursor: string | undefined
    for (let i = 0; i < 20; i++) {
      const page = await list(A, { limit: 1, ...(cursor !== undefined ? { cursor } : {}) })
      ids.push(...page.transactions.map((t) => t.id))
      if (page.nextCursor === null) break
      cursor = page.nextCursor
    }
    expect(ids).toEqual(["transfer-1", "trade-late", "reward-1", "finish-1", "stake-1", "trade-sell", "trade-buy", "launch-1"])
  })

  it("filters by kind, chain and time", async () => {
    expect((await list(A, { kind: "trade" })).transactions.map((t) => t.id)).toEqual(["trade-late", "trade-sell", "trade-buy"])
    expect((await list(A, { kind: "launch" })).transactions.map((t) => t.id)).toEqual(["launch-1"])
    expect((await list(A, { chain: "hood" })).transactions.map((t) => t.id)).toEqual(["transfer-1", "trade-sell"])
    expect((await list(A, { sinceMs: at(4), untilMs: at(6) })).transactions.map((t) => t.id)).toEqual(["finish-1", "stake-1"])
    expect((await list(A, { chain: "solana", kind: "trade", untilMs: at(7) })).transactions.map((t) => t.id)).toEqual(["trade-buy"])
    const paged = await list(A, { kind: "trade", limit: 2 })
    expect(paged.transactions.map((t) => t.id)).toEqual(["trade-late", "trade-sell"])
    expect((await list(A, { kind: "trade", limit: 2, cursor: paged.nextCursor! })).transactions.map((t) => t.id)).toEqual(["trade-buy"])
  })

  it("another account's rows never appear, and its own list holds only its rows", async () => {
    const a = (await list(A, { limit: 100 })).transactions
    expect(a.some((t) => t.id.endsWith("-b"))).toBe(false)
    expect((await list(B, {})).transactions.map((t) => t.id)).toEqual(["transfer-b", "reward-b", "trade-b", "launch-b"])
    expect((await list(`acct-txns-none-${process.pid}`, {})).transactions).toEqual([])
  })

  it("a malformed cursor is VALIDATION_FAILED on cursor", async () => {
    for (const cursor of ["not-a-cursor", Buffer.from(JSON.stringify([1, "nope", "x"])).toString("base64url"), Buffer.from("[1.5,\"trade\",\"x\"]").toString("base64url")]) {
      const out = await run(Effect.either(txns.list(A, { cursor })))
      expect(Either.isLeft(out)).toBe(true)
      if (Either.isLeft(out)) {
        const api = toApiError(out.left)
        expect(api.code).toBe("VALIDATION_FAILED")
        expect(api.field).toBe("cursor")
      }
    }
  })

  it("the route answers the page and refuses a malformed cursor over HTTP", async () => {
    const principal = { _tag: "agent", accountId: A, key: { id: "kid", prefix: "cs_live_x", environment: "production", embeddedWallet: "allowed" } } as unknown as AgentPrincipal
    const asked: Array<unknown> = []
    const agentAuth: AgentAuth = {
      authenticate: (_headers, req) => Effect.sync(() => (asked.push(req), principal)),
      verify: () => Effect.die("not used")
    }
    const routeScope = await Effect.runPromise(Scope.make())
    try {
      const url = await Effect.runPromise(mountRoutes(tradeRoutes({ agentAuth, trades: undefined as never, transactions: txns })).pipe(Scope.extend(routeScope)))
      const get = async (query: string) => {
        const res = await fetch(`${url}/api/v1/agent/transactions${query}`, { headers: { "x-api-key": "key" } })
        return { status: res.status, body: (await res.json()) as any }
      }
      const page = await get(`?limit=2&kind=trade&since=${encodeURIComponent(iso(0))}`)
      expect(page.status).toBe(200)
      expect(page.body.success).toBe(true)
      expect(page.body.transactions.map((t: { id: string }) => t.id)).toEqual(["trade-late", "trade-sell"])
      const next = await get(`?limit=2&kind=trade&cursor=${page.body.nextCursor}`)
      expect(next.body.transactions.map((t: { id: string }) => t.id)).toEqual(["trade-buy"])
      expect(next.body.nextCursor).toBeNull()
      const bad = await get("?cursor=garbage")
      expect(bad.status).toBe(400)
      expect(bad.body.error.code).toBe("VALIDATION_FAILED")
      expect(bad.body.error.field).toBe("cursor")
      expect((await get("?kind=creator_fee")).status).toBe(400)
      expect((await get("?limit=101")).status).toBe(400)
      // The read scope of the trade list.
      expect(asked[0]).toMatchObject({ anyScope: ["swap:write", "account:read"] })
    } finally {
      await Effect.runPromise(Scope.close(routeScope, Exit.void))
    }
  })
})
