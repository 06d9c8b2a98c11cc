/**
 * The BundleActor's runtime against the localnet over its sockets (block engine and RPC) with its
 * state stored in PGlite: a bundle built by the ladder and signed as clients sign lands and books
 * each buy at its expected fill to the unit; a buy whose buyer cannot pay reverts inside the landed
 * bundle and the bundle still books; with the engine's fault switch the outcome is unknown and a
 * later pass settles it from the chain; a restart (a new runner over the stored state) after the
 * send, or with bookings owed, books each item exactly once; a bundle that never lands becomes
 * build_expired once its blockhash is past, and fails the attempt.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { createSolanaRpc, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit"
import { type Context, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type BundleOutput, initialBundle, operatorStateOf, revertedLegsOf } from "../../actors/bundle/BundleActor.js"
import { makeBlockEngineClient } from "../../src/chain/solana/client/BlockEngineClient.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { readSentBundle } from "../../src/chain/solana/launch/BundleChainRead.js"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import * as Database from "../../src/db/Database.js"
import { findBundle, insertBundle, saveState } from "../../src/services/launch/atomic/BundleStore.js"
import { makeRunner, type RunnerIo } from "../../src/services/launch/atomic/BundleRunner.js"
import { signedBundle } from "../support/atomicBundles.js"
import { eventually } from "../support/eventually.js"

const SOL = 1_000_000_000n

let localnet: ManagedRuntime.ManagedRuntime<SolanaLocalnet, unknown>
let net: SolanaLocalnetShape
let scope: Scope.CloseableScope
let db: Context.Context<SqlClient.SqlClient>

beforeAll(async () => {
  localnet = ManagedRuntime.make(SolanaLocalnet.layer({ ledger: { slotMs: 50, blockhashValiditySlots: 20 }, blockEngine: { faultSwitch: true } }))
  net = await localnet.runPromise(SolanaLocalnet)
  scope = await Effect.runPromise(Scope.make())
  db = await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))
}, 60_000)
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await localnet?.dispose()
})

const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provide(e, db))
const rpcCall = async (method: string, params: ReadonlyArray<unknown>) =>
  (await fetch(net.blockEngineUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })).json()

const runner = () =>
  makeRunner({
    engine: makeBlockEngineClient({ url: net.blockEngineUrl, timeoutMs: 2_000 }),
    readChain: (v) => readSentBundle(createSolanaRpc(net.rpcUrl), v),
    statusDeadlineMs: 5_000,
    pollMs: 20
  })

/** Stores every state; records each performed output; `failing` outputs fail (the item stays owed). */
const recordingIo = (bundleId: string, performed: BundleOutput[], failing: (o: BundleOutput) => boolean = () => false): RunnerIo<string> => ({
  save: (s) => Effect.provide(saveState(bundleId, s, Date.now()), db).pipe(Effect.orDie),
  perform: (_s, o) => (failing(o) ? Effect.fail("booking failed") : Effect.sync(() => void performed.push(o)))
})

let seq = 0
/** A priced, assembled and client-signed bundle, stored in `signing` (holds kept, about to send). */
const prepared = async (creator: KeyPairSigner, buyers: ReadonlyArray<KeyPairSigner>, amounts: ReadonlyArray<bigint>) => {
  const { ladder, wires, mint, lastValidBlockHeight } = await signedBundle(net.ledger, creator, buyers, amounts)
  const bundleId = `runner-${process.pid}-${++seq}`
  const s0 = initialBundle(bundleId, Date.now() + 600_000, ladder.legs.map((l, i) => ({ clientTradeId: `${bundleId}-t${i + 1}`, amountInRaw: l.amountInRaw, expectedOutRaw: l.amountOutRaw, minAmountOutRaw: l.minAmountOutRaw })))
  await run(insertBundle({ bundleId, accountId: "a", keyId: "k", keyPrefix: "p", clientLaunchId: bundleId, attempt: 1, mint, build: {}, state: s0, submitToken: null, expiresAtMs: s0.expiresAtMs }, JSON.stringify, Date.now()))
  const performed: BundleOutput[] = []
  const io = recordingIo(bundleId, performed)
  const r = runner()
  let s = await Effect.runPromise(r.apply(s0, { _tag: "SubmitBegun", atMs: Date.now() }, io))
  s = await Effect.runPromise(r.apply(s, { _tag: "Signing", atMs: Date.now() }, io))
  return { bundleId, wires, ladder, mint, buyers: buyers.map((b) => b.address), lastValidBlockHeight, state: s, performed, io }
}

