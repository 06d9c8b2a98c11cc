/**
 * Headless launches through the started engine (embedded mode, both localnets, real HTTP), as the
 * local account's agent key: upload an image, dry-run, launch on Solana and on Hood, the market
 * reaching the `new` feed through the ordinary ingest path, quote and verify; the idempotency
 * rules (replay, different body, in flight), async jobs, 50 concurrent requests with one id.
 */
import { address, createSolanaRpc, signature } from "@solana/kit"
import { findCurveAddresses } from "../../src/chain/solana/client/CurveInstructions.js"
import { decodeMetadata } from "../../src/chain/solana/program/accounts/Metadata.js"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, rawBody } from "../support/launchClient.js"
import { solidImage } from "../support/testImages.js"
import { answered, publicReads } from "../support/typedReads.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"

let engine: Engine
let key: string
let imageUrl: string

type LaunchRequest = MainComponents["schemas"]["LaunchRequest"]
/** The local agent key's typed client; the public reads; the owner's (session) typed client. */
const agentApi = agentClient(
  () => engine.url,
  () => key
)
const reads = publicReads(() => engine.url)
const ownerApi = () => engineClient({ baseUrl: engine.url, session: (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { sessionToken: string }).sessionToken })

const launch = async (body: LaunchRequest) => answered(await agentApi().POST("/api/v1/launch/headless", { body }))
const dryRun = async (body: LaunchRequest) => answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body }))
const job = async (clientLaunchId: string) => answered(await agentApi().GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } }))

let seq = 0
const solanaBody = (over: Partial<LaunchRequest> = {}) => ({
  clientLaunchId: `sol-${process.pid}-${++seq}`,
  name: `Launch ${seq}`,
  symbol: `L${seq}`,
  imageUrl,
  ...over
})

const newFeed = async (chain: "solana" | "hood"): Promise<ReadonlyArray<Record<string, any>>> => {
  const { data } = await engineClient({ baseUrl: engine.url }).GET("/api/v1/markets/feed", { params: { query: { bucket: "new", chain, limit: 100 } } })
  return (data?.tokens ?? []) as ReadonlyArray<Record<string, any>>
}

beforeAll(async () => {
  engine = await startEngine({ env: { HEADLESS_LAUNCH_ENABLED: "true" }, args: ["--quiet"], readyTimeoutMs: 120_000 })
  key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
}, 150_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

describe("hosted images", () => {
  it("uploads raw bytes and multipart, and serves them with their type and immutable caching", async () => {
    const png = await solidImage("png", 64, 64)
    const raw = answered(await agentApi().POST("/api/v1/uploads/agent-image", { ...rawBody(png), headers: { "content-type": "image/png" } }))
    expect(raw.status).toBe(200)
    imageUrl = raw.body.imageUrl
    expect(imageUrl.startsWith(`${engine.url}/api/v1/uploads/images/`)).toBe(true)

    const form = new FormData()
    form.append("image", new Blob([await solidImage("jpeg", 80, 40)], { type: "image/jpeg" }), "wide.jpg")
    const multipart = await agentApi().POST("/api/v1/uploads/agent-image", rawBody(form))
    expect(multipart.response.status).toBe(200)

    const served = await engineClient({ baseUrl: engine.url }).GET("/api/v1/uploads/images/{file}", { params: { path: { file: imageUrl.split("/").pop()! } }, parseAs: "arrayBuffer" })
    expect(served.response.status).toBe(200)
    expect(served.response.headers.get("content-type")).toBe("image/png")
    expect(served.response.headers.get("cache-control")).toContain("immutable")
    // A square upload keeps its bytes.
    expect(new Uint8Array(served.data!)).toEqual(png)

    // Not an image behind an image type: sent by hand (the bytes are the point).
    const junk = await fetch(`${engine.url}/api/v1/uploads/agent-image`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "image/png" },
      body: new TextEncoder().encode("not an image")
    })
    expect(junk.status).toBe(400)
    expect(((await junk.json()) as { error: { code: string } }).error.code).toBe("UPLOAD_INVALID")
  })
})

