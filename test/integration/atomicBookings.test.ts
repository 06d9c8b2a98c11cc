/**
 * The atomic bundle's bookkeeping against the real launch ledger on PGlite: a landed bundle's
 * items confirm the attempt (`launch.confirmed`), promote the token row, enqueue one
 * `trade.executed` per recorded buy with what was booked, meter the landed legs and convert their
 * holds; performing every item again (a crash before the state was stored, a resume) writes
 * nothing twice. A failed bundle fails the attempt (`launch.failed`) and an unsigned one releases
 * its holds.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { BundleOutput } from "../../actors/bundle/BundleActor.js"
import * as Database from "../../src/db/Database.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import { makeBookings, type BookingTarget } from "../../src/services/launch/atomic/AtomicBookings.js"
import { holdsOfBundle, reserveHolds } from "../../src/services/launch/atomic/BundleStore.js"
import { attribute } from "../../src/services/launch/internal/LaunchRecords.js"
import { LaunchLedger, type LaunchLedgerShape, layerTest as launchLedgerTest } from "../../src/services/launch/LaunchLedger.js"
import { keyedAccount } from "../support/atomicBundles.js"
import { launchFailureCodesLayer } from "../../api/LaunchCodes.js"

let scope: Scope.CloseableScope
let ctx: Context.Context<LaunchLedger | SqlClient.SqlClient>
const pro = planById(resolvePlans({}, 0), "pro")

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  ctx = await Effect.runPromise(Layer.buildWithScope(Layer.merge(launchLedgerTest, Database.layerTest).pipe(Layer.provide(launchFailureCodesLayer)), scope))
}, 60_000)
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})
const run = <A, E>(e: Effect.Effect<A, E, LaunchLedger | SqlClient.SqlClient>) => Effect.runPromise(Effect.provide(e, ctx))
const q = <T extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) => run(Effect.flatMap(SqlClient.SqlClient, f))

let seq = 0
/** A launch admitted on the atomic path, its token attributed `hidden`, its main-payer holds reserved, a webhook endpoint for every event. */
const admitted = async () => {
  const n = ++seq
  const { accountId, keyId } = await keyedAccount(run)
  const mint = `Mint${n}${process.pid}`
  const ledger = await run(LaunchLedger)
  const admission = await run(
    ledger.begin(
      { accountId, clientLaunchId: `c${n}`, keyId, path: "atomic", chain: "solana", payer: "embedded", canonicalBody: { n: String(n) }, dailyCap: { keyDailyCap: 50, plan: pro } },
      attribute({ accountId, keyId, path: "atomic", chain: "solana", mint, visibility: "hidden" }, { add: () => undefined } as never)
    )
  )
  if (admission._tag !== "Accepted") throw new Error("not admitted")
  await q((sql) => sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
    VALUES (${`ep-${n}`}, ${accountId}, 'https://hooks.example.com/x', ${JSON.stringify(["launch.confirmed", "launch.failed", "trade.executed"])}::jsonb, 's', 'whsec_x', 'active', now())`)
  const bundleId = `bundle-book-${n}`
  await run(reserveHolds({ bundleId, keyId, accountId, asset: "sol" }, [{ legIndex: 1, wallet: "MAIN", amountRaw: 1_005n, usdMicros: 100n }], Date.now()))
  const target: BookingTarget = {
    bundleId,
    accountId,
    keyId,
    clientLaunchId: `c${n}`,
    attempt: admission.attempt.attempt,
    mint,
    curve: `Curve${n}`,
    launchSignature: `L${n}`,
    quoteAsset: "sol",
    visibility: "production",
    result: { success: true, mint },
    platformFeeBps: 50n,
    legs: [
      { index: 1, clientTradeId: `${bundleId}-t1`, amountInRaw: 1_000n, platformFeeRaw: 5n, signature: "B1", usdMicros: 100n },
      { index: 2, clientTradeId: `${bundleId}-t2`, amountInRaw: 2_000n, platformFeeRaw: 10n, signature: "B2", usdMicros: 200n }
    ]
  }
  return { ledger, target, accountId, bundleId, mint, keyId }
}

const deliveries = (accountId: string) =>
  q<{ event: string; data: Record<string, unknown> }>((sql) => sql`SELECT event, data FROM webhook_deliveries WHERE account_id = ${accountId} ORDER BY event, created_at`)

const performAll = (ledger: LaunchLedgerShape, target: BookingTarget, outputs: ReadonlyArray<BundleOutput>) =>
  run(Effect.forEach(outputs, (o) => makeBookings(ledger, target).perform(o), { discard: true }))

describe("atomic bookings", () => {
  it("books a landed bundle once: launch confirmed, token visible, one trade.executed per buy, landed legs metered and their holds converted", async () => {
    const { ledger, target, accountId, bundleId, mint, keyId } = await admitted()
    const outputs: BundleOutput[] = [
      { _tag: "BookToken", slot: 5n },
      { _tag: "BookLaunch", slot: 5n },
      { _tag: "BookBuy", index: 1, clientTradeId: `${bundleId}-t1`, amountOutRaw: 777n, source: "chain" },
      { _tag: "Finalize", landedBuyIndexes: [1] }
    ]
    await performAll(ledger, target, outputs)
    await performAll(ledger, target, outputs) // a resume after a crash: nothing twice
    const row = await run(ledger.get({ accountId, clientLaunchId: target.clientLaunchId }))
    expect([row?.state, row?.mint, row?.signature]).toEqual(["confirmed", mint, target.launchSignature])
    expect(await q((sql) => sql`SELECT visibility FROM launched_tokens WHERE mint = ${mint}`)).toEqual([{ visibility: "production" }])
    const sent = await deliveries(accountId)
    expect(sent.map((d) => d.event)).toEqual(["launch.confirmed", "trade.executed"])
    expect(sent[1]!.data).toEqual({
      clientTradeId: `${bundleId}-t1`,
      chain: "solana",
      side: "buy",
      mint,
      quoteAsset: "sol",
      amountRaw: "1000",
      expectedOutRaw: "777",
      signature: "B1",
      fee: { bps: 50, feeRaw: "5" }
    })
    expect((await run(holdsOfBundle(bundleId))).map((h) => h.state)).toEqual(["converted"])
    const usage = await q<{ usd: string; trades: number; launches: number }>((sql) => sql`SELECT sum(usd_micros)::text AS usd, sum(trade_count)::int AS trades, sum(launch_count)::int AS launches FROM agent_key_usage_daily WHERE key_id = ${keyId}`)
    expect(usage[0]).toEqual({ usd: "100", trades: 1, launches: 1 })
    expect(await q((sql) => sql`SELECT fee_raw_sum::text AS fee, fee_count::int AS fee_count FROM account_fee_totals WHERE account_id = ${accountId}`)).toEqual([{ fee: "5", fee_count: 1 }])
  })

  it("a failed bundle fails the attempt once (launch.failed); an unsigned one releases its holds", async () => {
    const { ledger, target, accountId, bundleId } = await admitted()
    await performAll(ledger, target, [{ _tag: "FailLaunch", detail: "x" }, { _tag: "FailLaunch", detail: "x" }])
    expect((await run(ledger.get({ accountId, clientLaunchId: target.clientLaunchId })))?.state).toBe("failed")
    expect((await deliveries(accountId)).map((d) => d.event)).toEqual(["launch.failed"])
    await performAll(ledger, target, [{ _tag: "ReleaseHolds" }])
    expect((await run(holdsOfBundle(bundleId))).map((h) => h.state)).toEqual(["released"])
  })
})
