/**
 * The account's wallet list and the row operations every kind shares (spec document 2, 2.3):
 * link-existing (attribution only, proven by a signature over the link challenge), revoke (a
 * tombstone; a row carrying a policy has its rules cleared, best effort, until a revoke succeeds
 * at it) and the owner's update (label, a TEE wallet's `allowLaunch`).
 */
import { Effect } from "effect"
import type { WalletChain } from "../ChainKeys.js"
import type { Principal } from "../Principal.js"
import { walletError } from "../WalletError.js"
import { iso, WALLET_COLUMNS, type WalletContext, type WalletRow, type WalletRows, walletView } from "./WalletRows.js"

export interface LinkInput {
  readonly chain: WalletChain
  readonly address: string
  /** Proof of control over `linkChallenge(...)`: base58 ed25519 (Solana) or 0x personal_sign (EVM). */
  readonly signature: string
  readonly label?: string
}

export interface WalletPatch {
  readonly allowLaunch?: boolean
  readonly label?: string
}

/** A revoke's outcome; `policyNeutralized` only for a row that carried a policy. */
export interface RevokeResult {
  readonly id: string
  readonly revokedAt: string
  readonly policyNeutralized?: boolean
}

export const makeLinkedWallets = (ctx: WalletContext, rows: WalletRows) => {
  const { sql, provider } = ctx

  const list = (p: Principal) =>
    Effect.gen(function* () {
      const active = yield* sql<WalletRow>`
        SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE account_id = ${p.accountId} AND revoked_at IS NULL ORDER BY seq`
      const embedded = yield* provider.embeddedWallets(p.accountId)
      return {
        wallets: active.map(walletView),
        embeddedWallets: embedded.map(({ chain, address, delegation }) => ({ chain, address, delegation }))
      }
    })

  const linkChallenge = (p: Principal, chain: WalletChain, address: string) => provider.linkChallenge(p.accountId, chain, address)

  const link = (p: Principal, input: LinkInput) =>
    Effect.gen(function* () {
      yield* rows.requireLinkingPlan(p)
      const verified = yield* provider.verifyOwnership(p.accountId, input.chain, input.address, input.signature)
      if (!verified) {
        return yield* walletError("ownership_unproven", "signature does not prove control of the address (sign the challenge with that wallet)", {
          details: { challenge: provider.linkChallenge(p.accountId, input.chain, input.address) }
        })
      }
      const row = yield* rows.insertRow(p, {
        chain: input.chain,
        address: input.address,
        kind: "linked",
        label: input.label ?? null,
        allowLaunch: false,
        boundKeyId: null,
        boundKeyPrefix: null,
        providerWalletId: null,
        policyId: null,
        vaultDestination: null
      })
      return walletView(row)
    }).pipe(Effect.withSpan("WalletService.link"))

  const neutralize = (policyId: string) =>
    provider.setPolicyState(policyId, "cleared").pipe(
      Effect.as(true),
      Effect.catchAllCause(() => Effect.succeed(false))
    )

  const revoke = (p: Principal, walletId: string) =>
    Effect.gen(function* () {
      const row = yield* rows.rowById(p.accountId, walletId)
      if (row === undefined) return yield* walletError("not_found", `No wallet ${walletId} on this account`)
      let revokedAt = row.revoked_at
      if (revokedAt === null) {
        const [updated] = yield* sql<{ revoked_at: Date }>`
          UPDATE wallets SET revoked_at = ${rows.now()} WHERE id = ${walletId} AND revoked_at IS NULL RETURNING revoked_at`
        revokedAt = updated?.revoked_at ?? (yield* rows.rowById(p.accountId, walletId))?.revoked_at ?? rows.now()
      }
      const result: RevokeResult = { id: walletId, revokedAt: iso(revokedAt) }
      if (row.policy_id === null) return result
      // Best effort; a retry of the revoke tries again until the rules are cleared.
      let neutralized = row.policy_neutralized === true
      if (!neutralized) {
        neutralized = yield* neutralize(row.policy_id)
        yield* sql`UPDATE wallets SET policy_neutralized = ${neutralized} WHERE id = ${walletId}`
      }
      return { ...result, policyNeutralized: neutralized }
    }).pipe(Effect.withSpan("WalletService.revoke"))

  const update = (p: Principal, walletId: string, patch: WalletPatch) =>
    Effect.gen(function* () {
      const row = yield* rows.rowById(p.accountId, walletId)
      if (row === undefined || row.revoked_at !== null) return yield* walletError("not_found", `No active wallet ${walletId} on this account`)
      if (patch.allowLaunch !== undefined && row.kind !== "tee") {
        return yield* walletError("allow_launch_not_tee", "allowLaunch applies to TEE wallets only")
      }
      const [updated] = yield* sql<WalletRow>`
        UPDATE wallets SET
          allow_launch = ${patch.allowLaunch ?? row.allow_launch},
          label = ${patch.label ?? row.label}
        WHERE id = ${walletId} AND revoked_at IS NULL
        RETURNING ${sql.literal(WALLET_COLUMNS)}`
      if (updated === undefined) return yield* walletError("not_found", `No active wallet ${walletId} on this account`)
      return walletView(updated)
    })

  return { list, linkChallenge, link, revoke, update }
}
