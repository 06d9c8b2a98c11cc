/**
 * The recorded visibility of this service's launches (launch spec 2.1 `visibility`, 2.9 verify:
 * "non-production visibility: 200 with {candleLaunched: false}"), for the public reads. The
 * launch paths record it in `launched_tokens` (a self-signed Solana or atomic launch `hidden`
 * until confirmed, 3.2, then the requested one); this service follows that table and answers, by
 * a map lookup, which markets are not `production`.
 *
 * It also keeps the `AgentLaunches` registry (feed `isAgent`, verify `viaAgentKey`, the agent
 * record's `launchesViaApi`) to production launches: the launch paths add only production
 * attributions (`LaunchRecords.attribute`), and a launch promoted to production later (3.2) is
 * added here when the follow sees it.
 *
 * Invariants:
 * - Only non-`production` launches are held (`test`, `local`, `hidden`); a promotion removes one.
 * - Followed every `refreshMs` (default 1 s) from PostgreSQL, in every process that serves the
 *   public reads (so API replicas agree): rows attributed or confirmed since the last pass, less a
 *   10 s look-back for transactions that committed late; reading a row twice changes nothing.
 *   A launch's row is written before its transaction leaves, so the market it names is normally
 *   not yet ingested when the follow sees it.
 * - Bounded: at most `maxEntries` (default 1,000,000) non-production launches, the oldest
 *   forgotten first (it then reads as production).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { type AgentLaunches, AgentLaunchRegistry } from "../../../actors/AgentLaunches.js"
import type { Chain } from "../../domain/Chain.js"
import * as Database from "../../db/Database.js"

export type LaunchVisibilityName = "production" | "test" | "local" | "hidden"

export const LAUNCH_VISIBILITY_MAX = 1_000_000
const LOOK_BACK_MS = 10_000

export interface LaunchVisibilityRead {
  /** The recorded visibility when it is not `production`; undefined for production launches and every other market. */
  readonly restricted: (chain: Chain, mint: string) => Exclude<LaunchVisibilityName, "production"> | undefined
}

const keyOf = (chain: string, mint: string) => `${chain}:${chain === "hood" ? mint.toLowerCase() : mint}`

export class LaunchVisibility implements LaunchVisibilityRead {
  private readonly held = new Map<string, Exclude<LaunchVisibilityName, "production">>()

  constructor(readonly maxEntries: number = LAUNCH_VISIBILITY_MAX) {}

  /** Records one launch's visibility (production removes it). */
  set(chain: string, mint: string, visibility: string): void {
    const key = keyOf(chain, mint)
    if (visibility === "production") {
      this.held.delete(key)
      return
    }
    if (visibility !== "test" && visibility !== "local" && visibility !== "hidden") return
    if (!this.held.has(key) && this.held.size >= this.maxEntries) this.held.delete(this.held.keys().next().value!)
    this.held.set(key, visibility)
  }

  readonly restricted = (chain: Chain, mint: string) => (this.held.size === 0 ? undefined : this.held.get(keyOf(chain, mint)))

  get size(): number {
    return this.held.size
  }
}

export class LaunchVisibilityRegistry extends Context.Tag("curvestream/LaunchVisibilityRegistry")<LaunchVisibilityRegistry, LaunchVisibilityRead>() {}

interface Row {
  readonly chain: Chain
  readonly mint: string
  readonly account_id: string
  readonly visibility: string
  readonly changed_at: Date
}

/** One pass over the rows changed since `sinceMs` (all rows when null); returns the newest change seen. */
export const followOnce = (visibility: LaunchVisibility, agentLaunches: AgentLaunches, sinceMs: number | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows =
      sinceMs === null
        ? yield* sql<Row>`
            SELECT chain, mint, account_id, visibility, coalesce(confirmed_at, attributed_at) AS changed_at
            FROM launched_tokens ORDER BY attributed_at`
        : yield* sql<Row>`
            SELECT chain, mint, account_id, visibility, coalesce(confirmed_at, attributed_at) AS changed_at
            FROM launched_tokens WHERE attributed_at > ${new Date(sinceMs - LOOK_BACK_MS)} OR confirmed_at > ${new Date(sinceMs - LOOK_BACK_MS)}
            ORDER BY attributed_at`
    let newest = sinceMs ?? 0
    for (const r of rows) {
      visibility.set(r.chain, r.mint, r.visibility)
      if (r.visibility === "production") agentLaunches.add(r.chain, r.mint, r.account_id)
      newest = Math.max(newest, new Date(r.changed_at).getTime())
    }
    return newest
  })

/**
 * The registry, loaded before the layer is built (so no read starts without it) and followed in
 * the layer's scope. Needs the `AgentLaunchRegistry` it keeps to production launches.
 */
export const layer = (options: { readonly refreshMs?: number } = {}): Layer.Layer<LaunchVisibilityRegistry, never, SqlClient.SqlClient | AgentLaunchRegistry> =>
  Layer.scoped(
    LaunchVisibilityRegistry,
    Effect.gen(function* () {
      const agentLaunches = yield* AgentLaunchRegistry
      const visibility = new LaunchVisibility()
      let since = yield* followOnce(visibility, agentLaunches, null).pipe(Effect.orDie)
      yield* Effect.forkScoped(
        Effect.repeat(
          followOnce(visibility, agentLaunches, since).pipe(
            Effect.tap((newest) => Effect.sync(() => (since = newest))),
            Effect.catchAll((e) => Effect.logWarning("launch visibility not refreshed", e))
          ),
          Schedule.spaced(Duration.millis(options.refreshMs ?? 1_000))
        )
      )
      return visibility
    })
  )

/** The real registry over `Database.layerTest`; the agent launch registry is the test's. */
export const layerTest = (options: { readonly refreshMs?: number } = {}) => layer(options).pipe(Layer.provide(Database.layerTest))
