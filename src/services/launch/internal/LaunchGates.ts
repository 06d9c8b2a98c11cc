/**
 * The pre-flight gates the launch paths share (launch spec 1, 2.1, 2.3, endpoint rules 2, 4 and
 * 6): holder-pass eligibility for `exclusive`, the image (and banner) fetch, and the self-signed
 * payer rules with the key's per-asset cap. Each refuses with a `LaunchError` and writes nothing.
 */
import { Clock, Effect } from "effect"
import { storageFailure } from "../../../domain/ServiceFailure.js"
import { TierService } from "../../accounts/TierService.js"
import type { ImageServiceShape } from "../../images/ImageService.js"
import { checkSpendCap, type SpendAsset, type SpendLimit } from "../../keys/KeyRules.js"
import type { WalletChain } from "../../wallets/ChainKeys.js"
import type { Principal } from "../../wallets/Principal.js"
import type { WalletServiceShape } from "../../wallets/WalletService.js"
import { fromImage, fromKeyCap, fromPayer, fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
import { type LaunchRequest, needsExclusiveEligibility } from "../request/LaunchRequest.js"

/** A storage failure is logged once and answered retryable `LAUNCH_FAILED` (the same id is safe to retry). */
export const launchStorage = (what: string) =>
  storageFailure(what, () => launchFailure("launch_failed", `${what} failed; retry with the same clientLaunchId`, { retryable: true }))

/** The account's platform-token holdings (held + staked, raw) as the holder pass reads them; undefined when unreadable. */
export const launchHoldings = Effect.map(
  TierService,
  (tiers) => (accountId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) => tiers.holdings(accountId, nowMs)).pipe(
      Effect.map((h) => (h === undefined ? undefined : h.heldRaw + h.stakedRaw))
    )
)

/**
 * `exclusive` (and `test-exclusive`) need the holder pass: `passRaw` platform-token units held or
 * staked. True when checked and passed, undefined when the mode needs no check.
 */
export const exclusiveEligibility = (
  holdings: (accountId: string) => Effect.Effect<bigint | undefined>,
  passRaw: bigint,
  accountId: string,
  request: LaunchRequest
): Effect.Effect<true | undefined, LaunchError> =>
  Effect.gen(function* () {
    if (!needsExclusiveEligibility(request.mode)) return undefined
    const held = yield* holdings(accountId)
    if (held === undefined || held < passRaw) {
      return yield* launchFailure(
        "exclusive_not_eligible",
        held === undefined
          ? "exclusive launches need the holder pass; the account's platform-token holdings could not be read"
          : `exclusive launches need the holder pass: ${passRaw} raw platform-token units held or staked`,
        // Not a field-level validation error (spec 7: only those carry `field`): the account is not eligible.
        { retryable: held === undefined }
      )
    }
    return true as const
  })

/** The request's image and banner, fetched and recognized (this engine's hosted URLs are read, not fetched). */
export const fetchImages = (images: ImageServiceShape, request: LaunchRequest) =>
  Effect.gen(function* () {
    const image = yield* images.resolve({ url: request.image.url, role: "image" })
    const banner = request.banner === null ? null : yield* images.resolve({ url: request.banner.url, role: "banner" })
    return { image, banner }
  }).pipe(Effect.catchTags({ ImageRefused: (e) => Effect.fail(fromImage(e)) }), launchStorage("reading the image"))

/** Who builds a self-signed launch, as the payer gate reads it. */
export interface PayerCaller {
  readonly keyPrefix: string
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  readonly principal: Principal
}

/** The payer rules alone (2.3; checked at build and again at confirm): the wallet, or `VALIDATION_FAILED` on `linkedWalletId`. */
export const payerRules = (wallets: WalletServiceShape, principal: Principal, walletId: string, chain: WalletChain, purpose: "launch" | "spend" = "launch") =>
  wallets.resolvePayer(principal, walletId, chain, purpose).pipe(
    Effect.catchTags({ PayerError: (e) => Effect.fail(fromPayer(e)), WalletError: (e) => Effect.fail(fromWallet(e)) }),
    launchStorage("reading the wallet")
  )

/**
 * The self-signed payer rules (2.3: on this account, active, spend-capable, on the launch chain;
 * TEE: bound to this key, `allowLaunch`), the TEE dev-buy rule (general rule 3) and the key's
 * per-asset cap on `buyAmount` plus `feeRaw` (endpoint rule 6), in that order.
 */
export const selfPayer = (
  wallets: WalletServiceShape,
  caller: PayerCaller,
  walletId: string,
  chain: WalletChain,
  request: LaunchRequest,
  feeRaw: bigint,
  teeLaunchBuysEnabled: boolean
) =>
  Effect.gen(function* () {
    const payer = yield* payerRules(wallets, caller.principal, walletId, chain)
    if (payer.walletKind === "tee" && request.buyAmountRaw > 0n && !teeLaunchBuysEnabled) {
      return yield* launchFailure("validation_failed", "a TEE wallet launches with buyAmount 0 (TEE launch buys are off on this server)", {
        field: "buyAmount",
        retryable: false
      })
    }
    const capped = checkSpendCap(caller.spendLimits, caller.keyPrefix, request.quoteAsset as SpendAsset, request.buyAmountRaw + feeRaw)
    if (capped !== undefined) return yield* fromKeyCap(capped)
    return payer
  })

/** `TIER_REQUIRED` unless the plan includes self-signed launches. */
export const selfSignedTier = (plan: { readonly capabilities: { readonly selfSignedLaunch: boolean } }): Effect.Effect<void, LaunchError> =>
  plan.capabilities.selfSignedLaunch
    ? Effect.void
    : Effect.fail(launchFailure("tier_required", "Self-signed launches need the Pro or Max plan", { retryable: false, details: { requiredPlans: ["pro", "max"] } }))
