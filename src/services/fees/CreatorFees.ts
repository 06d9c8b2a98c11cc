/**
 * Creator fees (spec document 2: 2.5, 3.7, 4.3): the fees the account's launched tokens have
 * earned, as the chain would pay them now, and their claim from the embedded wallet. Tokens are the
 * account's rows of `launched_tokens`, sorted by mint; the recipient is fixed at launch (Solana: the
 * fee vault's creator, `SolanaCreatorFees`; Hood: the fee splitter's streamer, `HoodCreatorFees`,
 * one call per asset with `calls[]`, `outcome` (`FeeClaimOutcome`) and `dust`). A claim needs no idempotency id: it pays only what the chain still
 * owes; one claim per token runs at a time, across processes and restarts (a token lease in
 * PostgreSQL, `FeeClaimLocks`; a simultaneous one answers `below_dust`), and a process runs at most
 * `claimsInFlightMax` claims at once.
 *
 * Claimability (4.3 rules 2 to 6), in order: the recipient must be the account's embedded wallet
 * (another wallet of the account: `wallet_not_signable`; none: `not_recipient`), the key must allow
 * the embedded wallet (`embedded_wallet_not_permitted`), its delegation must be on
 * (`delegation_off`), the amount above the dust floor (`below_dust`), and the wallet must pay the
 * fee and a first token account's rent (`insufficient_gas`); on Hood the claim's calls must be
 * estimated (`gas_estimate_unavailable`) and their cost paid (`insufficient_gas`), checked for the
 * list as for the claim.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import { storageFailure } from "../../domain/ServiceFailure.js"
import type { Principal } from "../wallets/Principal.js"
import { WalletProvider } from "../wallets/WalletProvider.js"
import { WalletService } from "../wallets/WalletService.js"
import { type FeeError, feeError, type NotClaimableReason } from "./FeeError.js"
import { type CallStatus, outcomeOf } from "./FeeClaimOutcome.js"
import {
  makeSolanaCreatorFees,
  PAYER_RESERVE_LAMPORTS,
  SIGNATURE_FEE_LAMPORTS,
  SOL_DUST_LAMPORTS,
  type SolanaFeeRead,
  TOKEN_ACCOUNT_RENT_LAMPORTS
} from "./SolanaCreatorFees.js"
import { WSOL_MINT } from "../../domain/QuotePairs.js"
import { type HoodFeeOptions, type HoodFeeRead, makeHoodCreatorFees } from "./HoodCreatorFees.js"
import { makeFeeClaimLocks } from "./FeeClaimLocks.js"
import type { FeeAmount, FeeClaim, FeeEntry, FeeList, UnreadableFeeEntry } from "./FeeViews.js"

export const FEE_PAGE_DEFAULT = 20
export const FEE_PAGE_MAX = 50

export interface FeeCaller {
  readonly accountId: string
  readonly embeddedWallet: "allowed" | "denied" | null
  readonly principal: Principal
}

export interface CreatorFeesOptions {
  readonly solanaRpcUrl: string
  /** The Hood side; undefined: Hood entries are unreadable and their claims unavailable. */
  readonly hood?: HoodFeeOptions | undefined
  readonly confirmTimeoutMs?: number
  readonly pollIntervalMs?: number
  readonly claimsInFlightMax?: number
  /** How long a claim's token lease lasts when its holder dies (default `FEE_CLAIM_LEASE_MS`). */
  readonly claimLeaseMs?: number
  readonly nowMs?: () => number
}

export interface CreatorFeesShape {
  readonly list: (caller: FeeCaller, page: { readonly limit: number; readonly cursor: string | undefined }) => Effect.Effect<FeeList, FeeError>
  readonly claim: (caller: FeeCaller, mint: string, dryRun: boolean) => Effect.Effect<FeeClaim, FeeError>
}

export class CreatorFees extends Context.Tag("curvestream/CreatorFees")<CreatorFees, CreatorFeesShape>() {}

/** The members every claim answer opens with. */
type ClaimBase = Pick<FeeClaim, "mint" | "chain" | "dryRun" | "recipient" | "warnings" | "dust">