describe("Solana headless launches", () => {
  it("dry-runs, launches with a dev buy, and the market reaches the new feed, quotes and verifies", async () => {
    const socials = { twitter: "https://x.com/curvecat", website: "https://curvecat.example.com" }
    const body = solanaBody({ buyAmount: "100000000", description: "A cat on a curve", socials })
    const dry = await dryRun(body)
    expect(dry.status).toBe(200)
    expect(dry.body).toMatchObject({ success: true, dryRun: true, resolved: { chain: "solana", quoteAsset: "sol", mode: "open", buyAmount: "100000000" } })
    expect(dry.body.size).toMatchObject({ limit: 1232, fits: true })
    expect(dry.body.size.txBytes).toBeLessThanOrEqual(1232)
    // The dry run wrote nothing: the id is unknown.
    expect((await job(body.clientLaunchId)).body.error.code).toBe("JOB_NOT_FOUND")

    const first = await launch(body)
    expect(first.status).toBe(200)
    const r = first.body
    expect(r).toMatchObject({ success: true, chain: "solana", quoteAsset: "sol", mode: "open", stakerAllocationBps: 50, matrixVersion: 1, createdDuringStream: false })
    expect(r.nextBuy).toEqual({ market: r.pool, quoteAsset: "sol", marketStateUrl: `/api/v1/markets/solana/${r.mint}` })
    expect(r.devBuy.signature).toBe(r.signature)
    expect(r.devBuy.fee).toMatchObject({ bps: 25, feeRaw: "250000" })
    expect(r.links.explorer).toContain(r.signature)
    expect(dry.body.launchWallet).toBeTypeOf("string")

    const row = await eventually(async () => (await newFeed("solana")).find((t) => t.address === r.mint), { what: "the launch in the new feed", deadlineMs: 20_000, intervalMs: 50 })
    expect(row).toMatchObject({ name: body.name, symbol: body.symbol, image: imageUrl, isAgent: true, lifecycle: "trading" })
    // The launch's metadata document: the on-chain URI names it, it is served, and the reads carry its fields (issue 31).
    const market = await reads.market("solana", r.mint)
    expect(market.body.market.metadata).toEqual({ name: body.name, symbol: body.symbol, image: imageUrl, socials })
    const { solana: net } = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string } }
    const metadataAccount = await createSolanaRpc(net.rpcUrl).getAccountInfo((await findCurveAddresses(address(r.mint))).metadata, { encoding: "base64" }).send()
    const uri = decodeMetadata(Buffer.from(metadataAccount.value!.data[0], "base64"))!.uri
    expect(uri).toMatch(new RegExp(`^${engine.url}/api/v1/uploads/metadata/[0-9a-f]{64}\\.json$`))
    const metadata = (file: string) => engineClient({ baseUrl: engine.url }).GET("/api/v1/uploads/metadata/{file}", { params: { path: { file } } })
    const document = await metadata(uri.split("/").pop()!)
    expect(document.response.status).toBe(200)
    expect(document.response.headers.get("cache-control")).toContain("immutable")
    expect(document.data).toEqual({
      name: body.name,
      symbol: body.symbol,
      description: "A cat on a curve",
      image: imageUrl,
      external_url: socials.website,
      extensions: socials
    })
    expect((await metadata(`${"0".repeat(64)}.json`)).response.status).toBe(404)
    const quote = await reads.curveQuote("solana", r.mint, 1_000_000_000n)
    expect(quote.status).toBe(200)
    const verify = (await reads.verify("solana", r.mint)).body as Record<string, unknown>
    expect(verify).toMatchObject({ candleLaunched: true, viaAgentKey: true, creator: dry.body.launchWallet })

    const j = await job(body.clientLaunchId)
    expect(j.body.job).toMatchObject({ clientLaunchId: body.clientLaunchId, chain: "solana", status: "confirmed", mint: r.mint, signature: r.signature })

    // The dry run sized the transaction that landed, to the byte (same image URL, same legs).
    const { solana } = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string } }
    const landed = await createSolanaRpc(solana.rpcUrl)
      .getTransaction(signature(r.signature), { encoding: "base64", maxSupportedTransactionVersion: 0, commitment: "confirmed" })
      .send()
    expect(Buffer.from(landed!.transaction[0], "base64").byteLength).toBe(dry.body.size.txBytes)
  })

  it("replays a confirmed same-body repeat, refuses another body (not retryable), and starts async jobs", async () => {
    const body = solanaBody()
    const first = await launch(body)
    expect(first.status).toBe(200)
    // Same body, other spelling of the defaults and another `async`: the stored result.
    const again = await launch({ ...body, chain: "solana", mode: "open", async: true })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    const other = await launch({ ...body, name: "Another" })
    expect(other.status).toBe(409)
    expect(other.body.error).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", retryable: false })

    const asyncBody = solanaBody({ async: true })
    const accepted = await launch(asyncBody)
    expect(accepted.status).toBe(202)
    expect(accepted.body).toEqual({
      success: true,
      accepted: true,
      clientLaunchId: asyncBody.clientLaunchId,
      status: "submitted",
      jobUrl: `/api/v1/launch/headless/jobs/${asyncBody.clientLaunchId}`
    })
    const done = await eventually(
      async () => {
        const j = await job(asyncBody.clientLaunchId)
        return j.body.job?.status === "confirmed" ? j.body.job : undefined
      },
      { what: "the async job to confirm", deadlineMs: 30_000, intervalMs: 50 }
    )
    expect(done.mint).toBeTypeOf("string")
    // The blocking shape replays the async launch's result.
    const replay = await launch({ ...asyncBody, async: false })
    expect(replay.status).toBe(200)
    expect(replay.body.mint).toBe(done.mint)
  })

  it("50 concurrent requests with one id make one curve", async () => {
    const body = solanaBody()
    const answers = await Promise.all(Array.from({ length: 50 }, () => launch(body)))
    const ok = answers.filter((a) => a.status === 200)
    const inFlight = answers.filter((a) => a.status === 409)
    expect(ok.length + inFlight.length).toBe(50)
    for (const a of inFlight) expect(a.body.error).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", retryable: true })
    expect(ok.length).toBeGreaterThan(0)
    expect(new Set(ok.map((a) => a.body.mint)).size).toBe(1)
    // Once settled, every repeat answers the one result; the chain holds one market with this name.
    const settled = await launch(body)
    expect(settled.body.mint).toBe(ok[0]!.body.mint)
    await eventually(async () => (await newFeed("solana")).some((t) => t.address === settled.body.mint), { what: "the market", deadlineMs: 20_000, intervalMs: 50 })
    expect((await newFeed("solana")).filter((t) => t.name === body.name)).toHaveLength(1)
  })
})

