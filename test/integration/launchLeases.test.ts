/**
 * In-flight headless launches across several engine processes (issue 14): two `HeadlessLaunch`
 * instances, each with its own ledger, Solana side, wallet provider and row leases, over one
 * database (embedded PGlite; a real PostgreSQL server with a connection pool each), against the
 * Solana localnet over its RPC. Every accepted attempt here was left by a process that is gone
 * (its rows written as `begin` writes them, with or without that process's lease).
 *
 * What is pinned: two instances racing to resume the same rows drive each once (one chain run
 * between them) and the chain sees one transaction per launch; a row a live run drives (its lease
 * renewed past its length) is skipped by the other instance's resumes, which send nothing; a row
 * whose owner died is skipped while its lease is live and taken over by the other instance's next
 * resume (the periodic sweep) once it ends, with no restart, and confirmed once; on the server, an
 * owner that lost its database mid-confirmation leaves its lease to end and the other instance
 * recovers the sent transaction from the chain without sending another; a dev buy's hold taken
 * in the accepting transaction is released when the launch then fails (the spend gate's window is
 * back where it was).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { address } from "@solana/kit"
import { Context, Effect, Either, Exit, Layer, Redacted, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentLaunches } from "../../actors/AgentLaunches.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import type { TransactionUpdate } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import { makeRowLeases, type RowLeases } from "../../src/db/RowLease.js"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import type { ImageServiceShape } from "../../src/services/images/ImageService.js"
import * as HeadlessLaunch from "../../src/services/launch/HeadlessLaunch.js"
import type { HoodHeadlessLaunchShape } from "../../src/services/launch/HoodHeadlessLaunch.js"
import * as LaunchLedger from "../../src/services/launch/LaunchLedger.js"
import { canonicalBody } from "../../src/services/launch/request/CanonicalBody.js"
import { decodeLaunchRequest } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import type { LaunchRequest } from "../../src/services/launch/request/LaunchRequest.js"
import * as SolanaLaunch from "../../src/services/launch/SolanaLaunch.js"
import { fixedPriceSource, LOCALNET_USD_PRICES_DEFAULT } from "../../src/services/prices/PriceSource.js"
import { devBuyAttempt, devBuyReservationId } from "../../src/services/launch/internal/LaunchSpend.js"
import { reservationState, reserveIn, windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"
import { encodeStoredRequest } from "../../src/services/launch/StoredRequest.js"
import * as MasterKey from "../../src/services/wallets/MasterKey.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import * as WalletProvider from "../../src/services/wallets/WalletProvider.js"
import { consistently, eventually } from "../support/eventually.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { launchFailureCode, launchFailureCodesLayer } from "../../api/LaunchCodes.js"

const SOL = 1_000_000_000n
/**
 * The instances' lease: short enough that the tests wait past it, long enough that a loaded
 * machine's stalled event loop (the full suite beside other work) does not let it lapse while a
 * run is alive (it did at 600 ms: the other instance then took a live row over, as designed).
 */
const LEASE_MS = 2_000
const MINT_SECRET = Redacted.make(new Uint8Array(32).fill(5))
const MAX = planById(resolvePlans({}, 0), "max")
const ACCOUNT = "acct-leases"
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

interface Instance {
  readonly service: HeadlessLaunch.HeadlessLaunchShape
  readonly leases: RowLeases
  readonly ledger: LaunchLedger.LaunchLedgerShape
}

