/**
 * The engine's ingestion receipt (`/readyz`'s `ingestion`, `src/services/ingestion/IngestionLag.ts`):
 * wait until the engine has published every slot or block up to the chains' heads (as they are
 * when the wait starts, or a given height) and the market actors have applied and checkpointed
 * every event on the bus. After that, nothing about those blocks is still in flight.
 */
import type { IngestionReport } from "../../src/services/ingestion/IngestionLag.js"
import type { Engine } from "./engine.js"
import { eventually } from "./eventually.js"

export type IngestedChain = "solana" | "hood"

export const ingestion = async (engine: Pick<Engine, "url">): Promise<IngestionReport> => {
  const body = (await (await fetch(`${engine.url}/readyz`)).json()) as { ingestion?: IngestionReport }
  if (body.ingestion === undefined) throw new Error("/readyz reports no ingestion")
  return body.ingestion
}

/** Waits for the receipt: each chain published up to `atLeast` (default: its head when the wait starts), then no actor backlog. */
export const ingestionCaughtUp = async (
  engine: Engine,
  chains: ReadonlyArray<IngestedChain>,
  options: { readonly atLeast?: Partial<Record<IngestedChain, bigint>>; readonly deadlineMs?: number } = {}
): Promise<IngestionReport> => {
  const start = await ingestion(engine)
  const target = new Map<IngestedChain, bigint>()
  for (const c of chains) {
    const head = start[c].head === null ? 0n : BigInt(start[c].head)
    const floor = options.atLeast?.[c] ?? 0n
    target.set(c, head > floor ? head : floor)
  }
  return eventually(
    async () => {
      const r = await ingestion(engine)
      const published = chains.every((c) => r[c].published !== null && BigInt(r[c].published) >= target.get(c)!)
      return published && r.actorsPending === 0 ? r : undefined
    },
    {
      what: `ingestion to reach ${chains.map((c) => `${c} ${target.get(c)}`).join(", ")} with no actor backlog`,
      deadlineMs: options.deadlineMs ?? 30_000,
      intervalMs: 100,
      detail: () => engine.output().slice(-3000)
    }
  )
}
