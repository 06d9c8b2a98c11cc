/**
 * Which chain the engine follows. Everything the engine derives from a chain (markets, feeds,
 * checkpoints, cursors, ClickHouse history, signals) is only true of that chain, so the engine
 * records each chain's identity beside its cursors (`meta`, key `chain_identity:<chain>`) and
 * checks it at every start, before any ingester, actor or writer runs:
 *
 * - Solana: the genesis hash (`getGenesisHash`); Hood: the chain id and block 0's hash. The
 *   embedded localnets draw a new genesis for every new chain (`LedgerStore.ts`, `HoodStore.ts`).
 * - Same identity: nothing to do. No identity recorded and nothing derived yet: record it.
 * - Another chain (or derived state from before identities were recorded, in embedded mode, whose
 *   localnet could not survive a restart then): in embedded mode, or when `RESET_CHAIN_STATE`
 *   names the chain, every derived row of that chain is deleted (`rebuild`) and the new identity
 *   recorded, in one PostgreSQL transaction, and one log line says so; the rows of the other
 *   chain are untouched. Against a configured node without the flag the engine refuses to start
 *   (`ChainIdentityError` `mismatch`, naming the flag), so it never serves another chain's state.
 *
 * The replaced chain's events a crash left uncommitted on `chain.events` are retired too: the
 * bus's end offsets at the rebuild are recorded (`meta`, `chain_retired:<chain>`) and loaded into
 * the `RetiredRanges` every consumer subscribes through, so none of them is applied again.
 *
 * The pure decision is `decideIdentity`; the rest reads the node and runs the deletes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Layer, Schedule, Schema } from "effect"
import { ClickHouse } from "../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../clickhouse/ClickHouseError.js"
import { Bus, type BusError, Topics } from "../../../ingest/bus/Bus.js"
import type { RetiredRanges } from "../../../ingest/bus/RetiredRanges.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { HoodEndpoints } from "../../chain/hood/HoodEndpoints.js"
import { InvalidRpcUrl, MalformedCredentials, redactUrlCredentials } from "../../chain/internal/JsonRpcHttp.js"
import { postJsonRpc } from "../../chain/JsonRpcPost.js"
import { SolanaEndpoints } from "../../chain/solana/SolanaEndpoints.js"
import { failureFields } from "../../domain/ServiceFailure.js"

/** The environment variable that lets the engine rebuild a chain's derived state when its node follows another chain. */
export const RESET_CHAIN_STATE_ENV = "RESET_CHAIN_STATE"

export type IdentityDecision =
  | { readonly _tag: "Same" }
  /** First start on this chain: nothing derived yet, record the identity. */
  | { readonly _tag: "Record" }
  /** A configured node's derived state from before identities were recorded: trusted, identity recorded. */
  | { readonly _tag: "Adopt" }
  | { readonly _tag: "Rebuild" }
  | { readonly _tag: "Refuse" }

export interface IdentityFacts {
  /** What the engine recorded (undefined: nothing recorded). */
  readonly recorded: string | undefined
  /** What the node says now. */
  readonly observed: string
  /** Whether any row derived from this chain exists (a cursor, a checkpoint). */
  readonly derivedState: boolean
  readonly embedded: boolean
  /** `RESET_CHAIN_STATE` names this chain. */
  readonly resetAllowed: boolean
}

export const decideIdentity = (f: IdentityFacts): IdentityDecision => {
  if (f.recorded === f.observed) return { _tag: "Same" }
  if (f.recorded === undefined) {
    if (!f.derivedState) return { _tag: "Record" }
    return f.embedded || f.resetAllowed ? { _tag: "Rebuild" } : { _tag: "Adopt" }
  }
  return f.embedded || f.resetAllowed ? { _tag: "Rebuild" } : { _tag: "Refuse" }
}

export class ChainIdentityError extends Schema.TaggedError<ChainIdentityError>()("ChainIdentityError", {
  /** `misconfigured`: the node's URL cannot be used at all (it does not parse, or its user:password does not decode); never retried. */
  reason: Schema.Literal("mismatch", "unreachable", "storage", "misconfigured"),
  ...failureFields
}) {}

const chainName: Record<ChainId, string> = { solana: "Solana", hood: "Hood" }

const rpc = async (url: string, method: string, params: ReadonlyArray<unknown> = []): Promise<unknown> => {
  const res = await postJsonRpc(url, method, params, 5_000)
  const body = res.json() as { result?: unknown; error?: { message?: string } }
  if (body.error !== undefined || body.result === undefined || body.result === null) {
    throw new Error(`${method}: ${body.error?.message ?? `no result (HTTP ${res.status})`}`)
  }
  return body.result
}