const leasesSuite = (options: () => Database.DatabaseOptions, pools: 1 | 2) => {
  let scope: Scope.CloseableScope
  let net: SolanaLocalnetShape
  let producer: ReturnType<typeof setInterval>
  const producing = { on: true }
  let sqlA: SqlClient.SqlClient
  let a: Instance
  let b: Instance
  let payer = ""
  let providerContext: Context.Context<SqlClient.SqlClient | WalletProvider.WalletProvider>
  const prices = fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT)
  /** Chain runs started per clientLaunchId, by either instance. */
  const drives = new Map<string, number>()
  /** Landed transactions per account key (the launch's mint among them). */
  const landed: Array<TransactionUpdate> = []
  let ids = 0

  const database = (s: Scope.Scope, migrate: boolean) => {
    const db = Database.layer(options())
    const masterKey = MasterKey.layer({ masterKey: Redacted.make(Buffer.alloc(32, 4).toString("base64")), dataDir: undefined })
    const base = migrate ? Layer.effectDiscard(Database.runMigrations(migrations)).pipe(Layer.provideMerge(db)) : db
    return run(Layer.buildWithScope(WalletProvider.layerLocal({}).pipe(Layer.provideMerge(Layer.merge(masterKey, base))), s))
  }

  /** One engine process's launch service over `sql` (its own scope: background runs live in it). */
  const instance = (context: Context.Context<SqlClient.SqlClient | WalletProvider.WalletProvider>, s: Scope.Scope, leaseMs: number) =>
    run(
      Effect.gen(function* () {
        const sql = Context.get(context, SqlClient.SqlClient)
        const provider = Context.get(context, WalletProvider.WalletProvider)
        const ledger = yield* LaunchLedger.make.pipe(Effect.provide(launchFailureCodesLayer))
        const solana = yield* SolanaLaunch.make({ rpcUrl: net.rpcUrl, mintSecret: MINT_SECRET, treasury: TREASURY_ADDRESS, pollIntervalMs: 20 }).pipe(
          Effect.provideService(WalletProvider.WalletProvider, provider)
        )
        const counted: SolanaLaunch.SolanaLaunchShape = {
          ...solana,
          launch: (input, beforeSend) => Effect.zipRight(Effect.sync(() => drives.set(input.request.clientLaunchId, (drives.get(input.request.clientLaunchId) ?? 0) + 1)), solana.launch(input, beforeSend)),
          recover: (input) => Effect.zipRight(Effect.sync(() => drives.set(input.request.clientLaunchId, (drives.get(input.request.clientLaunchId) ?? 0) + 1)), solana.recover(input))
        }
        const leases = makeRowLeases(sql, { leaseMs })
        const service = yield* HeadlessLaunch.make(
          { baseUrl: "http://curvestream.test", solanaExplorerUrl: "https://explorer.test", exclusiveHolderPassRaw: 0n, recoveryPollMs: 50 },
          {
            ledger,
            // A resume reads no image and runs no Hood launch: neither is reached here.
            images: {} as ImageServiceShape,
            solana: counted,
            hood: {} as HoodHeadlessLaunchShape,
            provider,
            holdings: () => Effect.succeed(undefined),
            agentLaunches: new AgentLaunches(),
            prices: fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT),
            leases
          }
        )
        return { service, leases, ledger }
      }).pipe(Effect.provide(context), Scope.extend(s))
    )

  const request = (): LaunchRequest => {
    const decoded = decodeLaunchRequest(
      { clientLaunchId: `lease-${pools}-${++ids}`, name: "Lease Test", symbol: "LEAS", imageUrl: "https://example.com/i.png", buyAmount: "10000000" },
      { keyEnvironment: "production" },
      { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: null }
    )
    if (Either.isLeft(decoded)) throw new Error(`request refused: ${decoded.left.message}`)
    return decoded.right
  }

  /**
   * An attempt accepted by a process that is gone, written as `begin` writes it (the ledger row,
   * its inputs, and the accepting process's lease when `owner` is given).
   */
  const acceptedByGone = (owner?: RowLeases) => {
    const r = request()
    return run(
      a.ledger
        .begin(
          {
            accountId: ACCOUNT,
            clientLaunchId: r.clientLaunchId,
            keyId: "kid-leases",
            path: "headless",
            chain: "solana",
            payer: "embedded",
            canonicalBody: canonicalBody(r),
            dailyCap: { keyDailyCap: 1_000, plan: MAX }
          },
          (record) =>
            Effect.gen(function* () {
              const s = yield* SqlClient.SqlClient
              const resolved = { keyId: "kid-leases", payer, metadataUri: "https://curvestream.test/m.json", platformFeeBps: "100", principal: {} as Principal }
              yield* s`
                INSERT INTO headless_launch_attempts (account_id, client_launch_id, attempt, request, resolved, created_at)
                VALUES (${ACCOUNT}, ${r.clientLaunchId}, ${record.attempt}, ${JSON.stringify(encodeStoredRequest(r))}::jsonb, ${JSON.stringify(resolved)}::jsonb, now())`
              if (owner !== undefined) yield* owner.claimIn(HeadlessLaunch.LAUNCH_LEASE_KIND, HeadlessLaunch.launchLeaseKey(record))
            })
        )
        .pipe(Effect.as(r.clientLaunchId))
    )
  }

  const confirmed = (clientLaunchId: string) =>
    eventually(
      async () => {
        const row = await run(a.ledger.get({ accountId: ACCOUNT, clientLaunchId }))
        return row?.state === "confirmed" ? row : undefined
      },
      { what: `launch ${clientLaunchId} to be confirmed`, intervalMs: 50, deadlineMs: 60_000 }
    )

  /** Waits until the attempt's transaction was recorded and sent (`confirming`). */
  const sent = (clientLaunchId: string) =>
    eventually(async () => ((await run(a.ledger.get({ accountId: ACCOUNT, clientLaunchId })))?.state === "confirming" ? true : undefined), {
      what: `launch ${clientLaunchId} to be sent`,
      intervalMs: 20
    })

  /** Landed transactions that touch the launch's mint: the create, and nothing else here. */
  const onChain = (mint: string) => landed.filter((t) => t.accountKeys.includes(address(mint)))

  beforeAll(async () => {
    scope = await run(Scope.make())
    net = Context.get(await run(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true }), scope)), SolanaLocalnet)
    producer = setInterval(() => {
      if (producing.on) net.ledger.advanceSlot()
    }, 20)
    net.ledger.subscribe((u) => {
      if (u.kind === "transaction") landed.push(u)
    })
    const contextA = await database(scope, true)
    const contextB = pools === 2 ? await database(scope, false) : contextA
    sqlA = Context.get(contextA, SqlClient.SqlClient)
    providerContext = contextA
    // The launching key: its usage is counted when a launch confirms.
    await run(sqlA`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'LEASES')`)
    await run(sqlA`
      INSERT INTO agent_keys (id, prefix, account_id, key_hash, environment, scopes, rate_limit_per_min, daily_launch_cap, launch_chains, embedded_wallet)
      VALUES ('kid-leases', 'leasesaa', ${ACCOUNT}, 'hash', 'production', '["launch"]'::jsonb, 60, 1000, '["solana"]'::jsonb, 'allowed')`)
    a = await instance(contextA, scope, LEASE_MS)
    b = await instance(contextB, scope, LEASE_MS)
    const provider = Context.get(contextA, WalletProvider.WalletProvider)
    payer = (await run(provider.ensureEmbeddedWallet(ACCOUNT, "solana"))).address
    await run(provider.setDelegation(ACCOUNT, "solana", "active"))
    expect(net.ledger.requestAirdrop(address(payer), 100n * SOL)).toMatchObject({ _tag: "Landed", err: null })
  }, 60_000)

  afterAll(async () => {
    clearInterval(producer)
    await run(Scope.close(scope, Exit.void))
  })

  it("two instances racing to resume the same rows drive each once; the chain sees one transaction per launch", async () => {
    const gone = makeRowLeases(sqlA, { leaseMs: 1 })
    // Three rows with no lease (left before leases, or never given one) and three whose owner's lease already ended.
    const ids = [...(await Promise.all([0, 1, 2].map(() => acceptedByGone()))), ...(await Promise.all([0, 1, 2].map(() => acceptedByGone(gone))))]
    const [byA, byB] = await run(Effect.all([a.service.resumeInFlight, b.service.resumeInFlight], { concurrency: "unbounded" }))
    expect(byA + byB).toBe(ids.length)
    for (const id of ids) {
      const row = await confirmed(id)
      expect(drives.get(id)).toBe(1)
      expect(onChain(row.mint!).map((t) => t.err)).toEqual([null])
    }
    // Settled rows hold no lease and are not resumed again.
    expect(await run(Effect.all([a.service.resumeInFlight, b.service.resumeInFlight]))).toEqual([0, 0])
    expect(await run(sqlA`SELECT key FROM row_leases WHERE kind = 'launch'`)).toEqual([])
  }, 90_000)

  it("a row a live run drives is skipped by the other instance's resumes, past the lease's length; it is confirmed once", async () => {
    producing.on = false
    const id = await acceptedByGone()
    expect(await run(a.service.resumeInFlight)).toBe(1)
    // A's run is sending and waiting for a confirmation that cannot come (no slot closes).
    await sent(id)
    // Over three lease lengths: only renewals keep it.
    await consistently(async () => expect(await run(b.service.resumeInFlight)).toBe(0), { what: "B's resumes skip the row A drives", forMs: 3 * LEASE_MS + 500, intervalMs: 100 })
    producing.on = true
    const row = await confirmed(id)
    expect(drives.get(id)).toBe(1)
    expect(onChain(row.mint!).map((t) => t.err)).toEqual([null])
  }, 60_000)

  it("a row whose owner died is skipped while its lease lives and taken over by the next resume once it ends, with no restart", async () => {
    const dead = makeRowLeases(sqlA, { leaseMs: 1_500 })
    const id = await acceptedByGone(dead)
    expect(await run(b.service.resumeInFlight)).toBe(0)
    expect(drives.get(id)).toBeUndefined()
    // The periodic sweep: B's resume, repeated, takes the row once the dead owner's lease ended.
    await eventually(async () => ((await run(b.service.resumeInFlight)) === 1 ? true : undefined), { what: "the dead owner's lease to end", intervalMs: 100, deadlineMs: 10_000 })
    const row = await confirmed(id)
    expect(drives.get(id)).toBe(1)
    expect(onChain(row.mint!).map((t) => t.err)).toEqual([null])
    expect(await run(dead.renew(HeadlessLaunch.LAUNCH_LEASE_KIND, HeadlessLaunch.launchLeaseKey({ accountId: ACCOUNT, clientLaunchId: id })))).toBe(false)
  }, 60_000)

  it("a dev buy's hold, taken in the accepting transaction, is released when the launch fails after it (the wallet cannot pay)", async () => {
    // An account whose embedded wallet holds less than the launch costs: the chain side refuses it, definitively, before sending.
    const poor = `acct-poor-${pools}`
    const prefix = `poor${pools}aaa`
    const keyId = `kid-poor-${pools}`
    await run(sqlA`INSERT INTO accounts (id, plan, referral_code) VALUES (${poor}, 'max', ${`POOR${pools}`})`)
    await run(sqlA`
      INSERT INTO agent_keys (id, prefix, account_id, key_hash, environment, scopes, rate_limit_per_min, daily_launch_cap, launch_chains, embedded_wallet)
      VALUES (${keyId}, ${prefix}, ${poor}, 'hash-poor', 'production', '["launch"]'::jsonb, 60, 1000, '["solana"]'::jsonb, 'allowed')`)
    const wallet = (await run(Effect.provide(Effect.flatMap(WalletProvider.WalletProvider, (p) => p.ensureEmbeddedWallet(poor, "solana")), providerContext))).address
    await run(Effect.provide(Effect.flatMap(WalletProvider.WalletProvider, (p) => p.setDelegation(poor, "solana", "active")), providerContext))
    expect(net.ledger.requestAirdrop(address(wallet), 1_000_000n)).toMatchObject({ _tag: "Landed", err: null })
    const r = request()
    const spend = await run(devBuyAttempt(prices, "main", r, MAX.feeBps))
    if (spend === undefined) throw new Error("the request has a dev buy")
    let holdId = ""
    // Accepted as `launch` accepts it: the ledger row, the attempt's inputs and the dev buy's hold, in one transaction.
    await run(
      a.ledger.begin(
        {
          accountId: poor,
          clientLaunchId: r.clientLaunchId,
          keyId,
          path: "headless",
          chain: "solana",
          payer: "embedded",
          canonicalBody: canonicalBody(r),
          dailyCap: { keyDailyCap: 1_000, plan: MAX }
        },
        (record) =>
          Effect.gen(function* () {
            const ref = { accountId: poor, clientLaunchId: r.clientLaunchId, attempt: record.attempt }
            holdId = devBuyReservationId("headless", ref)
            yield* reserveIn({ reservationId: holdId, accountId: poor, keyPrefix: prefix, chain: "solana", attempt: spend })
            const s = yield* SqlClient.SqlClient
            const resolved = { keyId, payer: wallet, metadataUri: "https://curvestream.test/m.json", platformFeeBps: String(MAX.feeBps), principal: {} as Principal }
            yield* s`
              INSERT INTO headless_launch_attempts (account_id, client_launch_id, attempt, request, resolved, created_at)
              VALUES (${poor}, ${r.clientLaunchId}, ${record.attempt}, ${JSON.stringify(encodeStoredRequest(r))}::jsonb, ${JSON.stringify(resolved)}::jsonb, now())`
          })
      )
    )
    expect(await run(reservationState(holdId).pipe(Effect.provideService(SqlClient.SqlClient, sqlA)))).toBe("held")
    const window = () => run(windowUsedUsdMicros(keyId, "daily", Date.now()).pipe(Effect.provideService(SqlClient.SqlClient, sqlA)))
    expect(await window()).toBe(spend.usdMicros)
    expect(await run(a.service.resumeInFlight)).toBe(1)
    const failed = await eventually(
      async () => {
        const row = await run(a.ledger.get({ accountId: poor, clientLaunchId: r.clientLaunchId }))
        return row?.state === "failed" ? row : undefined
      },
      { what: "the poor launch to fail", intervalMs: 50, deadlineMs: 60_000 }
    )
    expect(launchFailureCode(failed.errorCode ?? "")).toBe("INSUFFICIENT_OWNER_BALANCE")
    expect(await run(reservationState(holdId).pipe(Effect.provideService(SqlClient.SqlClient, sqlA)))).toBe("released")
    expect(await window()).toBe(0n)
  }, 60_000)

  it.skipIf(pools === 1)("an owner that lost its database mid-confirmation: the other instance recovers the sent transaction once its lease ends, sending nothing", async () => {
    // A third process with its own pool, closed under it once its launch is sent.
    const doomedDb = await run(Scope.make())
    const doomedRuns = await run(Scope.make())
    const doomed = await instance(await database(doomedDb, false), doomedRuns, LEASE_MS)
    producing.on = false
    const id = await acceptedByGone()
    expect(await run(doomed.service.resumeInFlight)).toBe(1)
    await sent(id)
    // Its connections are gone: no renewal, no release, no write. Its run may go on reading the chain.
    await run(Scope.close(doomedDb, Exit.void))
    expect(await run(b.service.resumeInFlight)).toBe(0)
    producing.on = true
    await eventually(async () => ((await run(b.service.resumeInFlight)) === 1 ? true : undefined), { what: "the lost owner's lease to end", intervalMs: 100, deadlineMs: 10_000 })
    const row = await confirmed(id)
    // The doomed process's launch and B's recovery: one send between them.
    expect(drives.get(id)).toBe(2)
    expect(onChain(row.mint!).map((t) => t.err)).toEqual([null])
    await run(Scope.close(doomedRuns, Exit.void))
  }, 60_000)
}

describe("in-flight launches on embedded PGlite, two instances", () => {
  leasesSuite(() => ({ url: undefined, dataDir: undefined }), 1)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`in-flight launches on a real PostgreSQL server, two pools${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  leasesSuite(() => ({ url: dbUrl, dataDir: undefined }), 2)
})
