/**
 * The decisions of a TEE rebind (spec document 2, 4.1 "Rebind rules"), pure so they are tested
 * without a database: which wallets the selectors name, whether each may move, whether a build
 * or a forwarded sign holds a wallet back, whether a binding changed since the preview, and the
 * response views. `TeeRebind` runs them over the rows it reads.
 */
import { Either } from "effect"
import { addressKey, canonicalAddress, type WalletChain } from "../ChainKeys.js"
import type { KeyInfo } from "../Principal.js"
import type { WalletRow } from "./WalletRows.js"

export type RebindWalletReason = "not_found" | "not_tee" | "inactive" | "authority_not_verified" | "ambiguous"

/** A wallet that cannot be rebound (`REBIND_WALLET_INVALID`), with what the refusal names. */
export interface RebindWalletProblem {
  readonly reason: RebindWalletReason
  readonly message: string
  readonly walletId?: string
  readonly selector?: string
  readonly matches?: ReadonlyArray<{ readonly id: string; readonly address: string; readonly label: string | null; readonly chain: WalletChain }>
}

/** Why `row` cannot be rebound: an active TEE wallet at a verified-active remote authority moves. */
export const teeRowProblem = (row: WalletRow, selector?: string): RebindWalletProblem | undefined => {
  const at = { walletId: row.id, ...(selector !== undefined ? { selector } : {}) }
  if (row.kind !== "tee") return { reason: "not_tee", message: `${row.id} is not a TEE wallet`, ...at }
  if (row.revoked_at !== null) return { reason: "inactive", message: `${row.id} is not active`, ...at }
  if (row.authority_status !== "verified_active") {
    return { reason: "authority_not_verified", message: `${row.id} is not at a verified-active remote authority`, ...at }
  }
  return undefined
}

const isActiveTee = (r: WalletRow) => r.kind === "tee" && r.revoked_at === null

/** The row a selector names: an id, else an address on either chain (the active row first), else a unique active TEE label. */
const selectRow = (rows: ReadonlyArray<WalletRow>, selector: string): Either.Either<WalletRow | undefined, RebindWalletProblem> => {
  const byId = rows.find((r) => r.id === selector)
  if (byId !== undefined) return Either.right(byId)
  const keys = new Set<string>()
  for (const chain of ["solana", "evm"] as const) {
    const c = canonicalAddress(chain, selector)
    if (c !== undefined) keys.add(`${chain}:${addressKey(chain, c)}`)
  }
  const byAddress = rows.filter((r) => keys.has(`${r.chain}:${r.address_key}`))
  const addressed = byAddress.find((r) => r.revoked_at === null) ?? byAddress[0]
  if (addressed !== undefined) return Either.right(addressed)
  const byLabel = rows.filter((r) => isActiveTee(r) && r.label === selector)
  if (byLabel.length > 1) {
    return Either.left({
      reason: "ambiguous",
      message: `The label '${selector}' matches ${byLabel.length} wallets`,
      selector,
      matches: byLabel.map((r) => ({ id: r.id, address: r.address, label: r.label, chain: r.chain }))
    })
  }
  return Either.right(byLabel[0])
}

/**
 * The wallets a preview moves: each selector's row, then every active TEE wallet whose label starts
 * with `labelPrefix`; each must pass `teeRowProblem`. Deduplicated, in selection order.
 */
export const resolveSelectors = (
  rows: ReadonlyArray<WalletRow>,
  selectors: ReadonlyArray<string>,
  labelPrefix: string | undefined
): Either.Either<ReadonlyArray<WalletRow>, RebindWalletProblem> => {
  const chosen = new Map<string, WalletRow>()
  for (const selector of selectors) {
    const selected = selectRow(rows, selector)
    if (Either.isLeft(selected)) return Either.left(selected.left)
    const row = selected.right
    if (row === undefined) return Either.left({ reason: "not_found", message: `No wallet matches '${selector}'`, selector })
    const bad = teeRowProblem(row, selector)
    if (bad !== undefined) return Either.left(bad)
    chosen.set(row.id, row)
  }
  if (labelPrefix !== undefined) {
    for (const r of rows) {
      if (isActiveTee(r) && r.label !== null && r.label.startsWith(labelPrefix)) {
        const bad = teeRowProblem(r)
        if (bad !== undefined) return Either.left(bad)
        chosen.set(r.id, r)
      }
    }
  }
  return Either.right([...chosen.values()])
}

