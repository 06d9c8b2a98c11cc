/**
 * Atomic launches through the started engine (embedded mode, the Solana localnet and its block
 * engine over real sockets, real HTTP), as the local account's agent key (Max): the creator and
 * two buys paid by the embedded wallet (server legs) and one by an imported linked wallet (a client
 * leg, signed here as an agent does, with the wallet's own key). The bundle lands, is booked, and
 * each buy's executed amount, read from its own transaction on chain, equals its `expectedFill` to
 * the unit. Also: a tampered leg (resubmittable), a wrong leg count (consumed), a concurrent submit
 * (409), a repeat submit (the stored outcome, nothing resent), the job row, a test key refused.
 */
import { createKeyPairSignerFromPrivateKeyBytes, createSolanaRpc, type KeyPairSigner, lamports, address as solanaAddress, signature as asSignature } from "@solana/kit"
import { readFileSync } from "node:fs"
import { webcrypto } from "node:crypto"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import { clientSign } from "../support/atomicBundles.js"
import { type Engine, startEngine } from "../support/engine.js"
import { consistently, eventually } from "../support/eventually.js"
import { type AgentClient, agentClient, importWallet, uploadImage } from "../support/launchClient.js"
import { answered, publicReads } from "../support/typedReads.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"

const SOL = 1_000_000_000n
let engine: Engine
let key: string
let imageUrl: string
let linked: { walletId: string; signer: KeyPairSigner }
let rpc: ReturnType<typeof createSolanaRpc>

const agentApi = agentClient(() => engine.url, () => key)
const reads = publicReads(() => engine.url)

type Schemas = MainComponents["schemas"]
/** The atomic launch routes and the job read through the typed client, as `client`'s key (the local one by default). */
const atomic = (client: AgentClient = agentApi) => ({
  build: async (body: Schemas["AtomicLaunchBuild"]) => answered(await client().POST("/api/v1/launch/atomic/build", { body })),
  submit: async (body: Schemas["AtomicLaunchSubmit"]) => answered(await client().POST("/api/v1/launch/atomic/submit", { body })),
  bundle: async (bundleId: string) => answered(await client().GET("/api/v1/launch/atomic/bundles/{bundleId}", { params: { path: { bundleId } } })),
  job: async (clientLaunchId: string) => answered(await client().GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } }))
})
const local = atomic()
/** A key issued by the owner's session (`POST /api/v1/agent/keys`). */
const issueKey = async (body: Schemas["KeyIssueBody"]) => {
  const { sessionToken } = JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { sessionToken: string }
  return answered(await engineClient({ baseUrl: engine.url, session: sessionToken }).POST("/api/v1/agent/keys", { body }))
}

beforeAll(async () => {
  engine = await startEngine({ env: { HEADLESS_LAUNCH_ENABLED: "true", MIGRATION_SWEEP_INTERVAL_MS: "300" }, args: ["--quiet"], readyTimeoutMs: 120_000 })
  key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
  const localnet = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string } }
  rpc = createSolanaRpc(localnet.solana.rpcUrl)
  imageUrl = await uploadImage(engine, key, 64)
  const seed = webcrypto.getRandomValues(new Uint8Array(32))
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed)
  const wallet = await importWallet(agentApi, "solana", signer.address, await exportSecretText("solana", seed))
  await createSolanaRpc(localnet.solana.rpcUrl).requestAirdrop(solanaAddress(signer.address), lamports(150n * SOL)).send()
  await eventually(async () => ((await rpc.getBalance(signer.address, { commitment: "confirmed" }).send()).value > 0n ? true : undefined), { what: "the airdrop", intervalMs: 50 })
  linked = { walletId: wallet.walletId, signer }
}, 150_000)

