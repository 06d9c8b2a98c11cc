/**
 * A restart resumes every atomic bundle where it was (the localnet over its sockets, PGlite, the
 * real launch ledger): the engine killed between the send and the booking (the bundle landed, the
 * process stored only `Sent`) is booked once from the chain after the restart, nothing doubled on
 * a second restart, the landed main-payer hold converted; a bundle signed but not recorded as sent
 * never left: build_expired, the attempt failed, its hold kept; an expired live build releases its
 * hold.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { createSolanaRpc } from "@solana/kit"
import { type Context, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { initialBundle, operatorStateOf } from "../../actors/bundle/BundleActor.js"
import { makeBlockEngineClient } from "../../src/chain/solana/client/BlockEngineClient.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { readSentBundle } from "../../src/chain/solana/launch/BundleChainRead.js"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import * as Database from "../../src/db/Database.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import { bundleIo, decodeStoredBuild, encodeStoredBuild, resumeAll, type StoredBundleBuild } from "../../src/services/launch/atomic/BundleResume.js"
import { findBundle, holdsOfBundle, insertBundle, reserveHolds } from "../../src/services/launch/atomic/BundleStore.js"
import { makeRunner, signaturesOf } from "../../src/services/launch/atomic/BundleRunner.js"
import { attribute } from "../../src/services/launch/internal/LaunchRecords.js"
import { LaunchLedger, layerTest as launchLedgerTest } from "../../src/services/launch/LaunchLedger.js"
import { keyedAccount, signedBundle } from "../support/atomicBundles.js"
import { eventually } from "../support/eventually.js"
import { launchFailureCodesLayer } from "../../api/LaunchCodes.js"

const SOL = 1_000_000_000n
const pro = planById(resolvePlans({}, 0), "pro")
let localnet: ManagedRuntime.ManagedRuntime<SolanaLocalnet, unknown>
let net: SolanaLocalnetShape
let scope: Scope.CloseableScope
let ctx: Context.Context<LaunchLedger | SqlClient.SqlClient>

beforeAll(async () => {
  localnet = ManagedRuntime.make(SolanaLocalnet.layer({ ledger: { slotMs: 50, blockhashValiditySlots: 20 } }))
  net = await localnet.runPromise(SolanaLocalnet)
  scope = await Effect.runPromise(Scope.make())
  ctx = await Effect.runPromise(Layer.buildWithScope(Layer.merge(launchLedgerTest, Database.layerTest).pipe(Layer.provide(launchFailureCodesLayer)), scope))
}, 60_000)
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await localnet?.dispose()
})
const run = <A, E>(e: Effect.Effect<A, E, LaunchLedger | SqlClient.SqlClient>) => Effect.runPromise(Effect.provide(e, ctx))
const q = <T extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) => run(Effect.flatMap(SqlClient.SqlClient, f))
const runner = () =>
  makeRunner({ engine: makeBlockEngineClient({ url: net.blockEngineUrl }), readChain: (v) => readSentBundle(createSolanaRpc(net.rpcUrl), v), statusDeadlineMs: 5_000, pollMs: 20 })

let seq = 0
/** An admitted atomic launch with a stored bundle (first leg main-payer, held), advanced by `events` as the service would. */
const storedBundle = async (expiresInMs = 600_000) => {
  const n = ++seq
  const { accountId, keyId } = await keyedAccount(run)
  const [creator, b1, b2] = await Promise.all([devSigner(0), devSigner(7), devSigner(8)])
  const signed = await signedBundle(net.ledger, creator, [b1, b2], [SOL, SOL / 2n])
  const ledger = await run(LaunchLedger)
  const clientLaunchId = `resume-${n}`
  const admission = await run(
    ledger.begin(
      { accountId, clientLaunchId, keyId, path: "atomic", chain: "solana", payer: "embedded", canonicalBody: { n: String(n) }, dailyCap: { keyDailyCap: 50, plan: pro } },
      attribute({ accountId, keyId, path: "atomic", chain: "solana", mint: signed.mint, visibility: "hidden" }, { add: () => undefined } as never)
    )
  )
  if (admission._tag !== "Accepted") throw new Error("not admitted")
  await q((sql) => sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
    VALUES (${`ep-resume-${n}`}, ${accountId}, 'https://hooks.example.com/x', ${JSON.stringify(["launch.confirmed", "launch.failed", "trade.executed"])}::jsonb, 's', 'whsec_x', 'active', now())`)
  const bundleId = `bundle-resume-${process.pid}-${n}`
  const legs = signed.ladder.legs.map((l) => ({ index: l.index, clientTradeId: `${bundleId}-t${l.index}`, amountInRaw: l.amountInRaw, platformFeeRaw: l.platformFeeRaw, usdMicros: 1_000n * BigInt(l.index) }))
  const build: StoredBundleBuild = {
    buyers: [b1.address, b2.address],
    lastValidBlockHeight: signed.lastValidBlockHeight,
    booking: { bundleId, accountId, keyId, clientLaunchId, attempt: admission.attempt.attempt, mint: signed.mint, curve: signed.curve, quoteAsset: "sol", visibility: "production", result: { success: true, mint: signed.mint }, platformFeeBps: 50n, legs }
  }
  expect(decodeStoredBuild(encodeStoredBuild(build))).toEqual(build)
  const s0 = initialBundle(bundleId, Date.now() + expiresInMs, signed.ladder.legs.map((l) => ({ clientTradeId: `${bundleId}-t${l.index}`, amountInRaw: l.amountInRaw, expectedOutRaw: l.amountOutRaw, minAmountOutRaw: l.minAmountOutRaw })))
  await run(insertBundle({ bundleId, accountId, keyId, keyPrefix: "p", clientLaunchId, attempt: admission.attempt.attempt, mint: signed.mint, build, state: s0, submitToken: null, expiresAtMs: s0.expiresAtMs }, encodeStoredBuild, Date.now()))
  await run(reserveHolds({ bundleId, keyId, accountId, asset: "sol" }, [{ legIndex: 1, wallet: b1.address, amountRaw: legs[0]!.amountInRaw + legs[0]!.platformFeeRaw, usdMicros: 1_000n }], Date.now()))
  const row = (await run(findBundle(bundleId, decodeStoredBuild)))!
  const io = await run(bundleIo(ledger, row))
  return { ledger, row, io, signed, accountId, keyId, clientLaunchId, bundleId }
}

const events = (accountId: string) => q<{ event: string }>((sql) => sql`SELECT event FROM webhook_deliveries WHERE account_id = ${accountId} ORDER BY event`).then((r) => r.map((x) => x.event))
const stateOf = async (bundleId: string) => (await run(findBundle(bundleId, decodeStoredBuild)))!.state

describe("resume at start", () => {
  it("engine killed between send and booking: after the restart the bundle is booked once from the chain", async () => {
    const b = await storedBundle()
    const r = runner()
    let s = await Effect.runPromise(r.apply(b.row.state, { _tag: "SubmitBegun", atMs: Date.now() }, b.io))
    s = await Effect.runPromise(r.apply(s, { _tag: "Signing", atMs: Date.now() }, b.io))
    // The process stores Sent, hands the bundle to the engine, and dies before hearing back.
    const [launchSignature, ...buySignatures] = signaturesOf(b.signed.wires)
    await Effect.runPromise(r.apply(s, { _tag: "Sent", launchSignature: launchSignature!, buySignatures, atMs: Date.now() }, b.io))
    expect(operatorStateOf(await stateOf(b.bundleId))).toBe("execution_unknown")
    const sent = await makeBlockEngineClient({ url: net.blockEngineUrl }).sendBundle(b.signed.wires, [1, 2])
    expect(sent._tag).toBe("Sent")
    await eventually(async () => {
      await run(resumeAll(runner(), b.ledger, Date.now()))
      return operatorStateOf(await stateOf(b.bundleId)) === "booked" ? true : undefined
    }, {
      what: "the killed bundle booked after restart",
      deadlineMs: 10_000,
      intervalMs: 50
    })
    await run(resumeAll(runner(), b.ledger, Date.now())) // a second restart
    expect(await events(b.accountId)).toEqual(["launch.confirmed", "trade.executed", "trade.executed"])
    expect((await run(b.ledger.get({ accountId: b.accountId, clientLaunchId: b.clientLaunchId })))?.state).toBe("confirmed")
    expect((await run(holdsOfBundle(b.bundleId))).map((h) => h.state)).toEqual(["converted"])
    const final = await stateOf(b.bundleId)
    expect(final.landedBy).toBe("chain")
    expect(final.buys.map((x) => x.actualOutRaw)).toEqual(b.signed.ladder.legs.map((l) => l.amountOutRaw))
  })

  it("signed but never recorded as sent: build_expired, the attempt failed, the hold kept", async () => {
    const b = await storedBundle()
    const r = runner()
    const s = await Effect.runPromise(r.apply(b.row.state, { _tag: "SubmitBegun", atMs: Date.now() }, b.io))
    await Effect.runPromise(r.apply(s, { _tag: "Signing", atMs: Date.now() }, b.io))
    await run(resumeAll(runner(), b.ledger, Date.now()))
    expect(operatorStateOf(await stateOf(b.bundleId))).toBe("build_expired")
    expect((await run(b.ledger.get({ accountId: b.accountId, clientLaunchId: b.clientLaunchId })))?.state).toBe("failed")
    expect(await events(b.accountId)).toEqual(["launch.failed"])
    expect((await run(holdsOfBundle(b.bundleId))).map((h) => h.state)).toEqual(["held"])
  })

  it("an expired live build releases its hold; an interrupted verification counts as nothing signed", async () => {
    const live = await storedBundle(1)
    const verifying = await storedBundle(1)
    await Effect.runPromise(runner().apply(verifying.row.state, { _tag: "SubmitBegun", atMs: Date.now() - 10 }, verifying.io))
    await new Promise((r) => setTimeout(r, 5))
    await run(resumeAll(runner(), live.ledger, Date.now()))
    for (const b of [live, verifying]) {
      expect(operatorStateOf(await stateOf(b.bundleId))).toBe("build_expired")
      expect((await run(holdsOfBundle(b.bundleId))).map((h) => h.state)).toEqual(["released"])
    }
  })
})