/** The node's identity: `genesis:<hash>` on Solana, `<chain id>:<block 0 hash>` on Hood. */
export const observeIdentity = (chain: ChainId, rpcUrl: string): Effect.Effect<string, ChainIdentityError> =>
  Effect.tryPromise({
    try: async () => {
      if (chain === "solana") return `genesis:${String(await rpc(rpcUrl, "getGenesisHash"))}`
      const chainId = BigInt(String(await rpc(rpcUrl, "eth_chainId")))
      const block0 = (await rpc(rpcUrl, "eth_getBlockByNumber", ["0x0", false])) as { hash?: string }
      return `${chainId}:${String(block0.hash)}`
    },
    catch: (e) => {
      const misconfigured = e instanceof MalformedCredentials || e instanceof InvalidRpcUrl
      return new ChainIdentityError({
        reason: misconfigured ? "misconfigured" : "unreachable",
        message: `cannot read the ${chainName[chain]} node's identity at ${redactUrlCredentials(rpcUrl)}: ${e instanceof Error ? e.message : String(e)}`,
        retryable: !misconfigured
      })
    }
  }).pipe(
    // A configured node may still be coming up: about 20 s of retries before the start fails (a URL that cannot be used fails at once).
    Effect.retry({
      schedule: Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("3 seconds"))),
      times: 10,
      while: (e) => e.retryable === true
    })
  )

const metaKey = (chain: ChainId) => `chain_identity:${chain}`
const retiredKey = (chain: ChainId) => `chain_retired:${chain}`
/** Keys of a chain's rows in `ingest_cursors` (`solana:yellowstone:…`, `hood:logs:…`) and `checkpoints` (`<chain>:<mint>`, `<chain>`). */
const prefix = (chain: ChainId) => `${chain}:%`

export const readRecordedIdentity = (chain: ChainId): Effect.Effect<string | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ identity: string }>`SELECT value->>'identity' AS identity FROM meta WHERE key = ${metaKey(chain)}`,
      (rows) => rows[0]?.identity ?? undefined
    )
  )

const hasDerivedState = (chain: ChainId): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`
        SELECT (SELECT count(*) FROM ingest_cursors WHERE source LIKE ${prefix(chain)})
             + (SELECT count(*) FROM checkpoints WHERE key = ${chain} OR key LIKE ${prefix(chain)}) AS n`,
      (rows) => Number(rows[0]?.n ?? 0) > 0
    )
  )

const recordIdentity = (chain: ChainId, identity: string) =>
  Effect.flatMap(Effect.all([SqlClient.SqlClient, Clock.currentTimeMillis]), ([sql, nowMs]) => {
    const value = { identity, recordedAt: new Date(nowMs).toISOString() }
    return sql`
      INSERT INTO meta (key, value) VALUES (${metaKey(chain)}, ${JSON.stringify(value)}::jsonb)
      ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`
  })

/** ClickHouse tables holding one chain's history, each with a `chain` column. */
export const CHAIN_HISTORY_TABLES = ["trades", "candles_1m", "candles_1m_dirty", "market_snapshots", "signals"] as const

export interface RebuildCounts {
  readonly markets: number
  readonly checkpoints: number
  readonly personalSignals: number
}

/**
 * Deletes what the engine derived from `chain`: ClickHouse history first (so a crash between the
 * two leaves the identity unrecorded and the next start deletes again), then in one PostgreSQL
 * transaction the actors' and detectors' checkpoints (markets, feeds and signals are rebuilt from
 * them and the bus), the ingester's cursor, block window and pools, the personal signals matched
 * from its signals, and records `identity`.
 */
export const rebuildDerivedState = (
  chain: ChainId,
  identity: string
): Effect.Effect<RebuildCounts, SqlError | ClickHouseError | BusError, SqlClient.SqlClient | ClickHouse | Bus> =>
  Effect.gen(function* () {
    const ch = yield* ClickHouse
    // Everything on the bus now is the replaced chain's (the ingesters have not started).
    const end = yield* (yield* Bus).endOffsets(Topics.chainEvents)
    for (const table of CHAIN_HISTORY_TABLES) {
      yield* ch.command(`ALTER TABLE ${table} DELETE WHERE chain = {chain:String} SETTINGS mutations_sync = 2`, { chain })
    }
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        const markets = yield* sql<{ n: number }>`SELECT count(*) AS n FROM checkpoints WHERE owner = 'market' AND key LIKE ${prefix(chain)}`
        const checkpoints = yield* sql<{ key: string }>`DELETE FROM checkpoints WHERE key = ${chain} OR key LIKE ${prefix(chain)} RETURNING key`
        yield* sql`DELETE FROM ingest_cursors WHERE source LIKE ${prefix(chain)}`
        if (chain === "hood") {
          yield* sql`DELETE FROM hood_ingest_blocks WHERE source LIKE ${prefix(chain)}`
          yield* sql`DELETE FROM hood_pools WHERE source LIKE ${prefix(chain)}`
          // Staking rewards split from the replaced chain's graduations (their tokens are gone with it).
          yield* sql`DELETE FROM hood_rewards WHERE source LIKE ${prefix(chain)}`
          yield* sql`DELETE FROM hood_reward_distributions WHERE source LIKE ${prefix(chain)}`
        }
        const personal = yield* sql<{ seq: string }>`DELETE FROM md_personal_signals WHERE signal->>'chain' = ${chain} RETURNING seq`
        const before = yield* readRetired(chain)
        const below: Record<string, number> = {}
        for (const [p, o] of end) below[p] = Math.max(o, before.get(p) ?? 0)
        yield* sql`
          INSERT INTO meta (key, value) VALUES (${retiredKey(chain)}, ${JSON.stringify({ below })}::jsonb)
          ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`
        yield* recordIdentity(chain, identity)
        return { markets: Number(markets[0]?.n ?? 0), checkpoints: checkpoints.length, personalSignals: personal.length }
      })
    )
  })

