/**
 * The engine split by role, as real processes over real sockets: librdkafka's mock broker, a
 * PostgreSQL 15 server, the Solana and Hood localnets each in its own process, then `--role
 * ingest`, two `--role actors` and two `--role api`. Trades stream onto three Solana markets.
 * Both API replicas answer the same market records and feed (whole lists and `since_seq` deltas);
 * one actors process is killed with SIGKILL mid-stream, its partitions move to the other, and
 * every market ends where the chain is (trades counted once, none missed, reserves equal to the
 * curve account's) on both replicas; an API replica is killed with SIGKILL and a fresh one
 * catches up (503 from `/readyz` until then) and answers the same. A signals WebSocket on each
 * replica receives every signal the actors' detectors emit (a whale buy's large_move among them).
 * A key's rate limit holds across the two API replicas (their counts shared through PostgreSQL).
 */
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findCurveAddresses, getBuyInstruction, getCreateCurveInstruction, getSellInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { findAssociatedTokenAddress, getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { decodeCurve } from "../../src/chain/solana/program/accounts/Curve.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { makeRpcSender, type RpcSender } from "../../src/chain/solana/RpcSender.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { type RoleProcess, startRole } from "../support/clusterRoles.js"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { createRequire } from "node:module"
import type { Signal } from "../../src/domain/Signal.js"
import { dataClient, engineClient } from "../../clients/typescript/index.js"
import { type Engine, projectRoot, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { type KafkaBroker, noKafkaReason, skipKafka, startKafkaBroker } from "../support/kafkaBroker.js"
import { findPostgresBinDir, type PostgresServer, startPostgresServer } from "../support/postgresServer.js"
import { requireServers } from "../support/servers.js"
import { hoodEnv, solanaEnv, type Standalone, type StandaloneHood, type StandaloneSolana, startStandaloneHood, startStandaloneSolana } from "../support/standaloneChains.js"

const PARTITIONS = 4
const TOPICS = ["chain.events", "market.snapshots", "market.feed", "signals"]
const noPostgres = findPostgresBinDir() === undefined
if (noPostgres && requireServers) throw new Error("CURVESTREAM_REQUIRE_SERVERS=1 but no PostgreSQL server binaries are installed")
const skip = skipKafka() || noPostgres
const KEY = "ab".repeat(32)
const KEY_BASE64 = Buffer.alloc(32, 0xab).toString("base64")

let broker: KafkaBroker
let postgres: PostgresServer
let solana: Standalone<StandaloneSolana>
let hood: Standalone<StandaloneHood>
let sender: RpcSender
const roles: Array<RoleProcess> = []
const apis: Array<Engine> = []

const env = (): Record<string, string> => ({
  KAFKA_BROKERS: broker.brokers.join(","),
  KAFKA_IDEMPOTENT: "false",
  // A killed actors process's partitions move after this (the group's least).
  KAFKA_SESSION_TIMEOUT_MS: "6000",
  BUS_PARTITIONS: String(PARTITIONS),
  DATABASE_URL: postgres.url,
  WALLET_MASTER_KEY: KEY_BASE64,
  WEBHOOK_SECRET_KEY: KEY,
  LAUNCH_MINT_SECRET: KEY,
  ACTOR_SHARDS: "2",
  ...solanaEnv(solana.info),
  ...hoodEnv(hood.info)
})

interface WsClient {
  on(event: "message", listener: (data: Buffer) => void): void
  once(event: "open", listener: () => void): void
  once(event: "error", listener: (e: Error) => void): void
  close(): void
}
const WebSocket = createRequire(import.meta.url)("ws") as new (url: string, options: { headers: Record<string, string> }) => WsClient

const dataUrls = new Map<Engine, string>()
const startApi = async () => {
  const api = await startEngine({ args: ["--role", "api"], env: env(), readyTimeoutMs: 60_000 })
  dataUrls.set(api, api.dataUrl.replace("http://", "ws://"))
  return api
}

/** An account (Max unless named) made with the operator CLI on the shared database, and a production agent key issued through a replica. */
const agentKey = async (api: Engine, plan: "free" | "max" = "max"): Promise<string> => {
  const cli = async (...args: Array<string>) =>
    JSON.parse((await promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { cwd: projectRoot, env: { ...process.env, ...env() } })).stdout) as Record<string, string>
  const { accountId, sessionToken } = await cli("create-account", "--plan", plan)
  await cli("delegate", "--account", accountId!, "--chain", "solana")
  const { data, error, response } = await engineClient({ baseUrl: api.url, session: sessionToken! }).POST("/api/v1/agent/keys", { body: { label: "cluster" } })
  if (data === undefined) throw new Error(`issuing an agent key answered ${response.status} ${JSON.stringify(error)}`)
  return data.key
}

/** A signals stream client that keeps the ids it receives live (after the snapshot). */
const stream = async (api: Engine, key: string) => {
  const ws = new WebSocket(`${dataUrls.get(api)}/v1/signals/stream?quality=all`, { headers: { authorization: `Bearer ${key}` } })
  const live: Array<Signal> = []
  ws.on("message", (d) => {
    const m = JSON.parse(d.toString()) as { type: string; signal?: Signal }
    if (m.type === "signal" && m.signal !== undefined) live.push(m.signal)
  })
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve())
    ws.once("error", reject)
  })
  return { ws, live }
}

