/**
 * Claimability (4.3 rules 2 to 6), the same for the list and the claim: the signer rules, the dust
 * floor, the claim lease, gas; on Hood the claim's calls prepared and paid for.
 */
import { Effect } from "effect"
import { type FeeError, type NotClaimableReason } from "../FeeError.js"
import { PAYER_RESERVE_LAMPORTS, SIGNATURE_FEE_LAMPORTS, SOL_DUST_LAMPORTS, type SolanaFeeRead, TOKEN_ACCOUNT_RENT_LAMPORTS } from "../SolanaCreatorFees.js"
import { WSOL_MINT } from "../../../domain/QuotePairs.js"
import { type HoodFeeRead } from "../HoodCreatorFees.js"
import type { FeeAmount } from "../FeeViews.js"
import type { FeeCaller } from "../CreatorFees.js"
import { type FeeCtx } from "./FeeContext.js"

export const makeFeeAssessment = (ctx: FeeCtx) => {
  const { provider, wallets, solana, hood, clock, locks } = ctx
  /**
   * The signer rules (4.3 rules 1 and 2): the recipient must be the account's embedded wallet on
   * the chain, the key allowed to use it, its delegation on. Undefined: the embedded wallet signs.
   */
  const signerProblem = (caller: FeeCaller, chain: "solana" | "evm", recipient: string) =>
    Effect.gen(function* () {
      const same = (a: string) => (chain === "evm" ? a.toLowerCase() === recipient.toLowerCase() : a === recipient)
      const embedded = (yield* provider.embeddedWallets(caller.accountId)).find((w) => w.chain === chain)
      if (embedded === undefined || !same(embedded.address)) {
        const listed = yield* wallets.list(caller.principal).pipe(Effect.orElseSucceed(() => ({ wallets: [] as ReadonlyArray<{ address: string }> })))
        return listed.wallets.some((w) => same(w.address)) ? "wallet_not_signable" : "not_recipient"
      }
      if (caller.embeddedWallet === "denied") return "embedded_wallet_not_permitted"
      if (embedded.delegation !== "active") return "delegation_off"
      return undefined
    }) as Effect.Effect<NotClaimableReason | undefined, import("@effect/sql/SqlError").SqlError>

  /** Why `fees` cannot be claimed by `caller` now (undefined: it can). */
  const assess = (caller: FeeCaller, fees: SolanaFeeRead, mint: string) =>
    Effect.gen(function* () {
      const signer = yield* signerProblem(caller, "solana", fees.recipient)
      if (signer !== undefined) return signer
      const native = fees.quoteMint === WSOL_MINT
      if (fees.owedRaw === 0n || (native && fees.owedRaw <= SOL_DUST_LAMPORTS) || (yield* locks.held(mint, yield* clock.currentTimeMillis))) return "below_dust"
      const needed = SIGNATURE_FEE_LAMPORTS + (fees.hasQuoteAccount ? 0n : TOKEN_ACCOUNT_RENT_LAMPORTS) + PAYER_RESERVE_LAMPORTS
      if ((yield* solana.lamportsOf(fees.recipient)) < needed) return "insufficient_gas"
      return undefined
    }) as Effect.Effect<NotClaimableReason | undefined, FeeError | import("@effect/sql/SqlError").SqlError>

  const amounts = (f: SolanaFeeRead): ReadonlyArray<FeeAmount> =>
    f.owedRaw === 0n ? [] : [{ symbol: f.quoteSymbol, mint: f.quoteMint, decimals: f.quoteDecimals, amountRaw: f.owedRaw.toString() }]

  /** Hood: why the streamer's fees cannot be claimed now, before gas (undefined: they may be). */
  const assessHood = (caller: FeeCaller, fees: HoodFeeRead, mint: string) =>
    Effect.gen(function* () {
      const signer = yield* signerProblem(caller, "evm", fees.recipient)
      if (signer !== undefined) return signer
      if (!fees.assets.some((a) => hood!.aboveDust(a, fees.gasPrice)) || (yield* locks.held(mint, yield* clock.currentTimeMillis))) return "below_dust"
      return undefined
    })

  /**
   * Hood: the claim's calls prepared (gas estimated, fees filled) and why it cannot run now: the
   * rules before gas, then a failed estimate (`gas_estimate_unavailable`: nothing is sent on a
   * guess) or a balance below the calls' cost (`insufficient_gas`). The list and the claim agree.
   */
  const hoodClaimPlan = (caller: FeeCaller, fees: HoodFeeRead, mint: string) =>
    Effect.gen(function* () {
      const claimable = fees.assets.filter((a) => hood!.aboveDust(a, fees.gasPrice))
      const before = yield* assessHood(caller, fees, mint)
      if (before !== undefined) return { reason: before as NotClaimableReason, claimable, prepared: undefined }
      const wallet = fees.recipient as `0x${string}`
      const prepared = yield* hood!.prepare(wallet, fees.curve, claimable)
      if (prepared === undefined) return { reason: "gas_estimate_unavailable" as const, claimable, prepared }
      const reason = (yield* hood!.balanceOf(wallet)) < hood!.costWei(prepared) ? ("insufficient_gas" as const) : undefined
      return { reason, claimable, prepared }
    })

  const hoodAmounts = (fees: HoodFeeRead): ReadonlyArray<FeeAmount> =>
    fees.assets.filter((a) => a.amountRaw > 0n).map((a) => ({ symbol: a.symbol, mint: a.mint, decimals: a.decimals, amountRaw: a.amountRaw.toString() }))
  return { signerProblem, assess, amounts, assessHood, hoodClaimPlan, hoodAmounts }
}

export type FeeAssessment = ReturnType<typeof makeFeeAssessment>
