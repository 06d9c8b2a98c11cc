/**
 * The access-change plan (spec 2.1 "Access-change response", 3.2): what moving a key to one of
 * the three levels would do, computed from the key's stored scopes and advisory facts from the
 * wallet side. Pure, so a preview and the commit that follows compute the same thing and a
 * property test can drive it.
 *
 * The fund-moving warnings: `MOVES_FUNDS` when the change adds `transfer:write`;
 * `linkedTransferReady` (whether the key carries a txLimit and sol, usdc and svc caps) and, when
 * any is missing, `LINKED_TRANSFER_NEEDS_LIMITS` when it adds `transfer:bound` (transfers out of
 * the bound TEE wallets); `VAULT_TRANSFER_READY` when it adds `transfer:bound` and a bound TEE
 * wallet has a vault pinned (that transfer needs nothing else).
 */
import type { BoundTeeWallets } from "../accounts/AccountWallets.js"
import type { SpendLimit, TxLimit } from "./KeyRules.js"
import { type AccessLevel, diffScopes, type Direction, LevelScopes, levelOf } from "./Scopes.js"

export interface AccessFacts {
  readonly boundTeeWallets: BoundTeeWallets
  readonly walletScope: "all" | "selected"
  readonly openSignClaims: number
  /** Open limit orders placed through this key (absent: none). */
  readonly openLimitOrders?: number
  readonly txLimit: TxLimit | null
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
}

export interface AccessSide {
  readonly access: AccessLevel | null
  readonly scopes: ReadonlyArray<string>
}

export interface AccessWarning {
  readonly code:
    | "MOVES_FUNDS"
    | "VAULT_TRANSFER_READY"
    | "LINKED_TRANSFER_NEEDS_LIMITS"
    | "BOUND_WALLETS_STOP_TRADING"
    | "OPEN_ORDERS_STRANDED"
    | "OPEN_SIGNS_REFUSED"
    | "WORKERS_STOP"
    | "DROPS_UNLISTED_SCOPES"
  readonly message: string
}

/** The access-change response's `effects`: each member present only when the change touches it (spec 2.1, 3.2). */
export interface AccessEffects {
  /** The key's bound TEE wallets (a sample of five ids). */
  boundTeeWallets?: { readonly count: number; readonly sample: ReadonlyArray<string> }
  walletScope?: "all" | "selected"
  /** Whether a `transfer:bound` key carries what linked transfers need. */
  linkedTransferReady?: { readonly txLimit: boolean; readonly assets: { readonly sol: boolean; readonly usdc: boolean; readonly svc: boolean } }
  /** Built, unsigned transactions of this key that signing will refuse. */
  openSignClaims?: number
  /** Open limit orders placed through this key; they stay open. */
  openLimitOrders?: number
}

export interface AccessPlan {
  readonly direction: Direction
  readonly from: AccessSide
  readonly to: AccessSide
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly effects: Readonly<AccessEffects>
  readonly warnings: ReadonlyArray<AccessWarning>
}

const listed = new Set(LevelScopes.readwritetransfer)

export const planAccessChange = (scopes: ReadonlyArray<string>, target: AccessLevel, facts: AccessFacts): AccessPlan => {
  const toScopes = LevelScopes[target]
  const { added, removed, direction } = diffScopes(scopes, toScopes)
  const effects: AccessEffects = {}
  const warnings: AccessWarning[] = []
  const bound = facts.boundTeeWallets
  if (bound.count > 0) {
    effects.boundTeeWallets = { count: bound.count, sample: bound.sample.slice(0, 5) }
    effects.walletScope = facts.walletScope
  } else if (facts.walletScope === "selected") effects.walletScope = facts.walletScope

  if (added.includes("transfer:write")) {
    warnings.push({ code: "MOVES_FUNDS", message: "This level can move funds out of the account's wallets" })
  }
  // Linked transfers leave the key's bound TEE wallets (to a wallet the owner linked or trusted),
  // so they come with `transfer:bound`; the key's txLimit and its sol, usdc and svc caps bound them.
  if (added.includes("transfer:bound")) {
    const capped = (a: string) => facts.spendLimits?.some((l) => l.asset === a) ?? false
    const ready = { txLimit: facts.txLimit !== null, assets: { sol: capped("sol"), usdc: capped("usdc"), svc: capped("svc") } }
    effects.linkedTransferReady = ready
    if (!ready.txLimit || !ready.assets.sol || !ready.assets.usdc || !ready.assets.svc) {
      warnings.push({ code: "LINKED_TRANSFER_NEEDS_LIMITS", message: "Set a txLimit and sol, usdc and svc caps before linked transfers" })
    }
    if ((bound.withVault ?? 0) > 0) {
      warnings.push({ code: "VAULT_TRANSFER_READY", message: `${bound.withVault} bound TEE wallet(s) can transfer to their pinned vault at once` })
    }
  }
  if (removed.includes("swap:write") && bound.count > 0) {
    warnings.push({ code: "BOUND_WALLETS_STOP_TRADING", message: "Bound TEE wallets stop trading through this key" })
  }
  if ((removed.includes("swap:write") || removed.includes("transfer:bound")) && facts.openSignClaims > 0) {
    effects.openSignClaims = facts.openSignClaims
    warnings.push({ code: "OPEN_SIGNS_REFUSED", message: "Built but unsigned transactions of this key will be refused at signing" })
  }
  // Spec 3.2: open limit orders stay open; any key of the account with swap:write can cancel them.
  const openOrders = facts.openLimitOrders ?? 0
  if (removed.includes("swap:write") && openOrders > 0) {
    effects.openLimitOrders = openOrders
    warnings.push({ code: "OPEN_ORDERS_STRANDED", message: `${openOrders} open limit orders placed through this key stay open; cancel them with any key of the account that has swap:write` })
  }
  const unlisted = removed.filter((s) => !listed.has(s))
  if (unlisted.length > 0) {
    warnings.push({ code: "DROPS_UNLISTED_SCOPES", message: `Drops scopes no level lists: ${unlisted.join(", ")}` })
  }
  return {
    direction,
    from: { access: levelOf(scopes), scopes: [...scopes].sort() },
    to: { access: target, scopes: toScopes },
    added,
    removed,
    effects,
    warnings
  }
}
