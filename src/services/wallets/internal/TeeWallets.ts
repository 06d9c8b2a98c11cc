/**
 * TEE wallets (spec document 2, 2.3 and 4.1): created by the owner at the provider with the
 * backstop policy and bound to one agent key, which must be fit to hold TEE wallets (the same
 * rules as a rebind target). The binding is read fresh on every build and sign, never cached.
 *
 * Invariants:
 * - A full account creates nothing at the provider: the plan's count is checked first (and again
 *   under the account lock by the insert).
 * - When the row cannot be inserted after the provider created the wallet, its policy falls back
 *   to default-deny.
 */
import { Effect } from "effect"
import type { WalletChain } from "../ChainKeys.js"
import type { KeyInfo, Principal } from "../Principal.js"
import { walletError, type WalletErrorReason } from "../WalletError.js"
import { type WalletContext, type WalletRows, walletView } from "./WalletRows.js"

export interface CreateTeeInput {
  readonly chain: WalletChain
  readonly keyPrefix: string
  readonly label?: string
  readonly allowLaunch?: boolean
  readonly vaultDestination?: string
}

/** Why a key cannot hold TEE wallets (spec 4.1's rebind target rules). */
export type KeyUnfitReason = "not_found" | "revoked" | "expired" | "test_key" | "missing_scope"

const unfitReason: Record<KeyUnfitReason, WalletErrorReason> = {
  not_found: "key_not_found",
  revoked: "key_revoked",
  expired: "key_expired",
  test_key: "key_test",
  missing_scope: "key_missing_scope"
}

/** Why `key` cannot hold TEE wallets at `nowMs`, or undefined when it can. A paused key can. Pure. */
export const keyUnfit = (key: KeyInfo | undefined, nowMs: number): { readonly reason: KeyUnfitReason; readonly message: string } | undefined => {
  if (key === undefined) return { reason: "not_found", message: "No key with this prefix on this account" }
  if (key.revokedAtMs !== null) return { reason: "revoked", message: "Key has been revoked" }
  if (key.expiresAtMs !== null && key.expiresAtMs <= nowMs) return { reason: "expired", message: "Key has expired" }
  if (key.environment !== "production") return { reason: "test_key", message: "A test key cannot hold TEE wallets" }
  if (!key.scopes.includes("swap:write")) return { reason: "missing_scope", message: "The key lacks swap:write" }
  return undefined
}

export const makeTeeWallets = (ctx: WalletContext, rows: WalletRows) => {
  const { provider } = ctx

  const createTee = (p: Principal, input: CreateTeeInput) =>
    Effect.gen(function* () {
      yield* rows.requireLinkingPlan(p)
      const key = yield* ctx.keys.findByPrefix(p.accountId, input.keyPrefix)
      const unfit = keyUnfit(key, yield* ctx.clock.currentTimeMillis)
      if (unfit !== undefined || key === undefined) {
        return yield* walletError(unfitReason[unfit?.reason ?? "not_found"], unfit?.message ?? "unknown key")
      }
      // Count first, so a full account creates nothing at the provider.
      yield* rows.requireRoom(p)
      const policyId = yield* provider.createBackstopPolicy
      const created = yield* provider.createTeeWallet({ accountId: p.accountId, chain: input.chain, policyId })
      const row = yield* rows.insertCustodied(p, {
        chain: input.chain,
        address: created.address,
        kind: "tee",
        label: input.label ?? null,
        allowLaunch: input.allowLaunch ?? false,
        boundKeyId: key.keyId,
        boundKeyPrefix: key.keyPrefix,
        providerWalletId: created.providerWalletId,
        policyId,
        vaultDestination: input.vaultDestination ?? null
      })
      return walletView(row)
    }).pipe(Effect.withSpan("WalletService.createTee"))

  return { createTee }
}
