/**
 * How far ingestion trails the chains, as `/readyz` reports it beside its checks (a fact, never a
 * reason to be unready): per chain the last slot or block whose events the ingester published
 * (`published`) and the node's head read with it (`head`; a report that joins a head read already
 * in flight gets that read's answer, sent up to its 1.5 s deadline earlier: Solana's newest slot at the
 * ingester's commitment, Hood's newest block), and `actorsPending`, the `chain.events` records the
 * market actors have not yet applied and checkpointed (end offsets minus the `actors` group's
 * committed offsets).
 *
 * A caller that landed something at slot or block H knows the engine has taken it in, and that
 * nothing about it is still in flight, once `published ≥ H` and then `actorsPending` is 0.
 */
import { Effect } from "effect"
import { type BusShape, Topics } from "../../../ingest/bus/Bus.js"
import { postJsonRpc } from "../../chain/JsonRpcPost.js"

export interface ChainLag {
  /** Decimal, or null before the first publish / when the node did not answer. */
  readonly published: string | null
  readonly head: string | null
}

export interface IngestionReport {
  readonly solana: ChainLag
  readonly hood: ChainLag
  /** Null when the bus did not answer. */
  readonly actorsPending: number | null
}

export interface IngestionSources {
  readonly solanaPublished: Effect.Effect<bigint | null>
  readonly solanaRpcUrl: string
  readonly solanaCommitment: "processed" | "confirmed" | "finalized"
  readonly hoodPublished: Effect.Effect<bigint | null>
  readonly hoodRpcUrl: string
  readonly bus: BusShape
  /** The consumer group whose backlog is `actorsPending`. */
  readonly actorsGroup: string
}

/** The longest one head read may take. */
export const HEAD_READ_DEADLINE_MS = 1_500

/**
 * The node's head as one shared read: a caller joins the read in flight, if any, instead of
 * starting its own, so however many `/readyz` run at once (the route is public and unlimited), at
 * most one head read per chain holds a slot of the chain clients' HTTP client (`postJson`'s
 * process bound and per-origin connections, which trades, launches and bundles share). A caller
 * that gives up (its `/readyz` timeout) leaves the read to settle within its own deadline.
 */
const sharedHeadRead = (url: string, method: string, params: ReadonlyArray<unknown>): Effect.Effect<bigint | null> => {
  let inFlight: Promise<bigint | null> | undefined
  const read = async (): Promise<bigint | null> => {
    try {
      const res = await postJsonRpc(url, method, params, HEAD_READ_DEADLINE_MS)
      const body = res.json() as { result?: unknown }
      return typeof body.result === "number" || typeof body.result === "string" ? BigInt(body.result) : null
    } catch {
      return null
    } finally {
      inFlight = undefined
    }
  }
  return Effect.promise(() => (inFlight ??= read()))
}

const text = (v: bigint | null) => (v === null ? null : v.toString())

/** The report as an effect run per `/readyz`; its head reads are shared by every run of this one effect (`sharedHeadRead`). */
export const ingestionReport = (s: IngestionSources): Effect.Effect<IngestionReport> => {
  const solanaHead = sharedHeadRead(s.solanaRpcUrl, "getSlot", [{ commitment: s.solanaCommitment }])
  const hoodHead = sharedHeadRead(s.hoodRpcUrl, "eth_blockNumber", [])
  return Effect.all(
    {
      solanaPublished: s.solanaPublished,
      solanaHead,
      hoodPublished: s.hoodPublished,
      hoodHead,
      actorsPending: Effect.all([s.bus.endOffsets(Topics.chainEvents), s.bus.committed(s.actorsGroup, Topics.chainEvents)]).pipe(
        Effect.map(([end, committed]) => {
          let pending = 0
          for (const [partition, next] of end) pending += Math.max(0, next - (committed.get(partition) ?? 0))
          return pending
        }),
        Effect.orElseSucceed(() => null)
      )
    },
    { concurrency: "unbounded" }
  ).pipe(
    Effect.map((r) => ({
      solana: { published: text(r.solanaPublished), head: text(r.solanaHead) },
      hood: { published: text(r.hoodPublished), head: text(r.hoodHead) },
      actorsPending: r.actorsPending
    }))
  )
}