describe("launch events", () => {
  it("a confirmed launch puts launch.confirmed in the webhook outbox of the account's endpoints", async () => {
    // The owner's session alone (no agent key).
    const owner = ownerApi()
    // A public IP literal: the registration needs no DNS; deliveries fail here (no network) but are recorded.
    const endpoint = answered(await owner.POST("/api/v1/agent/webhooks", { body: { url: "https://93.184.216.34/hook", events: ["launch.confirmed", "launch.failed"] } }))
    expect(endpoint.status).toBe(201)
    const id = endpoint.body.webhook?.id ?? endpoint.body.id
    const events = async () =>
      ((await owner.GET("/api/v1/agent/webhooks/{id}/deliveries", { params: { path: { id } } })).data!.deliveries as Array<{ event: string }>).map((d) => d.event)
    expect(await events()).toEqual([])
    expect((await launch(solanaBody())).status).toBe(200)
    expect(await events()).toEqual(["launch.confirmed"])
  })
})

describe("Hood headless launches", () => {
  it("dry-runs without a size, launches with a dev buy, and the market reaches the new feed", async () => {
    const body: LaunchRequest = {
      clientLaunchId: `hood-${process.pid}-${++seq}`,
      chain: "hood",
      dexVersion: "v3",
      name: `Hood ${seq}`,
      symbol: `H${seq}`,
      imageUrl,
      buyAmount: "1000000000000000"
    }
    const dry = await dryRun(body)
    expect(dry.status).toBe(200)
    expect(dry.body).toMatchObject({ dryRun: true, resolved: { chain: "hood", quoteAsset: "eth", dexVersion: "v3" } })
    expect(dry.body.size).toBeUndefined()

    const res = await launch(body)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, chain: "hood", quoteAsset: "eth", matrixVersion: 1, createdDuringStream: false })
    expect(res.body.devBuy).toMatchObject({ outcome: "landed", feeOutcome: "landed" })
    expect(res.body.links.explorer).toBeUndefined()
    const mint = (res.body.mint as string).toLowerCase()
    const row = await eventually(async () => (await newFeed("hood")).find((t) => t.address.toLowerCase() === mint), {
      what: "the Hood launch in the new feed",
      deadlineMs: 30_000,
      intervalMs: 100
    })
    expect(row).toMatchObject({ name: body.name, isAgent: true })
    const verify = (await reads.verify("hood", mint)).body as Record<string, unknown>
    expect(verify).toMatchObject({ candleLaunched: true, viaAgentKey: true })
    const j = await job(body.clientLaunchId)
    expect(j.body.job).toMatchObject({ chain: "hood", status: "confirmed", devBuy: { outcome: "landed", feeOutcome: "landed" } })
  })

  it("an async Hood launch is polled to confirmed", async () => {
    const body: LaunchRequest = { clientLaunchId: `hood-async-${process.pid}-${++seq}`, chain: "hood", dexVersion: "v4", name: `Hood async ${seq}`, symbol: "HA", imageUrl, async: true }
    const accepted = await launch(body)
    expect(accepted.status).toBe(202)
    const done = await eventually(
      async () => {
        const j = await job(body.clientLaunchId)
        return j.body.job?.status === "confirmed" ? j.body.job : undefined
      },
      { what: "the async Hood job to confirm", deadlineMs: 30_000, intervalMs: 50 }
    )
    expect(done).toMatchObject({ chain: "hood", mint: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) })
    expect(done.devBuy).toBeUndefined()
    const mint = (done.mint as string).toLowerCase()
    await eventually(async () => (await newFeed("hood")).some((t) => t.address.toLowerCase() === mint), { what: "the market", deadlineMs: 30_000, intervalMs: 100 })
  })

  it("the agent record counts the launches made through agent keys", async () => {
    const accountId = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { accountId: string }).accountId
    const record = (await engineClient({ baseUrl: engine.url }).GET("/api/v1/users/{idOrWallet}/agent", { params: { path: { idOrWallet: accountId } } })).data as {
      agent: { launches: number; launchesViaApi: number }
    }
    // Every launch of this file went through the key (the simulation is off): 1 + 2 (one async) + the 50-way one + the event one + 2 on Hood.
    expect(record.agent.launchesViaApi).toBe(7)
    expect(record.agent.launches).toBeGreaterThanOrEqual(5)
  })
})

