/**
 * Tracked wallets, KOL labels and wallet groups: the market-data service's curated lists
 * (`/v1/wallets`, `/v1/groups`, labelled trades) and the signal detectors' inputs (who counts for
 * confluence, intra_book, wallet dormancy; which authors are KOLs for kol_mention).
 *
 * Invariants:
 * - Plan visibility (spec 4.5): a group is `public`, `pro` or `max`; Free sees public groups,
 *   Pro public and pro, Max all three. A wallet is visible when its own visibility is, and its
 *   `groups` list shows only the groups the plan may see.
 * - Lookups by address are exact per chain; Solana addresses compare as given (base58 is
 *   case-sensitive), EVM addresses are compared lower-cased (older rows may be lowercase, spec 2.3).
 * - In memory and immutable after construction: the data is seed data for now (Seed.ts); a
 *   PostgreSQL-backed implementation can replace `make` behind the same shape.
 */
import { Context, Layer } from "effect"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import type { KolInfo, TrackedWalletInfo } from "../../../actors/signals/SignalConfig.js"
import { normalizeAddress } from "../../domain/Chain.js"
import type { PlanId } from "../../domain/Plans.js"

export type Visibility = "public" | "pro" | "max"
/** The plan table's ids (one definition, `src/domain/Plans.ts`); re-exported for the readers of this module. */
export type { PlanId }
export type WalletKind = "smartmoney" | "kol" | "deployer" | "fund"

export interface TrackedWallet {
  readonly id: string
  readonly chain: ChainId
  readonly address: string
  readonly label: string
  readonly kind: WalletKind
  readonly visibility: Visibility
  /** Group ids, sorted. */
  readonly groups: ReadonlyArray<string>
  /** The KOL label's id when this wallet belongs to a KOL. */
  readonly kolId: string | null
}

export interface WalletGroup {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly visibility: Visibility
  /** Member wallet ids, sorted. */
  readonly walletIds: ReadonlyArray<string>
}

export interface KolLabel {
  readonly id: string
  readonly handle: string
  readonly name: string
  /** 0..40, adds to kol_mention confidence. */
  readonly weight: number
  readonly followers: number
  readonly walletIds: ReadonlyArray<string>
}

export interface TrackingData {
  readonly wallets: ReadonlyArray<TrackedWallet>
  readonly groups: ReadonlyArray<WalletGroup>
  readonly kols: ReadonlyArray<KolLabel>
}

export const visibleTo = (plan: PlanId): ReadonlySet<Visibility> =>
  new Set<Visibility>(plan === "max" ? ["public", "pro", "max"] : plan === "pro" ? ["public", "pro"] : ["public"])

export interface TrackingShape {
  /** Wallets the plan may see (groups filtered to visible ones), in id order. */
  readonly wallets: (plan: PlanId, chain?: ChainId) => ReadonlyArray<TrackedWallet>
  readonly wallet: (plan: PlanId, id: string) => TrackedWallet | undefined
  readonly groups: (plan: PlanId) => ReadonlyArray<WalletGroup>
  readonly group: (plan: PlanId, id: string) => WalletGroup | undefined
  readonly kols: () => ReadonlyArray<KolLabel>
  /** Any tracked wallet at this address, regardless of plan (for the detectors and labels). */
  readonly byAddress: (chain: ChainId, address: string) => TrackedWallet | undefined
  readonly kolByHandle: (handle: string) => KolLabel | undefined
  /** The detectors' view (actors/signals SignalInputs minus prices). */
  readonly trackedWalletInfo: (chain: ChainId, address: string) => TrackedWalletInfo | undefined
  readonly kolInfo: (handle: string) => KolInfo | undefined
}

export class Tracking extends Context.Tag("curvestream/Tracking")<Tracking, TrackingShape>() {
  static layer(data: TrackingData): Layer.Layer<Tracking> {
    return Layer.succeed(Tracking, make(data))
  }
}

const normalizeHandle = (handle: string): string => handle.replace(/^@/, "").toLowerCase()

/** Builds the lookups; throws on inconsistent data (a seed bug): duplicate ids, unknown members. */
export const make = (data: TrackingData): TrackingShape => {
  const walletsById = new Map<string, TrackedWallet>()
  const byAddress = new Map<string, TrackedWallet>()
  for (const w of data.wallets) {
    if (walletsById.has(w.id)) throw new Error(`tracking: duplicate wallet id ${w.id}`)
    walletsById.set(w.id, w)
    byAddress.set(`${w.chain}:${normalizeAddress(w.chain, w.address)}`, w)
  }
  const groupsById = new Map<string, WalletGroup>()
  for (const g of data.groups) {
    if (groupsById.has(g.id)) throw new Error(`tracking: duplicate group id ${g.id}`)
    for (const id of g.walletIds) {
      const w = walletsById.get(id)
      if (w === undefined) throw new Error(`tracking: group ${g.id} names unknown wallet ${id}`)
      if (!w.groups.includes(g.id)) throw new Error(`tracking: wallet ${id} does not list group ${g.id}`)
    }
    groupsById.set(g.id, g)
  }
  for (const w of data.wallets) for (const g of w.groups) if (!groupsById.has(g)) throw new Error(`tracking: wallet ${w.id} names unknown group ${g}`)
  const kolsByHandle = new Map<string, KolLabel>()
  for (const k of data.kols) kolsByHandle.set(normalizeHandle(k.handle), k)

  const sortedWallets = [...data.wallets].sort((a, b) => (a.id < b.id ? -1 : 1))
  const sortedGroups = [...data.groups].sort((a, b) => (a.id < b.id ? -1 : 1))
  const forPlan = (plan: PlanId, w: TrackedWallet): TrackedWallet | undefined => {
    const visible = visibleTo(plan)
    if (!visible.has(w.visibility)) return undefined
    const groups = w.groups.filter((g) => visible.has(groupsById.get(g)!.visibility))
    return groups.length === w.groups.length ? w : { ...w, groups }
  }
  const infoCache = new Map<TrackedWallet, TrackedWalletInfo>()
  return {
    wallets: (plan, chain) =>
      sortedWallets.flatMap((w) => {
        if (chain !== undefined && w.chain !== chain) return []
        const v = forPlan(plan, w)
        return v === undefined ? [] : [v]
      }),
    wallet: (plan, id) => {
      const w = walletsById.get(id)
      return w === undefined ? undefined : forPlan(plan, w)
    },
    groups: (plan) => sortedGroups.filter((g) => visibleTo(plan).has(g.visibility)),
    group: (plan, id) => {
      const g = groupsById.get(id)
      return g !== undefined && visibleTo(plan).has(g.visibility) ? g : undefined
    },
    kols: () => data.kols,
    byAddress: (chain, address) => byAddress.get(`${chain}:${normalizeAddress(chain, address)}`),
    kolByHandle: (handle) => kolsByHandle.get(normalizeHandle(handle)),
    trackedWalletInfo: (chain, address) => {
      const w = byAddress.get(`${chain}:${normalizeAddress(chain, address)}`)
      if (w === undefined) return undefined
      let info = infoCache.get(w)
      if (info === undefined) {
        info = { id: w.id, groups: w.groups }
        infoCache.set(w, info)
      }
      return info
    },
    kolInfo: (handle) => {
      const k = kolsByHandle.get(normalizeHandle(handle))
      return k === undefined ? undefined : { id: k.id, handle: k.handle, weight: k.weight }
    }
  }
}