const storage = storageFailure("fees", () => feeError("storage", "Internal error; nothing was recorded"))

export const make = (options: CreatorFeesOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* WalletProvider
    const wallets = yield* WalletService
    const solana = makeSolanaCreatorFees(options.solanaRpcUrl)
    const hood = options.hood === undefined ? undefined : makeHoodCreatorFees(options.hood, provider)
    const clock = yield* Effect.clock
    const nowMs = options.nowMs ?? (() => clock.unsafeCurrentTimeMillis())
    /** This process's running claims (the bound); which tokens are claimed anywhere is `locks`. */
    const inFlight = new Set<string>()
    const locks = makeFeeClaimLocks(sql, options.claimLeaseMs)
    const inFlightMax = options.claimsInFlightMax ?? 1_000

    const tokenOf = (accountId: string, mint: string) =>
      Effect.map(
        // EVM addresses compare case-insensitively (older rows may be lowercase).
        sql<{ chain: string; mint: string }>`
          SELECT chain, mint FROM launched_tokens
          WHERE account_id = ${accountId} AND (mint = ${mint} OR (chain = 'hood' AND lower(mint) = ${mint.toLowerCase()}))`,
        (rows) => rows[0]
      )

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
        if (fees.owedRaw === 0n || (native && fees.owedRaw <= SOL_DUST_LAMPORTS) || (yield* locks.held(mint, nowMs()))) return "below_dust"
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
        if (!fees.assets.some((a) => hood!.aboveDust(a, fees.gasPrice)) || (yield* locks.held(mint, nowMs()))) return "below_dust"
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

    const unreadable = (token: { chain: string; mint: string }): UnreadableFeeEntry => ({ mint: token.mint, chain: token.chain, unreadable: true })

    const hoodAmounts = (fees: HoodFeeRead): ReadonlyArray<FeeAmount> =>
      fees.assets.filter((a) => a.amountRaw > 0n).map((a) => ({ symbol: a.symbol, mint: a.mint, decimals: a.decimals, amountRaw: a.amountRaw.toString() }))

    const hoodEntry = (caller: FeeCaller, token: { chain: string; mint: string }) =>
      Effect.gen(function* () {
        const fees = hood === undefined ? undefined : yield* hood.readFees(token.mint)
        if (fees === undefined) return unreadable(token)
        return {
          ...entryOf(token, fees, (yield* hoodClaimPlan(caller, fees, token.mint)).reason, hoodAmounts(fees)),
          ...(fees.lpPosition !== undefined ? { lpPosition: fees.lpPosition } : {})
        } satisfies FeeEntry as FeeEntry | UnreadableFeeEntry
      }).pipe(Effect.catchTag("FeeError", () => Effect.succeed(unreadable(token))))

    /** A fee entry (2.5). */
    const entryOf = (
      token: { chain: string; mint: string },
      fees: { symbol: string; name: string; recipient: string },
      reason: NotClaimableReason | undefined,
      claimableAmounts: ReadonlyArray<FeeAmount>
    ): FeeEntry => ({
      mint: token.mint,
      chain: token.chain,
      symbol: fees.symbol,
      name: fees.name,
      recipient: fees.recipient,
      claimable: reason === undefined,
      claimableAmounts,
      ...(reason !== undefined ? { reason } : {})
    })

    const entry = (caller: FeeCaller, token: { chain: string; mint: string }) =>
      Effect.gen(function* () {
        if (token.chain !== "solana") return yield* hoodEntry(caller, token)
        const fees = yield* solana.readFees(token.mint)
        if (fees === undefined) return unreadable(token)
        return entryOf(token, fees, yield* assess(caller, fees, token.mint), amounts(fees)) as FeeEntry | UnreadableFeeEntry
      }).pipe(Effect.catchTag("FeeError", () => Effect.succeed(unreadable(token))))

    const list: CreatorFeesShape["list"] = (caller, page) =>
      storage(
        Effect.gen(function* () {
          const limit = Math.min(Math.max(1, page.limit), FEE_PAGE_MAX)
          const after = page.cursor ?? ""
          const rows = yield* sql<{ chain: string; mint: string }>`
            SELECT chain, mint FROM launched_tokens WHERE account_id = ${caller.accountId} AND mint > ${after}
            ORDER BY mint LIMIT ${limit + 1}`
          const shown = rows.slice(0, limit)
          const tokens = yield* Effect.forEach(shown, (t) => entry(caller, t), { concurrency: 8 })
          const isDone = rows.length <= limit
          return { tokens, continueCursor: isDone ? null : (shown.at(-1)?.mint ?? null), isDone } satisfies FeeList
        }).pipe(Effect.withSpan("CreatorFees.list"))
      )

    /**
     * Runs `claimOf` holding the token's lease and one of this process's in-flight places; a
     * claim of the token running anywhere (or no place left) answers `below_dust`.
     */
    const exclusively = <A, E, R>(mint: string, claimOf: Effect.Effect<A, E, R>) =>
      Effect.gen(function* () {
        if (inFlight.size >= inFlightMax) return yield* feeError("not_claimable", "Too many claims in flight; try again", { details: { reason: "below_dust" } })
        const holder = yield* locks.acquire(mint, nowMs())
        if (holder === undefined) return yield* feeError("not_claimable", "A claim of this token is running", { details: { reason: "below_dust" } })
        inFlight.add(holder)
        return yield* Effect.ensuring(
          claimOf,
          Effect.zipRight(Effect.sync(() => inFlight.delete(holder)), locks.release(mint, holder).pipe(Effect.catchAll((e) => Effect.logWarning("a fee claim lease was not given back; it expires", e))))
        )
      })

    const claim: CreatorFeesShape["claim"] = (caller, requested, dryRun) =>
      storage(
        Effect.gen(function* () {
          const token = yield* tokenOf(caller.accountId, requested)
          if (token === undefined) return yield* feeError("token_not_found", `No token launched by this account has mint ${requested.slice(0, 64)}`)
          let mint = requested
          if (token.chain !== "solana") return yield* claimHood(caller, token.mint, dryRun)
          mint = token.mint
          const fees = yield* solana.readFees(mint)
          if (fees === undefined) return yield* feeError("chain_unavailable", `the fee vault of ${mint} is not readable`, { retryable: true })
          const reason = yield* assess(caller, fees, mint)
          const base: ClaimBase = { mint, chain: "solana", dryRun, recipient: fees.recipient, warnings: [] }
          if (dryRun) {
            return {
              ...base,
              claimable: reason === undefined,
              ...(reason !== undefined ? { reason } : {}),
              claimed: amounts(fees).map((a) => ({ ...a, txHash: null })),
              remaining: []
            } satisfies FeeClaim
          }
          if (reason !== undefined) {
            return yield* feeError("not_claimable", `The fees of ${mint} cannot be claimed now: ${reason}`, { details: { reason } })
          }
          return yield* exclusively(mint, send(caller, mint, fees, base))
        }).pipe(Effect.withSpan("CreatorFees.claim"))
      )

    const send = (caller: FeeCaller, mint: string, fees: SolanaFeeRead, base: ClaimBase) =>
      Effect.gen(function* () {
        const built = yield* solana.buildClaim(mint, fees)
        const signed = yield* provider.signWithEmbedded(caller.accountId, "solana", built.wire).pipe(
          Effect.mapError((e) =>
            feeError("claim_failed", `signing failed: ${e.message}`, { retryable: true, details: { stage: "not_broadcast" } })
          )
        )
        const sent = yield* Effect.either(solana.watch.send(signed.signedTransaction))
        const failed = (stage: "not_broadcast" | "unconfirmed" | "reverted", message: string) =>
          feeError("claim_failed", message, { retryable: stage !== "reverted", details: { stage, signature: signed.signature } })
        if (sent._tag === "Left") return yield* failed("not_broadcast", `the node refused the claim: ${sent.left.message}`)
        const seen = yield* solana.watch.settle(signed.signature, built.lastValidBlockHeight, nowMs() + (options.confirmTimeoutMs ?? 30_000), options.pollIntervalMs ?? 250, nowMs)
        const status: CallStatus = seen.outcome === "landed" ? "confirmed" : seen.outcome === "reverted" ? "reverted" : seen.outcome === "never_lands" ? "not_sent" : "submitted_unknown"
        if (status === "reverted") return yield* failed("reverted", `the claim failed on chain: ${seen.error ?? ""}`)
        if (status !== "confirmed") return yield* failed("unconfirmed", "the claim was not confirmed in time; read fees before retrying")
        // What the program paid (its CreatorFeeClaimed event): a trade between the read and the claim adds to it.
        const paid = yield* Effect.either(solana.claimedAmount(signed.signature))
        const paidRaw = paid._tag === "Right" && paid.right !== undefined ? paid.right : fees.owedRaw
        const after = yield* Effect.either(solana.readFees(mint))
        return {
          ...base,
          claimed: amounts({ ...fees, owedRaw: paidRaw }).map((a) => ({ ...a, txHash: signed.signature })),
          remaining: after._tag === "Right" && after.right !== undefined ? amounts(after.right) : [],
          outcome: outcomeOf([{ status }])
        } satisfies FeeClaim
      })

    const claimHood = (caller: FeeCaller, mint: string, dryRun: boolean) =>
      Effect.gen(function* () {
        if (hood === undefined) return yield* feeError("chain_unavailable", "Hood is not configured on this server", { retryable: false })
        const fees = yield* hood.readFees(mint)
        if (fees === undefined) return yield* feeError("chain_unavailable", `the fee splitter has no curve for ${mint}`, { retryable: true })
        const { reason, claimable, prepared } = yield* hoodClaimPlan(caller, fees, mint)
        const dust = fees.assets.filter((a) => a.amountRaw > 0n && !hood.aboveDust(a, fees.gasPrice)).map((a) => ({ symbol: a.symbol, mint: a.mint, decimals: a.decimals, amountRaw: a.amountRaw.toString() }))
        const wallet = fees.recipient as `0x${string}`
        const notSent = claimable.map((a) => ({ operation: "claim", target: options.hood!.feeSplitter, txHash: null, status: "not_sent" as const, asset: a }))
        const base: ClaimBase = { mint, chain: "hood", dryRun, recipient: fees.recipient, warnings: [], dust }
        const callsOut = (calls: ReadonlyArray<{ operation: string; target: string; txHash: string | null; status: CallStatus }>) =>
          calls.map(({ operation, target, txHash, status }) => ({ operation, target, txHash, status }))
        if (dryRun) {
          return {
            ...base,
            claimable: reason === undefined,
            ...(reason !== undefined ? { reason } : {}),
            claimed: claimable.map((a) => ({ symbol: a.symbol, mint: a.mint, decimals: a.decimals, amountRaw: a.amountRaw.toString(), txHash: null })),
            remaining: [],
            calls: callsOut(notSent),
            outcome: "not_started" as const
          }
        }
        if (reason !== undefined) return yield* feeError("not_claimable", `The fees of ${mint} cannot be claimed now: ${reason}`, { details: { reason } })
        if (yield* hood.unsettled(wallet)) {
          return { ...base, warnings: ["an earlier transaction of the wallet is unsettled; nothing was sent"], claimed: [], remaining: hoodAmounts(fees), calls: callsOut(notSent), outcome: "not_started" as const }
        }
        const calls = yield* exclusively(mint, hood.send(caller.accountId, prepared!))
        const after = yield* Effect.either(hood.readFees(mint))
        return {
          ...base,
          claimed: calls
            .filter((c) => c.status === "confirmed")
            .map((c) => ({ symbol: c.asset.symbol, mint: c.asset.mint, decimals: c.asset.decimals, amountRaw: (c.paidRaw ?? c.asset.amountRaw).toString(), txHash: c.txHash })),
          remaining: after._tag === "Right" && after.right !== undefined ? hoodAmounts(after.right) : [],
          calls: callsOut(calls),
          outcome: outcomeOf(calls)
        }
      })

    return { list, claim } satisfies CreatorFeesShape
  })

export const layer = (options: CreatorFeesOptions): Layer.Layer<CreatorFees, never, SqlClient.SqlClient | WalletProvider | WalletService> =>
  Layer.effect(CreatorFees, make(options))
