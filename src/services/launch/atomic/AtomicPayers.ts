/**
 * An atomic build's payers and its spend checks (launch spec 2.4, endpoint rules 7 and 8): the
 * creator and each buyer resolved (main: the key may use the embedded wallet and its delegation is
 * live; linked: the payer rules, TEE only with `TEE_LAUNCH_BUYS_ENABLED`), the USD value of a raw
 * amount, the key's window usage, the spend gate over the legs, and the block engine's tip account
 * (read once).
 */
import { Effect, Option } from "effect"
import { findQuotePair } from "../../../domain/QuotePairs.js"
import type { SpendAsset } from "../../keys/KeyRules.js"
import { usdMicrosOf } from "../../prices/Money.js"
import { isPriceAsset, type UsdPrice } from "../../prices/PriceSource.js"
import { payerRules } from "../internal/LaunchGates.js"
import { fromProvider, launchFailure } from "../LaunchError.js"
import type { AtomicPayer } from "../request/DecodeLaunchRequest.js"
import type { AtomicCaller } from "./AtomicLaunch.js"
import type { AtomicBundles } from "./AtomicBundles.js"
import { payerText, type ResolvedPayer } from "./AtomicRules.js"
import { windowUsedUsdMicros as spendWindowUsed } from "../../spend/SpendStore.js"
import { gateBundle, type GateLeg } from "./SpendGate.js"

export type AtomicPayers = ReturnType<typeof makeAtomicPayers>

export const makeAtomicPayers = (b: AtomicBundles) => {
  const { o: config, withSql, stored } = b
  const { wallets, provider, prices } = b.deps
  let tipAccount: string | undefined

  // ---- payers ------------------------------------------------------------------------------

  const resolvePayer = (caller: AtomicCaller, p: AtomicPayer, field: string, purpose: "launch" | "spend", cache: Map<string, ResolvedPayer>) =>
    Effect.gen(function* () {
      const key = payerText(p)
      const known = cache.get(key)
      if (known !== undefined) return known
      let resolved: ResolvedPayer
      if (p.type === "main") {
        if (caller.embeddedWallet === "denied") {
          return yield* launchFailure("embedded_wallet_not_permitted", "This key's embedded-wallet permission is denied; it cannot use an embedded-wallet leg", { field, retryable: false })
        }
        // A named main payer with no embedded wallet is the request's fault (AGENT_WALLET_MISSING, 400, naming the payer);
        // the headless route, which names no payer, answers AGENT_WALLET_NOT_EMBEDDED (403).
        const w = yield* provider.resolveDelegation(caller.accountId, "solana").pipe(
          Effect.catchTags({
            WalletProviderError: (e) =>
              Effect.fail(
                e.reason === "not_embedded"
                  ? launchFailure("agent_wallet_missing", "The main payer has no embedded Solana wallet on this account", { field, retryable: false })
                  : fromProvider(e)
              )
          }),
          stored("reading the embedded wallet")
        )
        resolved = { kind: "main", address: w.address, walletId: null }
      } else {
        // The creator's wallet is checked to launch (a TEE wallet's `allowLaunch`); a buyer's to spend, never relying on `allowLaunch`.
        const w = yield* payerRules(wallets, caller.principal, p.linkedWalletId, "solana", purpose).pipe(
          Effect.mapError((e) => (e.field === "linkedWalletId" ? launchFailure(e.reason, e.message, { field: `${field}.linkedWalletId`, retryable: false, details: e.details ?? {} }) : e))
        )
        if (w.walletKind === "tee" && !config.teeLaunchBuysEnabled) {
          return yield* launchFailure("validation_failed", "a TEE wallet joins an atomic launch only when TEE launch buys are on (TEE_LAUNCH_BUYS_ENABLED)", {
            field: `${field}.linkedWalletId`,
            retryable: false
          })
        }
        resolved = { kind: w.walletKind === "tee" ? "tee" : "linked", address: w.address, walletId: w.id }
      }
      cache.set(key, resolved)
      return resolved
    })

  // ---- pricing and gating ------------------------------------------------------------------

  const quoteDecimals = (quoteAsset: string) => findQuotePair("solana", quoteAsset)?.decimals ?? 9

  const usdOfRaw = (quoteAsset: string) =>
    Effect.map(
      isPriceAsset(quoteAsset) ? Effect.option(prices.usd(quoteAsset)) : Effect.succeed(Option.none<UsdPrice>()),
      (price) => (raw: bigint): bigint | null => usdMicrosOf(raw, quoteDecimals(quoteAsset), Option.getOrNull(price))
    )

  const usedInWindow = (caller: AtomicCaller, nowMs: number) =>
    caller.txLimit === null
      ? Effect.succeed(0)
      : // The spend gate's window: bookings, this rail's holds and every other rail's (src/services/spend).
        spendWindowUsed(caller.keyId, caller.txLimit.reset, nowMs).pipe(
          Effect.map((used) => (used === null ? null : Number(used))),
          withSql,
          Effect.orElseSucceed(() => null)
        )

  const gate = (caller: AtomicCaller, asset: string, legs: ReadonlyArray<GateLeg>, usdOf: (raw: bigint) => bigint | null, used: number | null, nowMs: number) =>
    gateBundle({
      keyPrefix: caller.keyPrefix,
      asset: asset as SpendAsset,
      spendLimits: caller.spendLimits,
      txLimit: caller.txLimit,
      legs,
      usedUsdMicros: used,
      usdMicrosOf: usdOf,
      nowMs
    })

  const tip = Effect.gen(function* () {
    if (tipAccount !== undefined) return tipAccount
    const answer = yield* Effect.promise(() => config.engine!.tipAccounts())
    if (typeof answer === "string") {
      return yield* launchFailure("launch_failed", `the block engine's tip accounts could not be read (${answer}); nothing was built`, {
        retryable: true,
        details: { reason: "block_engine_unavailable" }
      })
    }
    tipAccount = answer[0]!
    return tipAccount
  })

  return { resolvePayer, usdOfRaw, usedInWindow, gate, tip }
}