/** A `sign_claims` row still open or signed for a wallet that would move. */
export interface ClaimRow {
  readonly id: string
  readonly wallet_id: string
  readonly chain: WalletChain
  readonly state: string
  readonly expires_at: Date
  readonly tx_expires_at: Date | null
  readonly signature: string | null
}

const ms = (d: Date | string) => new Date(d).getTime()

/** Open builds inside their claim window hold the rebind (`REBIND_BUILD_OPEN`): their wallets and when the last window ends. */
export const openBuilds = (claims: ReadonlyArray<ClaimRow>, nowMs: number): { readonly walletIds: ReadonlyArray<string>; readonly retryAfter: number } | undefined => {
  const open = claims.filter((c) => c.state === "open" && ms(c.expires_at) > nowMs)
  if (open.length === 0) return undefined
  return { walletIds: [...new Set(open.map((c) => c.wallet_id))], retryAfter: Math.max(...open.map((c) => ms(c.expires_at))) }
}

/**
 * What a forwarded (signed) claim needs: `expired` when its Solana transaction provably can no
 * longer land, `reconcile` (read the chain) otherwise; an EVM (Hood) claim never provably expires.
 */
export const forwardedClaimAction = (c: ClaimRow, nowMs: number): "expired" | "reconcile" =>
  c.chain === "solana" && c.tx_expires_at !== null && ms(c.tx_expires_at) <= nowMs ? "expired" : "reconcile"

/** Forwarded signs the chain does not yet show settled hold the rebind (`REBIND_FORWARD_OPEN`); the first one's kind names the reason. */
export const forwardsOpen = (
  pending: ReadonlyArray<ClaimRow>
): { readonly reason: "pending" | "unexpirable"; readonly walletIds: ReadonlyArray<string> } | undefined => {
  const first = pending[0]
  if (first === undefined) return undefined
  return { reason: first.chain === "evm" ? "unexpirable" : "pending", walletIds: [...new Set(pending.map((c) => c.wallet_id))] }
}

/** The wallets whose binding differs from what the commit expects (`REBIND_STALE`), with their current bound key prefix. */
export const staleBindings = (
  ids: ReadonlyArray<string>,
  byId: ReadonlyMap<string, WalletRow>,
  expect: Readonly<Record<string, string>>
): { readonly walletIds: ReadonlyArray<string>; readonly current: Readonly<Record<string, string | null>> } | undefined => {
  const stale = ids.filter((id) => byId.get(id)?.bound_key_prefix !== expect[id])
  if (stale.length === 0) return undefined
  return { walletIds: stale, current: Object.fromEntries(stale.map((id) => [id, byId.get(id)?.bound_key_prefix ?? null])) }
}

/** The response's `toKey`: `tradeReady.<asset>` unless the key caps the asset at zero; `missingCaps` lists those zero caps. */
export const toKeyView = (key: KeyInfo, allowLaunchWallets: number) => {
  const zero = new Set((key.spendLimits ?? []).filter((l) => BigInt(l.maxPerTxRaw) === 0n).map((l) => l.asset))
  return {
    keyPrefix: key.keyPrefix,
    label: key.label,
    paused: key.paused,
    walletScope: key.walletScope,
    tradeReady: { sol: !zero.has("sol"), usdc: !zero.has("usdc") },
    hoodTradeReady: { eth: !zero.has("eth"), usdg: !zero.has("usdg") },
    missingCaps: [...zero].sort(),
    launchScope: { launchWrite: key.scopes.includes("launch:write"), allowLaunchWallets }
  }
}

/** A `rebound[]` entry; `auditId` only on a commit. */
export const reboundView = (r: WalletRow, auditId?: string) => ({
  id: r.id,
  address: r.address,
  label: r.label,
  fromKeyPrefix: r.bound_key_prefix,
  allowLaunch: r.allow_launch,
  chain: r.chain,
  ...(auditId !== undefined ? { auditId } : {})
})

export const unchangedView = (r: WalletRow) => ({ id: r.id, address: r.address, label: r.label, allowLaunch: r.allow_launch, chain: r.chain })