const stored = async (bundleId: string) => (await run(findBundle(bundleId, (t) => t)))!.state
const bookedBuys = (performed: ReadonlyArray<BundleOutput>) =>
  performed.flatMap((o) => (o._tag === "BookBuy" ? [[o.index, o.amountOutRaw, o.source] as const] : []))

describe("bundle runner over the localnet", () => {
  it("lands and books every buy at its expected fill, once", async () => {
    const [creator, b1, b2] = await Promise.all([devSigner(0), devSigner(1), devSigner(2)])
    const p = await prepared(creator, [b1, b2, b1], [SOL, 2n * SOL, SOL / 2n])
    const s = await Effect.runPromise(runner().send(p.state, p.wires, p.buyers, p.mint, p.lastValidBlockHeight, p.io))
    expect(operatorStateOf(s)).toBe("booked")
    expect(bookedBuys(p.performed)).toEqual(p.ladder.legs.map((l) => [l.index, l.amountOutRaw, "engine"]))
    expect(p.performed.map((o) => o._tag).sort()).toEqual(["BookBuy", "BookBuy", "BookBuy", "BookLaunch", "BookToken", "Finalize"])
    expect(await stored(p.bundleId)).toEqual(s)
    // The chain agrees to the unit: what each leg delivered is its expected fill.
    const read = await readSentBundle(createSolanaRpc(net.rpcUrl), { launchSignature: s.launchSignature!, buySignatures: s.buys.map((b) => b.signature!), buyers: p.buyers, mint: p.mint, lastValidBlockHeight: p.lastValidBlockHeight })
    expect(read.buys.map((b) => (b.status === "landed" ? b.deliveredRaw : null))).toEqual(s.buys.map((b) => b.expectedOutRaw))
  })

  it("a buy whose buyer cannot pay reverts inside the landed bundle; the bundle still books", async () => {
    const creator = await devSigner(0)
    const poor = await generateKeyPairSigner()
    net.ledger.requestAirdrop(poor.address, SOL / 100n)
    const rich = await devSigner(3)
    const p = await prepared(creator, [rich, poor], [SOL, SOL])
    const s = await Effect.runPromise(runner().send(p.state, p.wires, p.buyers, p.mint, p.lastValidBlockHeight, p.io))
    expect(operatorStateOf(s)).toBe("booked")
    expect(revertedLegsOf(s)).toEqual([{ index: 2, signature: s.buys[1]!.signature, errorCode: "reverted" }])
    expect(bookedBuys(p.performed).map(([i]) => i)).toEqual([1])
    expect(p.performed).toContainEqual({ _tag: "Finalize", landedBuyIndexes: [1] })
  })

  it("an unknown outcome (fault switch) is settled later from the chain; a restart books each item once", async () => {
    const [creator, b1] = await Promise.all([devSigner(0), devSigner(4)])
    const p = await prepared(creator, [b1, b1], [SOL, SOL])
    await rpcCall("localnet_setBundleFaults", [{ hideOutcomes: true }])
    const unknown = await Effect.runPromise(runner().send(p.state, p.wires, p.buyers, p.mint, p.lastValidBlockHeight, p.io)).finally(() =>
      rpcCall("localnet_setBundleFaults", [{ hideOutcomes: false }])
    )
    expect([operatorStateOf(unknown), unknown.unknownPhases]).toEqual(["execution_unknown", ["send"]])
    expect(p.performed).toEqual([])
    // "Restart": a new runner over the stored state. Its first pass may find the slot still open; wait for the chain.
    const restarted = await stored(p.bundleId)
    expect(restarted).toEqual(unknown)
    const performed: BundleOutput[] = []
    const io = recordingIo(p.bundleId, performed)
    const settled = await eventually(
      async () => {
        const s = await Effect.runPromise(runner().recover(await stored(p.bundleId), p.buyers, p.mint, p.lastValidBlockHeight, io))
        return operatorStateOf(s) === "booked" ? s : undefined
      },
      { what: "the unknown bundle settled from the chain", deadlineMs: 10_000, intervalMs: 50 }
    )
    expect(settled.landedBy).toBe("chain")
    expect(bookedBuys(performed)).toEqual(p.ladder.legs.map((l) => [l.index, l.amountOutRaw, "chain"]))
    // A further pass or resume books nothing again.
    const again = await Effect.runPromise(runner().recover(await stored(p.bundleId), p.buyers, p.mint, p.lastValidBlockHeight, io))
    await Effect.runPromise(runner().resume(again, io))
    expect(performed).toHaveLength(5)
  })

  it("bookings that fail stay owed across a restart and are each performed once when resumed", async () => {
    const [creator, b1] = await Promise.all([devSigner(0), devSigner(5)])
    const p = await prepared(creator, [b1], [SOL])
    const failingIo = recordingIo(p.bundleId, p.performed, () => true)
    const owed = await Effect.runPromise(runner().send(p.state, p.wires, p.buyers, p.mint, p.lastValidBlockHeight, failingIo))
    expect(operatorStateOf(owed)).toBe("landed_pending_booking")
    const performed: BundleOutput[] = []
    const resumed = await Effect.runPromise(runner().resume(await stored(p.bundleId), recordingIo(p.bundleId, performed)))
    expect(operatorStateOf(resumed)).toBe("booked")
    expect(performed.map((o) => o._tag).sort()).toEqual(["BookBuy", "BookLaunch", "BookToken", "Finalize"])
    expect(await stored(p.bundleId)).toEqual(resumed)
  })

  it("a bundle that never lands is build_expired once its blockhash is past, and fails the attempt", async () => {
    const poorCreator = await generateKeyPairSigner() // cannot pay rent or tip: the launch leg fails, nothing lands
    net.ledger.requestAirdrop(poorCreator.address, 10_000n)
    const b1 = await devSigner(6)
    const p = await prepared(poorCreator, [b1], [SOL])
    await rpcCall("localnet_setBundleFaults", [{ hideOutcomes: true }])
    const unknown = await Effect.runPromise(runner().send(p.state, p.wires, p.buyers, p.mint, p.lastValidBlockHeight, p.io)).finally(() =>
      rpcCall("localnet_setBundleFaults", [{ hideOutcomes: false }])
    )
    expect(operatorStateOf(unknown)).toBe("execution_unknown")
    const early = await Effect.runPromise(runner().recover(unknown, p.buyers, p.mint, p.lastValidBlockHeight, p.io))
    expect(operatorStateOf(early)).toBe("execution_unknown")
    const expired = await eventually(
      async () => {
        const s = await Effect.runPromise(runner().recover(await stored(p.bundleId), p.buyers, p.mint, p.lastValidBlockHeight, p.io))
        return operatorStateOf(s) === "build_expired" ? s : undefined
      },
      { what: "the dead bundle proven never to land", deadlineMs: 15_000, intervalMs: 100 }
    )
    expect(expired.holdsKept).toBe(true)
    expect(p.performed).toEqual([{ _tag: "FailLaunch", detail: "bundle never landed" }])
  })
})