/** partition → the first offset of `chain.events` that is not retired for `chain`. */
const readRetired = (chain: ChainId): Effect.Effect<ReadonlyMap<number, number>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ below: string }>`SELECT (value->'below')::text AS below FROM meta WHERE key = ${retiredKey(chain)}`, (rows) => {
      const below = rows[0] === undefined ? {} : (JSON.parse(rows[0].below) as Record<string, number>)
      return new Map(Object.entries(below).map(([p, o]) => [Number(p), o] as const))
    })
  )

/** Loads the recorded retired ranges of both chains into `retired`. */
export const loadRetiredRanges = (retired: RetiredRanges): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.forEach(
    ["solana", "hood"] as const,
    (chain) =>
      Effect.map(readRetired(chain), (below) => {
        if (below.size > 0) retired.add({ topic: Topics.chainEvents, keyPrefix: `${chain}:`, below })
      }),
    { discard: true }
  )

export interface ChainToCheck {
  readonly chain: ChainId
  readonly rpcUrl: string
  readonly embedded: boolean
}

const storage = (e: SqlError | ClickHouseError | BusError) =>
  new ChainIdentityError({ reason: "storage", message: `chain identity: ${e.message}`, retryable: true })

/**
 * Checks one chain's identity and acts on it (see the module comment). Runs before the chain's
 * ingester and before any consumer of `chain.events` loads its checkpoints.
 */
export const checkChainIdentity = (
  c: ChainToCheck,
  resetChains: ReadonlyArray<ChainId>
): Effect.Effect<IdentityDecision, ChainIdentityError, SqlClient.SqlClient | ClickHouse | Bus> =>
  Effect.gen(function* () {
    const observed = yield* observeIdentity(c.chain, c.rpcUrl)
    const recorded = yield* readRecordedIdentity(c.chain).pipe(Effect.mapError(storage))
    const derivedState = recorded === undefined ? yield* hasDerivedState(c.chain).pipe(Effect.mapError(storage)) : true
    const decision = decideIdentity({ recorded, observed, derivedState, embedded: c.embedded, resetAllowed: resetChains.includes(c.chain) })
    const name = chainName[c.chain]
    switch (decision._tag) {
      case "Same":
        break
      case "Record":
      case "Adopt":
        yield* recordIdentity(c.chain, observed).pipe(Effect.mapError(storage))
        if (decision._tag === "Adopt") {
          yield* Effect.logWarning(`${name}: derived state from before chain identities were recorded; trusting the configured node, identity ${observed} recorded`)
        }
        break
      case "Rebuild": {
        const counts = yield* rebuildDerivedState(c.chain, observed).pipe(Effect.mapError(storage))
        yield* Effect.logWarning(
          `${name} chain reset: the node follows another chain than the engine's state was built from; ` +
            `rebuilt ${name}'s derived state from the new chain (${counts.markets} markets, ${counts.checkpoints} checkpoints, ` +
            `the cursor, ClickHouse history and ${counts.personalSignals} personal signals removed)`
        ).pipe(Effect.annotateLogs({ chain: c.chain, recorded: recorded ?? "none", observed, embedded: c.embedded }))
        break
      }
      case "Refuse":
        return yield* new ChainIdentityError({
          reason: "mismatch",
          message:
            `the ${name} node at ${redactUrlCredentials(c.rpcUrl)} follows another chain (${observed}) than the one this engine's state was built from (${recorded}); ` +
            `refusing to serve that state. Point the engine at the right node, or set ${RESET_CHAIN_STATE_ENV}=${c.chain} to delete ${name}'s ` +
            `derived state (markets, checkpoints, cursors, ClickHouse history, signals) and rebuild it from this node`
        })
    }
    return decision
  })

/**
 * The start-up gate: checks both chains' identities (embedded or configured, as the endpoints say),
 * then loads the retired ranges into `retired` (the filter of the bus every consumer subscribes
 * through). Provided to the pipeline so it is built before the ingesters, actors and writers.
 */
export const chainIdentityGate = (
  resetChains: ReadonlyArray<ChainId>,
  retired: RetiredRanges
): Layer.Layer<never, ChainIdentityError, SolanaEndpoints | HoodEndpoints | SqlClient.SqlClient | ClickHouse | Bus> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const solana = yield* SolanaEndpoints
      const hood = yield* HoodEndpoints
      yield* checkChainIdentity({ chain: "solana", rpcUrl: solana.rpcUrl, embedded: solana.embedded }, resetChains)
      yield* checkChainIdentity({ chain: "hood", rpcUrl: hood.rpcUrl, embedded: hood.embedded }, resetChains)
      yield* loadRetiredRanges(retired).pipe(Effect.mapError(storage))
    })
  )