describe("the spend gate on headless dev buys (last: it changes the key's limits, and puts them back)", () => {
  /** The owner's key routes through the typed client (session). */
  const owner = {
    keys: async () => answered(await ownerApi().GET("/api/v1/agent/keys")),
    patch: async (prefix: string, body: MainComponents["schemas"]["KeyPatchBody"]) =>
      answered(await ownerApi().PATCH("/api/v1/agent/keys/{prefix}", { params: { path: { prefix } }, body })),
    limits: async (prefix: string, body: MainComponents["schemas"]["KeyLimitsBody"]) =>
      answered(await ownerApi().PUT("/api/v1/agent/keys/{prefix}/limits", { params: { path: { prefix } }, body }))
  }
  const localKey = async () => ((await owner.keys()).body.keys as Array<Record<string, any>>).find((k) => k.label === "local")!

  it("a dev buy books its USD value into the key's usage; one past the txLimit or the per-asset cap is refused and nothing is recorded", async () => {
    const before = await localKey()
    const prefix = before.keyPrefix as string
    // 0.1 SOL plus the Max plan's 0.25% fee at the localnet's $150: 100,250,000 lamports = $15.0375.
    const body = solanaBody({ buyAmount: "100000000" })
    const landed = await launch(body)
    expect(landed.status).toBe(200)
    expect(landed.body.devBuy.fee).toMatchObject({ feeRaw: "250000" })
    const spent = 15_037_500
    const after = await localKey()
    expect(after.usage.todayUsdMicros - before.usage.todayUsdMicros).toBe(spent)

    try {
      // A daily txLimit one micro-dollar short of the same buy again: refused at the dry run and the launch, nothing recorded.
      expect((await owner.patch(prefix, { txLimit: { usdMicros: after.usage.todayUsdMicros + spent - 1, reset: "daily" } })).status).toBe(200)
      const again = solanaBody({ buyAmount: "100000000" })
      for (const refused of [await dryRun(again), await launch(again)]) {
        expect(refused.status).toBe(403)
        expect(refused.body.error).toMatchObject({ code: "KEY_LIMIT_REACHED", retryable: true })
        expect(refused.body.error.resetsAt).toBeTypeOf("number")
      }
      expect((await job(again.clientLaunchId)).body.error.code).toBe("JOB_NOT_FOUND")
      // Exactly at the limit it fits; a launch without a dev buy spends nothing and is never gated.
      expect((await owner.patch(prefix, { txLimit: { usdMicros: after.usage.todayUsdMicros + spent, reset: "daily" } })).status).toBe(200)
      expect((await dryRun(again)).status).toBe(200)

      // The per-asset cap: buy plus fee at the cap passes, one lamport under it is refused.
      expect((await owner.limits(prefix, [{ asset: "sol", maxPerTxRaw: "100250000" }])).status).toBe(200)
      expect((await dryRun(again)).status).toBe(200)
      expect((await owner.limits(prefix, [{ asset: "sol", maxPerTxRaw: "100249999" }])).status).toBe(200)
      // The dry run decides on the key row the request authenticated with: the new cap is on it at once.
      for (const capped of [await dryRun(again), await launch(again)]) {
        expect(capped.status).toBe(400)
        expect(capped.body.error).toMatchObject({ code: "SPEND_LIMIT_EXCEEDED", spendLimit: { asset: "sol", capDecimal: "0.100249999", attemptedDecimal: "0.10025" } })
      }
      expect((await job(again.clientLaunchId)).body.error.code).toBe("JOB_NOT_FOUND")
      expect((await localKey()).usage.todayUsdMicros).toBe(after.usage.todayUsdMicros)
    } finally {
      await owner.patch(prefix, { clearTxLimit: true })
      await owner.limits(prefix, [])
    }
  })
})