afterAll(async () => {
  if (process.env.ATOMIC_E2E_LOG === "1") console.log(engine?.output().split("\n").filter((l) => /level=(error|warn|fatal)|Error|died/i.test(l)).slice(-30).join("\n"))
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

let seq = 0
type Payer = Schemas["AtomicPayer"]
const body = (firstBuys: ReadonlyArray<{ payer: Payer; amountRaw: string }>) => ({
  clientLaunchId: `atomic-${process.pid}-${++seq}`,
  name: `Atomic ${seq}`,
  symbol: `ATM${seq}`,
  imageUrl,
  payer: { type: "main" } as Payer,
  firstBuys: [...firstBuys]
})
const main: Payer = { type: "main" }
const linkedPayer = (): Payer => ({ type: "linked", linkedWalletId: linked.walletId })

/** The client legs of a build, signed by the linked wallet's own key, in leg order. */
const signClientLegs = (legs: ReadonlyArray<{ signer: string; unsignedTxBase64?: string }>) =>
  Promise.all(legs.filter((l) => l.signer === "client").map((l) => clientSign(l.unsignedTxBase64!, linked.signer)))

/** Tokens of `mint` the transaction delivered to `owner` (post minus pre balance). */
const delivered = async (signature: string, mint: string, owner: string): Promise<bigint> => {
  const tx = await rpc.getTransaction(asSignature(signature), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send()
  const of = (list: ReadonlyArray<{ mint: string; owner?: string; uiTokenAmount: { amount: string } }> | null | undefined) =>
    BigInt(list?.find((b) => b.mint === mint && b.owner === owner)?.uiTokenAmount.amount ?? "0")
  return of(tx?.meta?.postTokenBalances as never) - of(tx?.meta?.preTokenBalances as never)
}

describe("an atomic launch through the engine", () => {
  it("main and linked payers: builds, the client signs its leg, submits, lands, is booked; each fill equals its expectedFill to the unit", async () => {
    const b = body([
      { payer: main, amountRaw: (SOL / 2n).toString() },
      { payer: linkedPayer(), amountRaw: SOL.toString() },
      { payer: main, amountRaw: (SOL / 4n).toString() }
    ])
    const build = await local.build(b)
    expect(build.status, JSON.stringify(build.body)).toBe(200)
    const legs = build.body.legs as Array<{ index: number; role: string; signer: string; expectedFill?: { amountOutRaw: string; minAmountOutRaw: string }; unsignedTxBase64?: string }>
    expect(legs.map((l) => [l.index, l.role, l.signer])).toEqual([
      [0, "launch", "server"],
      [1, "buy", "server"],
      [2, "buy", "client"],
      [3, "buy", "server"]
    ])
    expect(legs.map((l) => l.unsignedTxBase64 !== undefined)).toEqual([false, false, true, false])
    for (const l of legs.slice(1)) {
      const fill = BigInt(l.expectedFill!.amountOutRaw)
      expect(BigInt(l.expectedFill!.minAmountOutRaw)).toBe((fill * 9_900n) / 10_000n)
    }
    expect(build.body.expiresAt).toBeGreaterThan(Date.now() + 9 * 60_000)
    // A live same-body repeat answers the same bundle.
    expect((await local.build(b)).body).toEqual(build.body)
    const pending = await local.bundle(build.body.bundleId)
    expect(pending.body.bundle).toMatchObject({ bundleId: build.body.bundleId, clientLaunchId: b.clientLaunchId, operatorState: null, nextAction: "submit", attemptState: "built" })

    const signed = await signClientLegs(legs)
    // A tampered leg: refused, nothing signed or sent, and the bundle may be submitted again.
    const bytes = Buffer.from(signed[0]!, "base64")
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1
    const tampered = await local.submit({ bundleId: build.body.bundleId, signedTxsBase64: [bytes.toString("base64")] })
    expect([tampered.status, tampered.body.error.code, tampered.body.error.field]).toEqual([403, "UNRECOGNIZED_TRANSACTION", "signedTxsBase64[0]"])

    const submitted = await local.submit({ bundleId: build.body.bundleId, signedTxsBase64: signed })
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200)
    expect(submitted.body).toMatchObject({ status: "landed", bundleId: build.body.bundleId, mint: build.body.mint })
    const signatures = submitted.body.signatures as string[]
    expect(signatures).toHaveLength(4)

    // Each buy's own transaction delivered exactly its ladder fill to its payer.
    const embedded = ((await answered(await agentApi().GET("/api/v1/agent/wallets"))).body.wallets as Array<{ chain: string; kind?: string; custody?: string; address: string }>)
    const buyers = [null, "main", linked.signer.address, "main"]
    for (const leg of legs.slice(1)) {
      const owner = buyers[leg.index] === "main" ? undefined : (buyers[leg.index] as string)
      const tx = await rpc.getTransaction(asSignature(signatures[leg.index]!), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send()
      const payer = owner ?? (tx!.transaction.message.accountKeys[0] as string)
      expect(await delivered(signatures[leg.index]!, build.body.mint, payer), `leg ${leg.index}`).toBe(BigInt(leg.expectedFill!.amountOutRaw))
    }
    expect(embedded.length).toBeGreaterThan(0)

    const booked = await eventually(
      async () => {
        const r = await local.bundle(build.body.bundleId)
        return r.body.bundle.operatorState === "booked" ? r.body.bundle : undefined
      },
      { what: "the bundle booked", deadlineMs: 20_000, intervalMs: 100 }
    )
    expect(booked).toMatchObject({ missingPhases: [], nextAction: "none", attemptState: "landed", signature: signatures[0], chainOutcome: { landed: true, revertedLegs: [] } })
    expect(booked.buys.map((x: { rowStatus: string; operatorState: string }) => [x.rowStatus, x.operatorState])).toEqual([
      ["confirmed", "booked"],
      ["confirmed", "booked"],
      ["confirmed", "booked"]
    ])

    // A repeat submit answers the same outcome; nothing is resent.
    const again = await local.submit({ bundleId: build.body.bundleId, signedTxsBase64: signed })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ status: "landed", signatures, booking: { state: "booked", missing: [] } })
    // The job row, and a same-body build of a confirmed launch replays its result.
    const job = await local.job(b.clientLaunchId)
    expect(job.body.job).toMatchObject({ clientLaunchId: b.clientLaunchId, status: "confirmed", mint: build.body.mint, signature: signatures[0], bundleId: build.body.bundleId })
    const replay = await local.build(b)
    expect(replay.status).toBe(200)
    expect(replay.body).toMatchObject({ success: true, mint: build.body.mint, signature: signatures[0] })
    // The market, ingested from the chain, saw exactly the three buys (none lost, none doubled).
    const market = await eventually(
      async () => {
        const r = await reads.market("solana", build.body.mint)
        const m = r.status === 200 ? (r.body as { market: { tradesTotal: number; buys24h: number } }).market : undefined
        return m !== undefined && m.tradesTotal >= 3 ? m : undefined
      },
      { what: "the market's trades", deadlineMs: 20_000, intervalMs: 100 }
    )
    expect([market.tradesTotal, market.buys24h]).toEqual([3, 3])
  }, 120_000)

  it("a wrong leg count consumes the bundle; a second submit meanwhile is 409; an unknown or foreign id is JOB_NOT_FOUND", async () => {
    const b = body([{ payer: linkedPayer(), amountRaw: (SOL / 10n).toString() }])
    const build = await local.build(b)
    expect(build.status, JSON.stringify(build.body)).toBe(200)
    const shape = await local.submit({ bundleId: build.body.bundleId, signedTxsBase64: [] })
    expect([shape.status, shape.body.error.code, shape.body.error.field]).toEqual([400, "VALIDATION_FAILED", "signedTxsBase64"])
    const signed = await signClientLegs(build.body.legs)
    const consumed = await local.submit({ bundleId: build.body.bundleId, signedTxsBase64: signed })
    expect([consumed.status, consumed.body.error.code]).toEqual([404, "JOB_NOT_FOUND"])
    expect((await local.bundle(build.body.bundleId)).body.bundle).toMatchObject({ operatorState: "build_expired", nextAction: "build_again" })
    // The consumed attempt failed (its daily-cap slot refunded): the job says to build again.
    expect((await local.job(b.clientLaunchId)).body.job).toMatchObject({ status: "failed", errorCode: "LAUNCH_FAILED", bundleId: build.body.bundleId })

    // Build again under the same id (the attempt failed nothing: a new bundle), then two submits at once.
    const rebuilt = await local.build(b)
    expect(rebuilt.status, JSON.stringify(rebuilt.body)).toBe(200)
    expect(rebuilt.body.bundleId).not.toBe(build.body.bundleId)
    const legs = await signClientLegs(rebuilt.body.legs)
    const [one, two] = await Promise.all([
      local.submit({ bundleId: rebuilt.body.bundleId, signedTxsBase64: legs }),
      local.submit({ bundleId: rebuilt.body.bundleId, signedTxsBase64: legs })
    ])
    const statuses = [one!.status, two!.status].sort()
    expect(statuses).toEqual([200, 409])
    const conflict = one!.status === 409 ? one! : two!
    expect(conflict.body.error).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", retryable: true })

    expect((await local.bundle("bnd_unknown")).body.error.code).toBe("JOB_NOT_FOUND")
    expect((await local.submit({ bundleId: "bnd_unknown", signedTxsBase64: [] })).body.error.code).toBe("JOB_NOT_FOUND")
  }, 120_000)

  it("first buys past graduation graduate the curve in the launch slot; its automatic migration is not armed (rule 8)", async () => {
    const b = body([
      { payer: main, amountRaw: (SOL / 10n).toString() },
      { payer: linkedPayer(), amountRaw: (100n * SOL).toString() }
    ])
    const build = await local.build(b)
    expect(build.status, JSON.stringify(build.body)).toBe(200)
    const submitted = await local.submit({ bundleId: build.body.bundleId, signedTxsBase64: await signClientLegs(build.body.legs) })
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200)
    const completed = await eventually(
      async () => {
        const r = await reads.market("solana", build.body.mint)
        const m = r.status === 200 ? (r.body as { market: { lifecycle: string; migration: { status: string } } }).market : undefined
        return m?.lifecycle === "completed" ? m : undefined
      },
      { what: "the curve completed", deadlineMs: 20_000, intervalMs: 100 }
    )
    expect(completed.migration.status).toBe("not_started")
    // The keeper sweeps every 300 ms here: over ten sweeps it never touches the curve.
    await consistently(
      async () => {
        const after = (await reads.market("solana", build.body.mint)).body as { market: { lifecycle: string; migration: { status: string } } }
        expect(after.market).toMatchObject({ lifecycle: "completed", migration: { status: "not_started" } })
      },
      { what: "the keeper leaves the completed curve alone", forMs: 3_000, intervalMs: 300 }
    )
  }, 60_000)

  it("gates each leg like a trade buy: the per-asset cap per leg and summed per payer wallet, the key's txLimit once over the bundle; nothing recorded", async () => {
    const { sessionToken } = JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { sessionToken: string }
    const owner = engineClient({ baseUrl: engine.url, session: sessionToken })
    const issue = async (extra: Partial<Schemas["KeyIssueBody"]>) => {
      const r = await issueKey({ label: `atomic-gate-${++seq}`, scopes: ["launch:write", "swap:write", "launch:read"], embeddedWallet: "allowed", ...extra })
      expect(r.status).toBe(200)
      return r.body as { key: string; keyPrefix: string }
    }
    const capped = await issue({})
    const put = await owner.PUT("/api/v1/agent/keys/{prefix}/limits", { params: { path: { prefix: capped.keyPrefix } }, body: [{ asset: "sol", maxPerTxRaw: SOL.toString() }] })
    expect(put.response.status).toBe(200)
    const asCapped = atomic(agentClient(() => engine.url, () => capped.key))
    // One leg over the cap (amount plus the platform fee).
    const refusedIds: string[] = []
    const build = (b: ReturnType<typeof body>, as: typeof asCapped) => (refusedIds.push(b.clientLaunchId), as.build(b))
    const one = await build(body([{ payer: main, amountRaw: SOL.toString() }]), asCapped)
    expect([one.status, one.body.error.code, one.body.error.field]).toEqual([400, "SPEND_LIMIT_EXCEEDED", "firstBuys[0].amountRaw"])
    // Each leg under it, but the main wallet's two legs together over it: refused naming that wallet's first leg.
    const summed = await build(body([{ payer: linkedPayer(), amountRaw: (SOL / 2n).toString() }, { payer: main, amountRaw: (SOL / 2n).toString() }, { payer: main, amountRaw: (SOL / 2n).toString() }]), asCapped)
    expect([summed.status, summed.body.error.code, summed.body.error.field]).toEqual([400, "SPEND_LIMIT_EXCEEDED", "firstBuys[1].amountRaw"])
    // The txLimit once over the whole bundle, whoever pays: $1 a day cannot take two small buys.
    const limited = await issue({ txLimit: { usdMicros: 1_000_000, reset: "daily" } })
    const asLimited = atomic(agentClient(() => engine.url, () => limited.key))
    const over = await build(body([{ payer: main, amountRaw: (SOL / 100n).toString() }, { payer: linkedPayer(), amountRaw: (SOL / 100n).toString() }]), asLimited)
    expect([over.status, over.body.error.code]).toEqual([403, "KEY_LIMIT_REACHED"])
    // Nothing was recorded for any of them.
    for (const id of refusedIds) expect((await asCapped.job(id)).body.error.code).toBe("JOB_NOT_FOUND")
  }, 60_000)

  it("refuses a test key, an unpriceable ladder and a headless-shaped body, recording nothing", async () => {
    const testKey = (await issueKey({ label: "atomic-test", environment: "test", scopes: ["launch:write", "swap:write", "launch:read"] })).body as { key: string }
    const asTest = atomic(agentClient(() => engine.url, () => testKey.key))
    const b = body([{ payer: main, amountRaw: SOL.toString() }])
    const refused = await asTest.build(b)
    expect([refused.status, refused.body.error.code]).toEqual([403, "TEST_ENVIRONMENT_FORBIDDEN"])

    // A first buy past graduation leaves the next one nothing to buy.
    const unpriced = await local.build(body([{ payer: main, amountRaw: (200n * SOL).toString() }, { payer: main, amountRaw: SOL.toString() }]))
    expect([unpriced.status, unpriced.body.error.code, unpriced.body.error.field]).toEqual([400, "VALIDATION_FAILED", "firstBuys[1]"])
    const dev = await local.build({ ...b, buyAmount: "5" })
    expect([dev.status, dev.body.error.field]).toEqual([400, "buyAmount"])
    for (const id of [b.clientLaunchId]) expect((await local.job(id)).body.error.code).toBe("JOB_NOT_FOUND")
  }, 60_000)
})