/** A replica's typed client (public reads: no key). */
const client = (api: Engine) => engineClient({ baseUrl: api.url })

/** The market record a replica answers, or undefined while it has none. */
const record = async (api: Engine, mint: string) => (await client(api).GET("/api/v1/markets/{chain}/{mint}", { params: { path: { chain: "solana", mint } } })).data?.market

/** The whole `new` feed and the delta since a few changes back, as a client reads them. */
const feed = async (api: Engine) => {
  const query = { bucket: "new", chain: "solana", limit: 50 } as const
  const whole = (await client(api).GET("/api/v1/markets/feed", { params: { query } })).data!
  const delta = (await client(api).GET("/api/v1/markets/feed", { params: { query: { ...query, since_seq: Math.max(0, whole.cursor - 3) } } })).data!
  return { whole, delta }
}

describe.skipIf(skip)(`the engine by role${skip ? ` (${noPostgres ? "no PostgreSQL server" : noKafkaReason})` : ""}`, () => {
  beforeAll(async () => {
    ;[broker, postgres, solana, hood] = await Promise.all([
      startKafkaBroker({ topics: TOPICS.map((name) => ({ name, partitions: PARTITIONS })) }),
      startPostgresServer(),
      startStandaloneSolana({ LOCALNET_SLOT_MS: "100" }),
      startStandaloneHood({ HOOD_LOCALNET_BLOCK_MS: "0" })
    ])
    sender = makeRpcSender(solana.info.rpcUrl, { blockhashTtlMs: 0 })
    // The ingest role first: it applies the migrations the others then find done.
    roles.push(await startRole("ingest", env()))
    const [a1, a2, api1, api2] = await Promise.all([startRole("actors", env()), startRole("actors", env()), startApi(), startApi()])
    roles.push(a1!, a2!)
    apis.push(api1!, api2!)
  }, 150_000)

  afterAll(async () => {
    await Promise.all([...apis.map((a) => a.stop("SIGKILL").then(() => a.cleanup())), ...roles.map((r) => r.stop("SIGKILL"))])
    solana?.stop()
    hood?.stop()
    await Promise.all([broker?.stop(), postgres?.stop()])
  }, 60_000)

  it("replicas agree, a killed actors process hands over, a fresh replica catches up, and every market equals the chain", async () => {
    const sol = findEconomics("solana", "sol")!
    const open = sol.tiers.find((t) => t.tier === "open")!
    const creator = await devSigner(1)
    const traders: Array<KeyPairSigner> = await Promise.all([2, 3, 4].map((i) => devSigner(i)))
    const mints = await Promise.all([0, 1, 2].map(() => generateKeyPairSigner()))
    for (const [i, mint] of mints.entries()) {
      await sender.send(creator, [
        await getCreateCurveInstruction({
          creator, mint, quoteMint: WSOL_MINT_ADDRESS, virtualQuoteRaw: open.virtualQuoteRaw, thresholdRaw: open.thresholdRaw,
          supplyRaw: sol.tokenSupplyRaw, stakerAllocationBps: 50, mode: "open", creatorFeeBps: 0, name: `Cluster ${i}`, symbol: `CL${i}`, uri: ""
        })
      ])
    }
    const landed = new Map<string, number>(mints.map((m) => [m.address, 0]))
    const trade = async (i: number) => {
      const mint = mints[i % mints.length]!.address
      const trader = traders[i % traders.length]!
      const ata = await findAssociatedTokenAddress(trader.address, mint)
      if (i % 7 === 6) {
        const balance = BigInt((await sender.rpc.getTokenAccountBalance(ata, { commitment: "processed" }).send()).value.amount)
        await sender.send(trader, [await getSellInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: balance / 3n, minAmountOutRaw: 0n })])
      } else {
        await sender.send(trader, [
          getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint, idempotent: true }),
          await getBuyInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: 50_000_000n + BigInt(i) * 3_333_333n, minAmountOutRaw: 0n })
        ])
      }
      landed.set(mint, landed.get(mint)! + 1)
    }
    /** Waits until both replicas count every landed trade of every market. */
    const allCounted = (replicas: ReadonlyArray<Engine>, what: string) =>
      eventually(
        async () => {
          for (const api of replicas) for (const [mint, n] of landed) if (((await record(api, mint))?.tradesTotal ?? -1) !== n) return false
          return true
        },
        { what, deadlineMs: 45_000, intervalMs: 100, detail: () => [...roles.map((r) => r.output()), ...replicas.map((a) => a.output())].map((o) => o.slice(-1500)).join("\n----\n") }
      )
    const sameAnswers = async (a: Engine, b: Engine) => {
      for (const mint of landed.keys()) expect(await record(b, mint), mint).toEqual(await record(a, mint))
      const [fa, fb] = [await feed(a), await feed(b)]
      expect(fa.whole.tokens.length).toBe(mints.length)
      expect(fb).toEqual(fa)
    }

    for (let i = 0; i < 12; i++) await trade(i)
    await allCounted(apis, "both replicas to count the first trades")
    await sameAnswers(apis[0]!, apis[1]!)

    // A signals stream on each replica; a whale buy moves the first market's price past +50%.
    const key = await agentKey(apis[0]!)
    const streams = await Promise.all(apis.map((api) => stream(api, key)))
    const whale = traders[0]!
    const whaleAta = await findAssociatedTokenAddress(whale.address, mints[0]!.address)
    await sender.send(whale, [
      getCreateAssociatedTokenInstruction({ payer: whale, ata: whaleAta, owner: whale.address, mint: mints[0]!.address, idempotent: true }),
      await getBuyInstruction({ trader: whale, mint: mints[0]!.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: 20_000_000_000n, minAmountOutRaw: 0n })
    ])
    landed.set(mints[0]!.address, landed.get(mints[0]!.address)! + 1)
    await allCounted(apis, "both replicas to count the whale buy")
    await eventually(() => streams.every((s) => s.live.some((x) => x.pattern === "large_move" && x.asset === mints[0]!.address)), {
      what: "a large_move on both replicas' streams",
      deadlineMs: 20_000,
      intervalMs: 50,
      detail: () => JSON.stringify(streams.map((s) => s.live.map((x) => `${x.pattern}:${x.asset}`)))
    })
    // Every signal once on each stream, the same on both, and each one the tape holds.
    const tape = (await dataClient({ baseUrl: dataUrls.get(apis[0]!)!.replace("ws", "http"), apiKey: key }).GET("/v1/signals", { params: { query: { limit: 100, quality: "all" } } })).data!
    if (!("signals" in tape)) throw new Error(`the tape answered tokens grouped, not signals: ${JSON.stringify(tape)}`)
    const ids = streams.map((s) => s.live.map((x) => x.id))
    expect(new Set(ids[0]).size).toBe(ids[0]!.length)
    expect([...ids[1]!].sort()).toEqual([...ids[0]!].sort())
    for (const id of ids[0]!) expect(tape.signals.map((x) => x.id)).toContain(id)
    for (const s of streams) s.ws.close()

    // Kill an actors process while trades land: its partitions move to the other.
    const inFlight = (async () => {
      for (let i = 12; i < 30; i++) await trade(i)
    })()
    await new Promise((r) => setTimeout(r, 300))
    const killed = roles.splice(1, 1)[0]!
    expect((await killed.stop("SIGKILL")).signal).toBe("SIGKILL")
    await inFlight
    for (let i = 30; i < 36; i++) await trade(i)
    await allCounted(apis, "both replicas to count every trade after the handover")
    await sameAnswers(apis[0]!, apis[1]!)

    // Kill a replica; a fresh one catches up and answers the same.
    const gone = apis.pop()!
    await gone.stop("SIGKILL")
    gone.cleanup()
    const fresh = await startApi()
    apis.push(fresh)
    expect((await client(fresh).GET("/readyz")).data).toMatchObject({ ready: true, checks: { readModel: "ok", bus: "ok" } })
    await sameAnswers(apis[0]!, fresh)

    // Every market where the chain is: trades once each, reserves equal to the curve account's.
    for (const mint of mints) {
      const curveAccount = await sender.rpc.getAccountInfo((await findCurveAddresses(mint.address)).curve, { encoding: "base64", commitment: "confirmed" }).send()
      const curve = decodeCurve(Buffer.from(curveAccount.value!.data[0], "base64"))!
      for (const api of apis) {
        const r = await record(api, mint.address)
        expect(r?.tradesTotal).toBe(Number(curve.buyCount + curve.sellCount))
        expect(r?.tradesTotal).toBe(landed.get(mint.address))
        expect(r?.migration.reserveRaw).toBe(curve.realQuoteRaw.toString())
      }
    }
  }, 240_000)

  it("a key's rate limit holds across the two API replicas (to within the shared counts' sync)", async () => {
    // Free: 30 requests a minute per key. Sixty requests alternate between the replicas, 100 ms
    // apart: counted per process (before), each replica would admit 30 of them.
    const key = await agentKey(apis[0]!, "free")
    const statuses: Array<number> = []
    for (let i = 0; i < 60; i++) {
      const api = apis[i % 2]!
      statuses.push((await engineClient({ baseUrl: api.url, apiKey: key }).GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId: "none" } } })).response.status)
      await new Promise((r) => setTimeout(r, 100))
    }
    const admitted = statuses.filter((s) => s !== 429).length
    console.info(`a free key across two replicas: ${admitted} of 60 admitted (limit 30)`)
    // Every admitted request got the route's own answer (the key authenticated; no job of that id).
    expect([...new Set(statuses.filter((s) => s !== 429))]).toHaveLength(1)
    expect(statuses).not.toContain(401)
    // The tolerance: what the other replica admits between two of its 250 ms syncs (plus a round
    // trip, slower on a loaded machine): a few requests, never the 60 of per-process counting.
    expect(admitted).toBeGreaterThanOrEqual(30)
    expect(admitted).toBeLessThanOrEqual(35)
  }, 60_000)
})

describe("a cluster role without what it needs", () => {
  it("refuses to start, naming the variables", async () => {
    // The refusal comes after the engine's modules load, which on a loaded machine alone took over 30 s.
    const error = await startRole("actors", { KAFKA_BROKERS: "", DATABASE_URL: "" }, 55_000).then(
      (r) => {
        void r.stop("SIGKILL")
        return undefined
      },
      (e: unknown) => String(e)
    )
    expect(error).toContain("role 'actors' runs beside the other roles on Kafka, a PostgreSQL server and configured chain nodes: set KAFKA_BROKERS, DATABASE_URL, SOLANA_RPC_URL, HOOD_RPC_URL")
  }, 60_000)
})
