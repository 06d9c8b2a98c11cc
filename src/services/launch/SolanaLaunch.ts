/**
 * The chain side of a Solana headless launch: size (the dry run), then assemble, simulate, sign
 * through the wallet provider, send and confirm one real launch transaction, and, after a crash or
 * a confirmation timeout, find out from the chain what became of an attempt (`recover`). No HTTP,
 * no ledger: the caller owns the row, and gets the moment to record the attempt (`beforeSend`).
 *
 * Invariants:
 * - Order: size (1,232 bytes) → simulate → sign (the provider re-resolves the delegation and
 *   applies the wallet's policy) → `beforeSend` → send → confirm. A refusal before `beforeSend`
 *   sent nothing; `beforeSend` failing sends nothing.
 * - The attempt's mint is derived from (account, clientLaunchId, attempt) (`LaunchMint.ts`), and
 *   `beforeSend` receives the signature and the blockhash's last valid block height before the
 *   transaction leaves: with those recorded, `recover` always decides landed / reverted / never
 *   lands / still pending from the chain, and no attempt can create two curves.
 * - Deadlines: building (blockhash, simulation, signing) `buildTimeoutMs`; confirming (status
 *   polls every `pollIntervalMs`, then the landed transaction's read) `confirmTimeoutMs`. A
 *   confirmation deadline is not a failure: `confirmation_timeout` is the only non-definitive
 *   reason (`SolanaLaunchError.definitive`).
 * - Confirmation is at `confirmed`. A signature that is not found once the block height passed
 *   the blockhash's last valid height can never land (`expired`).
 */
import {
  type Address,
  address,
  type Base64EncodedWireTransaction,
  createNoopSigner,
  createSolanaRpc,
  getBase64Decoder,
  getBase64Encoder,
  getTransactionEncoder,
  isSolanaError,
  partiallySignTransactionMessageWithSigners,
  signature as asSignature,
  type TransactionSigner
} from "@solana/kit"
import { Context, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import { findEconomics } from "../../domain/Economics.js"
import { findQuotePair } from "../../domain/QuotePairs.js"
import { awaitUntil } from "../../platform/AwaitUntil.js"
import { decodeCurve } from "../../chain/solana/program/accounts/Curve.js"
import { curveEventsFromLogs } from "../../chain/solana/program/Events.js"
import { SVC_CURVE_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../chain/solana/program/ProgramIds.js"
import { findCurveAddresses } from "../../chain/solana/client/CurveInstructions.js"
import type { BlockhashLifetime } from "../../chain/solana/client/Transactions.js"
import { classifySimulationError, transactionErrorText } from "../../chain/solana/launch/LaunchFailure.js"
import { type AssembledBundle, assembleAtomicBundle } from "../../chain/solana/launch/AtomicBundle.js"
import { type LaunchAttemptId, LAUNCH_MINT_SECRET_BYTES_MIN, launchMintSigner } from "../../chain/solana/launch/LaunchMint.js"
import {
  type AssembledLaunch,
  assembleLaunchTransaction,
  type FeePlan,
  isLaunchPlan,
  type LaunchPlan,
  type LaunchSize,
  type LaunchTerms,
  type LaunchTransactionInput,
  planLaunch,
  sizeLaunch,
  SOLANA_TRANSACTION_BYTES_MAX
} from "../../chain/solana/launch/LaunchTransaction.js"
import { WalletProvider } from "../wallets/WalletProvider.js"
import type { LaunchRequest } from "./request/LaunchRequest.js"
import { fromWalletProvider, launchError, type SolanaLaunchError } from "./SolanaLaunchError.js"

type SentFields = { readonly signature?: string; readonly mint?: string }

export interface SolanaLaunchOptions {
  /** Solana JSON-RPC (`SOLANA_RPC_URL`, or the embedded localnet's). */
  readonly rpcUrl: string
  /** Secret the launch mints are derived under (at least 32 bytes; never changes for a deployment). */
  readonly mintSecret: Redacted.Redacted<Uint8Array>
  /** Receives the platform fee (the svc-curve config's treasury). */
  readonly treasury: string
  /** Blockhash + simulation + signing (default 10 s). */
  readonly buildTimeoutMs?: number
  /** Status polls until `confirmed` and the landed transaction's read (default 60 s). */
  readonly confirmTimeoutMs?: number
  /** Between status polls (default 250 ms). */
  readonly pollIntervalMs?: number
  /** Priority fee; 0 or unset sends no unit-price instruction. */
  readonly computeUnitPriceMicroLamports?: bigint
}

export const SolanaLaunchDefaults = { buildTimeoutMs: 10_000, confirmTimeoutMs: 60_000, pollIntervalMs: 250 } as const

/** What the launch is: the decoded request and what the gates resolved for it. */
export interface SolanaLaunchSpec {
  /** A decoded request on `chain: "solana"`. */
  readonly request: LaunchRequest
  /** The key owner's embedded Solana wallet (`WalletProvider.resolveDelegation`). */
  readonly payer: string
  /** The plan's fee (spec document 2, 2.2), applied to the dev buy. */
  readonly platformFeeBps: bigint
  /** The metadata URI written on chain (at most 200 UTF-8 bytes). */
  readonly metadataUri: string
}

export interface SolanaLaunchInput extends SolanaLaunchSpec {
  readonly accountId: string
  /** The ledger attempt (from 1); with the account and id it names the mint. */
  readonly attempt: number
}

/** What the caller records before the transaction leaves (spec 3.1 `confirming`). */
export interface LaunchSending {
  readonly mint: string
  readonly curve: string
  readonly signature: string
  readonly lastValidBlockHeight: bigint
}

export interface SolanaLaunched {
  readonly mint: string
  readonly curve: string
  readonly signature: string
  readonly slot: bigint
  /** The dev buy as executed (the Trade event of the launch transaction). Null without one. */
  readonly devBuy: { readonly amountInRaw: bigint; readonly filledRaw: bigint; readonly minAmountOutRaw: bigint } | null
  /** The platform fee leg as sent. Null without one. */
  readonly fee: FeePlan | null
}

/** The dry run's figures. Sizing uses a stand-in mint (every address is 32 bytes): the attempt is not named yet. */
export interface DryRunSize {
  readonly size: LaunchSize
  readonly plan: LaunchPlan
}

export type Recovery =
  | { readonly _tag: "Landed"; readonly launched: SolanaLaunched }
  /** Landed and failed: no curve; definitive. */
  | { readonly _tag: "Reverted"; readonly signature: string; readonly chainError: string }
  /** Not on chain, and its blockhash expired: it never will be. Definitive. */
  | { readonly _tag: "NeverLands" }
  /** Not on chain yet, blockhash still valid: ask again later. */
  | { readonly _tag: "Pending" }

export interface RecoverInput extends SolanaLaunchInput {
  /** As recorded by `beforeSend`. */
  readonly signature: string
  readonly lastValidBlockHeight: bigint
}

/** A launch transaction built for a payer that signs it itself (self-signed launches, spec 2.3). */
export interface PayerSignedBuild {
  /** Wire bytes, base64: the mint's signature in place, the payer's slot empty. */
  readonly transactionBase64: string
  readonly mint: string
  readonly curve: string
  /** The blockhash's last valid block height: past it, the transaction can never land. */
  readonly lastValidBlockHeight: bigint
  readonly txBytes: number
  /** The platform fee leg of the dev buy; null without one. */
  readonly fee: FeePlan | null
  /** Blocks between the node's height at build and `lastValidBlockHeight` (turns into `expiresAt`). */
  readonly blocksLeft: bigint
}

/** What the chain shows about a self-signed build's mint (spec 3.3's inputs). */
export type MintView =
  | { readonly _tag: "Unreadable" }
  | { readonly _tag: "Read"; readonly mintAccountExists: boolean; readonly blockHeight: bigint; readonly caughtUp: boolean }

/** What a payer-reported signature shows on chain for an attempt (self-signed confirm, spec 3.2). */
export type SignedLaunch =
  /** Not found at `confirmed`. */
  | { readonly _tag: "NotFound" }
  /** This attempt's transaction (signed by the payer and the attempt's mint) landed and failed. */
  | { readonly _tag: "Failed"; readonly chainError: string }
  /** Landed, but the payer is not among its signers. */
  | { readonly _tag: "SignerMismatch" }
  /** Landed, signed by the payer, but not by this attempt's mint: another transaction. */
  | { readonly _tag: "NotThisLaunch" }
  /** This attempt's launch, landed: the curve exists, created by the payer. */
  | { readonly _tag: "Landed"; readonly launched: SolanaLaunched }

/** One first buy of an atomic bundle, priced (`PricingLadder.ts`), for its payer. */
export interface AtomicLegSpec {
  readonly buyer: string
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly platformFeeRaw: bigint
}

/** An atomic bundle's transactions on one fresh blockhash (launch spec 2.4, 4 rules 8 and 9). */
export interface AtomicBuilt {
  readonly mint: string
  readonly bundle: AssembledBundle
  readonly lastValidBlockHeight: bigint
  /** Blocks between the node's height at build and `lastValidBlockHeight`. */
  readonly blocksLeft: bigint
}

export interface SolanaLaunchShape {
  /** The dry run's `size` (spec 2.6): the real transaction assembled and serialized; nothing read or written. */
  readonly size: (spec: SolanaLaunchSpec & { readonly accountId: string }) => Effect.Effect<DryRunSize, SolanaLaunchError>
  /** Runs one attempt to a confirmed launch, or fails with the reason (see `SolanaLaunchError`). */
  readonly launch: <E>(
    input: SolanaLaunchInput,
    beforeSend: (sending: LaunchSending) => Effect.Effect<void, E>
  ) => Effect.Effect<SolanaLaunched, SolanaLaunchError | E>
  /** What the chain shows for a recorded attempt (after a crash or a confirmation timeout). */
  readonly recover: (input: RecoverInput) => Effect.Effect<Recovery, SolanaLaunchError>
  /**
   * The attempt's launch transaction for `payer` to sign and send itself: sized, on a fresh
   * blockhash, signed by the attempt's mint only. Nothing is simulated, signed for the payer or sent.
   */
  readonly buildForPayer: (input: SolanaLaunchInput) => Effect.Effect<PayerSignedBuild, SolanaLaunchError>
  /** The mint an attempt creates (derived from account, id and attempt). */
  readonly attemptMint: (accountId: string, clientLaunchId: string, attempt: number) => Effect.Effect<string>
  /** 3.3's chain read: is there an account at `mint`, the block height, and whether the node is caught up. Never fails. */
  readonly mintView: (mint: string) => Effect.Effect<MintView>
  /** 3.2's verification of the payer's reported signature for the attempt (`input.payer` is the payer). */
  readonly verifySigned: (input: SolanaLaunchInput, signature: string) => Effect.Effect<SignedLaunch, SolanaLaunchError>
  /**
   * The atomic bundle of an attempt: the launch (no dev buy, the tip paid by its payer, sized, signed
   * by the attempt's mint only) and one transaction per leg, all on one fresh blockhash. Nothing is
   * signed for a payer or sent.
   */
  readonly buildAtomic: (
    input: SolanaLaunchInput,
    legs: ReadonlyArray<AtomicLegSpec>,
    tip: { readonly account: string; readonly lamports: bigint }
  ) => Effect.Effect<AtomicBuilt, SolanaLaunchError>
  /** The embedded wallet's signature on a built wire transaction (delegation and policy checked afresh). */
  readonly signEmbedded: (accountId: string, wireBase64: string) => Effect.Effect<string, SolanaLaunchError>
}

export class SolanaLaunch extends Context.Tag("curvestream/SolanaLaunch")<SolanaLaunch, SolanaLaunchShape>() {}

/** `TRANSACTION_TOO_LARGE` for a size that does not fit, with the figures the spec's error carries. */
export const oversizeRefusal = (size: LaunchSize): SolanaLaunchError =>
  launchError(
    "transaction_too_large",
    `the launch transaction is ${size.txBytes} bytes, ${size.overBy} over the ${size.limit}-byte limit; a name of at most ${size.maxNameBytes} bytes fits`,
    { txBytes: size.txBytes, overBy: size.overBy, maxNameBytes: size.maxNameBytes }
  )

/** The curve terms a decoded Solana request launches with (its pair's matrix); undefined off Solana. */
export const launchTermsOf = (r: LaunchRequest): LaunchTerms | undefined => {
  const economics = findEconomics("solana", r.quoteAsset)
  if (r.chain !== "solana" || economics === undefined) return undefined
  return {
    virtualQuoteRaw: r.curve.virtualQuoteRaw,
    thresholdRaw: r.curve.thresholdRaw,
    supplyRaw: economics.tokenSupplyRaw,
    stakerAllocationBps: r.stakerAllocationBps,
    curveFeeBps: economics.curveFeeBps,
    mode: r.mode === "test-exclusive" ? "exclusive" : r.mode
  }
}

/**
 * The launch transaction's input for a decoded request (pure): the request's curve on its pair's
 * matrix terms, name, symbol, metadata and dev buy, the plan's fee to `treasury`, paid and signed
 * by `payer`. Undefined when the request is not on a Solana pair.
 */
export const launchTransactionInput = (
  spec: SolanaLaunchSpec,
  payer: TransactionSigner,
  mint: TransactionSigner,
  treasury: Address,
  lifetime: BlockhashLifetime,
  computeUnitPriceMicroLamports?: bigint
): LaunchTransactionInput | undefined => {
  const r = spec.request
  const pair = findQuotePair("solana", r.quoteAsset)
  const terms = launchTermsOf(r)
  if (pair === undefined || terms === undefined) return undefined
  return {
    payer,
    mint,
    quoteMint: address(pair.address),
    terms,
    name: r.name,
    symbol: r.symbol,
    metadataUri: spec.metadataUri,
    devBuyRaw: r.buyAmountRaw,
    platformFee: { bps: spec.platformFeeBps, treasury },
    lifetime,
    computeUnitPriceMicroLamports
  }
}

/** Blocks until the blockhash expires, as of block `height` (0 once it has). */
const blocksLeftOf = (lifetime: BlockhashLifetime, height: bigint): bigint =>
  lifetime.lastValidBlockHeight > height ? lifetime.lastValidBlockHeight - height : 0n

/** A stand-in lifetime for sizing: a blockhash is 32 bytes whatever its value. */
const SIZING_LIFETIME: BlockhashLifetime = { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 0n }

/** The attempt number the dry run derives its stand-in mint with (ledger attempts start at 1). */
const DRY_RUN_ATTEMPT = 0


/** A JSON-RPC error answered by the node (codes -32768..-32000), as opposed to a transport failure. */
const nodeAnswered = (e: unknown): boolean => {
  if (!isSolanaError(e)) return false
  const code = e.context.__code as number
  return code >= -32768 && code <= -32000
}

const positive = (name: string, v: number) =>
  Number.isSafeInteger(v) && v > 0 ? Effect.succeed(v) : Effect.dieMessage(`SolanaLaunch: ${name} must be a positive whole number of ms`)

export const make = (options: SolanaLaunchOptions) =>
  Effect.gen(function* () {
    const provider = yield* WalletProvider
    const rpc = createSolanaRpc(options.rpcUrl)
    const buildTimeoutMs = yield* positive("buildTimeoutMs", options.buildTimeoutMs ?? SolanaLaunchDefaults.buildTimeoutMs)
    const confirmTimeoutMs = yield* positive("confirmTimeoutMs", options.confirmTimeoutMs ?? SolanaLaunchDefaults.confirmTimeoutMs)
    const pollIntervalMs = yield* positive("pollIntervalMs", options.pollIntervalMs ?? SolanaLaunchDefaults.pollIntervalMs)
    /** The build deadline: `build_timeout` naming what was being built. */
    const timedBuild =
      (what: string, after = "") =>
      <A, E, R>(build: Effect.Effect<A, E, R>) =>
        build.pipe(
          Effect.timeoutFail({
            duration: Duration.millis(buildTimeoutMs),
            onTimeout: () => launchError("build_timeout", `building ${what} took over ${buildTimeoutMs} ms${after}`)
          })
        )
    const secret = Redacted.value(options.mintSecret)
    if (secret.byteLength < LAUNCH_MINT_SECRET_BYTES_MIN) {
      return yield* Effect.dieMessage(`SolanaLaunch: the mint secret needs at least ${LAUNCH_MINT_SECRET_BYTES_MIN} bytes`)
    }
    const treasury = address(options.treasury)
    const base64 = getBase64Decoder()
    const fromBase64 = getBase64Encoder()
    const encoder = getTransactionEncoder()

    /** One RPC call; a failure is `chain_unavailable` (interruption aborts the request). */
    const read = <A>(what: string, call: (signal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({ try: call, catch: (e) => launchError("chain_unavailable", `${what} failed: ${String(e)}`) })

    const transactionInput = (spec: SolanaLaunchSpec, mint: LaunchTransactionInput["mint"], lifetime: BlockhashLifetime) =>
      Effect.gen(function* () {
        const r = spec.request
        const input = launchTransactionInput(spec, createNoopSigner(address(spec.payer)), mint, treasury, lifetime, options.computeUnitPriceMicroLamports)
        if (input === undefined) return yield* Effect.dieMessage(`SolanaLaunch: not a Solana request (${r.chain}/${r.quoteAsset})`)
        const plan = planLaunch(input.terms, input.devBuyRaw, input.platformFee)
        if (!isLaunchPlan(plan)) {
          return yield* launchError("dev_buy_unfillable", `a dev buy of ${r.buyAmountRaw} fills nothing on this curve (${plan.reason})`)
        }
        return { input, plan }
      })

    const checkedSize = (input: LaunchTransactionInput, plan: LaunchPlan) =>
      Effect.flatMap(
        Effect.promise(() => sizeLaunch(input, plan, SOLANA_TRANSACTION_BYTES_MAX)),
        (size) => (size.fits ? Effect.succeed(size) : Effect.fail(oversizeRefusal(size)))
      )

    const size: SolanaLaunchShape["size"] = (spec) =>
      Effect.gen(function* () {
        const mint = yield* Effect.promise(() =>
          launchMintSigner(secret, { accountId: spec.accountId, clientLaunchId: spec.request.clientLaunchId, attempt: DRY_RUN_ATTEMPT })
        )
        const { input, plan } = yield* transactionInput(spec, mint, SIZING_LIFETIME)
        return { size: yield* checkedSize(input, plan), plan }
      }).pipe(Effect.withSpan("SolanaLaunch.size"))

    /** Simulation (or preflight) failed with `err`: which reason. */
    const simulationFailure = (
      err: unknown,
      assembled: AssembledLaunch,
      quoteMint: Address,
      payer: Address,
      logs: ReadonlyArray<string>,
      sent: SentFields
    ) =>
      Effect.gen(function* () {
        const chainError = transactionErrorText(err)
        const verdict = classifySimulationError(err, assembled.roles, quoteMint === WSOL_MINT_ADDRESS ? "native" : "spl")
        const insufficient = launchError(
          "insufficient_owner_balance",
          `${payer} cannot cover the network fee, rent, dev buy and platform fee (${chainError})`,
          { chainError, ...sent }
        )
        if (verdict === "insufficient_owner_balance") return insufficient
        if (verdict === "quote_account_suspect") {
          // Confirm from the chain: no token account of the quote asset is a zero balance.
          const account = yield* read("getAccountInfo", (signal) =>
            rpc.getAccountInfo(assembled.payerQuoteAccount, { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })
          )
          if (account.value === null) return insufficient
        }
        return launchError("simulation_failed", `the launch simulation failed: ${chainError}${logs.length > 0 ? `\n${logs.slice(-5).join("\n")}` : ""}`, {
          chainError,
          ...sent
        })
      })

    const simulate = (wire: Uint8Array, assembled: AssembledLaunch, quoteMint: Address, payer: Address, sent: SentFields = {}) =>
      Effect.gen(function* () {
        const sim = yield* read("simulateTransaction", (signal) =>
          rpc
            .simulateTransaction(base64.decode(wire) as Base64EncodedWireTransaction, {
              encoding: "base64",
              sigVerify: false,
              commitment: "confirmed"
            })
            .send({ abortSignal: signal })
        )
        if (sim.value.err !== null) {
          return yield* Effect.flip(simulationFailure(sim.value.err, assembled, quoteMint, payer, sim.value.logs ?? [], sent))
        }
      })

    /** The landed transaction's slot and its dev buy's fill (the Trade event of this mint). */
    const readLanded = (signature: string, mint: string, curve: string, payer: string, plan: LaunchPlan) =>
      Effect.gen(function* () {
        const tx = yield* read("getTransaction", (signal) =>
          rpc
            .getTransaction(asSignature(signature), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" })
            .send({ abortSignal: signal })
        )
        if (tx === null) return undefined
        if (plan.devBuy === null) return { mint, curve, signature, slot: tx.slot, devBuy: null, fee: plan.fee } satisfies SolanaLaunched
        // The fill: the buy's Trade event; failing that (logs cut short), the payer's token account of
        // the mint after the transaction, which this transaction created, so it holds exactly the fill.
        const trade = curveEventsFromLogs(tx.meta?.logMessages ?? []).find(
          (e) => e.event.kind === "Trade" && e.event.mint === mint && e.event.trader === payer && e.event.side === "buy"
        )
        const held = tx.meta?.postTokenBalances?.find((b) => b.mint === mint && b.owner === payer)?.uiTokenAmount.amount
        const filledRaw = trade !== undefined && trade.event.kind === "Trade" ? trade.event.amountOutRaw : held === undefined ? undefined : BigInt(held)
        if (filledRaw === undefined) return yield* launchError("chain_unavailable", `the fill of the landed launch ${signature} is not readable`)
        const devBuy = { amountInRaw: plan.devBuy.amountInRaw, filledRaw, minAmountOutRaw: plan.devBuy.minAmountOutRaw }
        return { mint, curve, signature, slot: tx.slot, devBuy, fee: plan.fee } satisfies SolanaLaunched
      })

    const statusOf = (signature: string, history: boolean) =>
      read("getSignatureStatuses", (signal) =>
        rpc.getSignatureStatuses([asSignature(signature)], { searchTransactionHistory: history }).send({ abortSignal: signal })
      ).pipe(Effect.map((r) => r.value[0] ?? null))

    const blockHeight = read("getBlockHeight", (signal) => rpc.getBlockHeight({ commitment: "confirmed" }).send({ abortSignal: signal }))

    type Observed =
      | { readonly _tag: "Landed" }
      | { readonly _tag: "Reverted"; readonly chainError: string }
      | { readonly _tag: "NeverLands" }
      | { readonly _tag: "Pending" }

    /** One look at a sent transaction: its status at `confirmed`, else whether its blockhash expired. */
    const observe = (signature: string, lastValidBlockHeight: bigint, history: boolean) =>
      Effect.gen(function* () {
        const status = yield* statusOf(signature, history)
        if (status !== null && (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized")) {
          return (status.err === null ? { _tag: "Landed" } : { _tag: "Reverted", chainError: transactionErrorText(status.err) }) satisfies Observed
        }
        if (status !== null) return { _tag: "Pending" } satisfies Observed
        if ((yield* blockHeight) <= lastValidBlockHeight) return { _tag: "Pending" } satisfies Observed
        // Expired: one more look, in case it landed between the two reads.
        const again = yield* statusOf(signature, history)
        return (again === null ? { _tag: "NeverLands" } : { _tag: "Pending" }) satisfies Observed
      })

    const confirm = (sending: LaunchSending, payer: string, plan: LaunchPlan) => {
      /** One look: the landed launch, or none yet (a failed read is retried like a pending status, within the deadline). */
      const look = Effect.gen(function* () {
        const seen = yield* Effect.either(observe(sending.signature, sending.lastValidBlockHeight, false))
        if (Either.isRight(seen)) {
          const o = seen.right
          if (o._tag === "Reverted") {
            return yield* launchError("reverted", `the launch transaction failed on chain: ${o.chainError}`, {
              signature: sending.signature,
              mint: sending.mint,
              chainError: o.chainError
            })
          }
          if (o._tag === "NeverLands") {
            return yield* launchError("expired", "the launch transaction's blockhash expired before it landed; it never will", {
              signature: sending.signature,
              mint: sending.mint
            })
          }
          if (o._tag === "Landed") {
            const landed = yield* Effect.either(readLanded(sending.signature, sending.mint, sending.curve, payer, plan))
            if (Either.isRight(landed) && landed.right !== undefined) return Option.some(landed.right)
          }
        }
        return Option.none()
      })
      return awaitUntil(look, Option.isSome, { what: "the launch's confirmation", timeoutMs: confirmTimeoutMs, intervalMs: pollIntervalMs, interruptPoll: true }).pipe(
        Effect.map((landed) => landed.value),
        Effect.catchTag("AwaitTimedOut", () =>
          Effect.fail(
            launchError("confirmation_timeout", `no confirmation within ${confirmTimeoutMs} ms; the launch may still land`, {
              signature: sending.signature,
              mint: sending.mint
            })
          )
        )
      )
    }

    const launch: SolanaLaunchShape["launch"] = <E>(input: SolanaLaunchInput, beforeSend: (sending: LaunchSending) => Effect.Effect<void, E>) =>
      Effect.gen(function* () {
        const attemptId: LaunchAttemptId = { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt }
        const mint = yield* Effect.promise(() => launchMintSigner(secret, attemptId))
        const payer = address(input.payer)
        const built = yield* Effect.gen(function* () {
          // The size first: an oversized request reads nothing from the chain.
          const sizing = yield* transactionInput(input, mint, SIZING_LIFETIME)
          yield* checkedSize(sizing.input, sizing.plan)
          const latest = yield* read("getLatestBlockhash", (signal) =>
            rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal })
          )
          const lifetime = { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight }
          const { input: txInput, plan } = yield* transactionInput(input, mint, lifetime)
          const assembled = yield* Effect.promise(() => assembleLaunchTransaction(txInput, plan))
          const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(assembled.message))
          const unsigned = new Uint8Array(encoder.encode(partial))
          yield* simulate(unsigned, assembled, txInput.quoteMint, payer)
          const signed = yield* provider.signWithEmbedded(input.accountId, "solana", unsigned).pipe(
            Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromWalletProvider(e) : launchError("signing_failed", `wallet provider: ${e.message}`)))
          )
          return { assembled, plan, lifetime, signed, quoteMint: txInput.quoteMint }
        }).pipe(timedBuild("the launch", "; nothing was sent"))
        const sending: LaunchSending = {
          mint: mint.address,
          curve: built.assembled.curve,
          signature: built.signed.signature,
          lastValidBlockHeight: built.lifetime.lastValidBlockHeight
        }
        yield* beforeSend(sending)
        const sent = yield* Effect.either(
          Effect.tryPromise({
            try: (signal) =>
              rpc
                .sendTransaction(built.signed.signedTransaction as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" })
                .send({ abortSignal: signal }),
            catch: (e) => e
          })
        )
        if (Either.isLeft(sent) && nodeAnswered(sent.left)) {
          // Refused at preflight or by the node: nothing is on its way. Simulate the signed bytes for the reason.
          const signedWire = new Uint8Array(fromBase64.encode(built.signed.signedTransaction))
          const refused = launchError("send_refused", `the node refused the launch transaction: ${String(sent.left)}`, {
            signature: sending.signature,
            mint: sending.mint
          })
          // A simulation that now passes, or cannot run, leaves the node's own refusal as the reason.
          const why = yield* Effect.match(
            simulate(signedWire, built.assembled, built.quoteMint, payer, { signature: sending.signature, mint: sending.mint }),
            { onSuccess: () => refused, onFailure: (e) => (e.reason === "chain_unavailable" ? refused : e) }
          )
          return yield* Effect.fail(why)
        }
        // Sent, or the answer was lost in transport: either way the chain decides.
        return yield* confirm(sending, input.payer, built.plan)
      }).pipe(Effect.withSpan("SolanaLaunch.launch"))

    const recover: SolanaLaunchShape["recover"] = (input) =>
      Effect.gen(function* () {
        const o = yield* observe(input.signature, input.lastValidBlockHeight, true)
        if (o._tag === "Reverted") return { _tag: "Reverted", signature: input.signature, chainError: o.chainError } satisfies Recovery
        if (o._tag === "NeverLands") return { _tag: "NeverLands" } satisfies Recovery
        if (o._tag === "Pending") return { _tag: "Pending" } satisfies Recovery
        // Landed: this attempt's curve must exist, created by the payer; then the transaction's fill.
        const mint = yield* Effect.promise(() =>
          launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })
        )
        const { plan } = yield* transactionInput(input, mint, SIZING_LIFETIME)
        const curve = (yield* Effect.promise(() => findCurveAddresses(mint.address))).curve
        const account = yield* read("getAccountInfo", (signal) =>
          rpc.getAccountInfo(curve, { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })
        )
        const decoded =
          account.value === null || account.value.owner !== SVC_CURVE_PROGRAM_ID
            ? undefined
            : decodeCurve(new Uint8Array(fromBase64.encode(account.value.data[0])))
        if (decoded === undefined || decoded.creator !== input.payer) {
          return yield* launchError("chain_unavailable", `${input.signature} landed but no curve of ${mint.address} created by ${input.payer} is readable`)
        }
        const landed = yield* readLanded(input.signature, mint.address, curve, input.payer, plan)
        if (landed === undefined) return yield* launchError("chain_unavailable", `the landed launch ${input.signature} is not readable yet`)
        return { _tag: "Landed", launched: landed } satisfies Recovery
      }).pipe(Effect.withSpan("SolanaLaunch.recover"))

    const buildForPayer: SolanaLaunchShape["buildForPayer"] = (input) =>
      Effect.gen(function* () {
        const mint = yield* Effect.promise(() =>
          launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })
        )
        const sizing = yield* transactionInput(input, mint, SIZING_LIFETIME)
        const sized = yield* checkedSize(sizing.input, sizing.plan)
        const latest = yield* read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal }))
        const height = yield* blockHeight
        const lifetime = { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight }
        const { input: txInput, plan } = yield* transactionInput(input, mint, lifetime)
        const assembled = yield* Effect.promise(() => assembleLaunchTransaction(txInput, plan))
        const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(assembled.message))
        const wire = new Uint8Array(encoder.encode(partial))
        return {
          transactionBase64: base64.decode(wire),
          mint: mint.address,
          curve: assembled.curve,
          lastValidBlockHeight: lifetime.lastValidBlockHeight,
          txBytes: sized.txBytes,
          fee: plan.fee,
          blocksLeft: blocksLeftOf(lifetime, height)
        } satisfies PayerSignedBuild
      }).pipe(timedBuild("the launch"), Effect.withSpan("SolanaLaunch.buildForPayer"))

    const mintView: SolanaLaunchShape["mintView"] = (mint) =>
      Effect.gen(function* () {
        const account = yield* read("getAccountInfo", (signal) =>
          rpc.getAccountInfo(address(mint), { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })
        )
        const height = yield* blockHeight
        // getHealth answers "ok" only from a node that is caught up; an unhealthy node answers an error.
        const health = yield* Effect.either(read("getHealth", (signal) => rpc.getHealth().send({ abortSignal: signal })))
        const caughtUp = Either.isRight(health) && health.right === "ok"
        // An account at the mint is proof whatever the node's health; its absence proves nothing from a node that is behind.
        if (account.value === null && !caughtUp) return { _tag: "Unreadable" } satisfies MintView
        return { _tag: "Read", mintAccountExists: account.value !== null, blockHeight: height, caughtUp } satisfies MintView
      }).pipe(
        Effect.catchAll(() => Effect.succeed({ _tag: "Unreadable" } satisfies MintView)),
        Effect.withSpan("SolanaLaunch.mintView")
      )

    const verifySigned: SolanaLaunchShape["verifySigned"] = (input, signature) =>
      Effect.gen(function* () {
        const tx = yield* read("getTransaction", (signal) =>
          rpc
            .getTransaction(asSignature(signature), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" })
            .send({ abortSignal: signal })
        )
        if (tx === null) return { _tag: "NotFound" } satisfies SignedLaunch
        const keys = tx.transaction.message.accountKeys as ReadonlyArray<string>
        const signers = keys.slice(0, tx.transaction.message.header.numRequiredSignatures)
        if (!signers.includes(input.payer)) return { _tag: "SignerMismatch" } satisfies SignedLaunch
        const mint = yield* Effect.promise(() =>
          launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })
        )
        // The attempt's mint signed it: only the service holds that key, and it signs only this attempt's build.
        if (!signers.includes(mint.address)) return { _tag: "NotThisLaunch" } satisfies SignedLaunch
        // Only now is a failure this launch's failure (anyone else's failed transaction proves nothing about it).
        if (tx.meta !== null && tx.meta.err !== null) return { _tag: "Failed", chainError: transactionErrorText(tx.meta.err) } satisfies SignedLaunch
        const seen = yield* recover({ ...input, signature, lastValidBlockHeight: 0n })
        if (seen._tag !== "Landed") return yield* launchError("chain_unavailable", `the landed launch ${signature} is not readable yet`)
        return { _tag: "Landed", launched: seen.launched } satisfies SignedLaunch
      }).pipe(Effect.withSpan("SolanaLaunch.verifySigned"))

    const attemptMint: SolanaLaunchShape["attemptMint"] = (accountId, clientLaunchId, attempt) =>
      Effect.promise(() => launchMintSigner(secret, { accountId, clientLaunchId, attempt })).pipe(Effect.map((m) => m.address as string))

    const buildAtomic: SolanaLaunchShape["buildAtomic"] = (input, legs, tip) =>
      Effect.gen(function* () {
        const spec = { ...input, request: { ...input.request, buyAmountRaw: 0n } }
        // The attempt's mint key and the chain's two reads at once (the build's latency is what agents wait on).
        const [mint, latest, height] = yield* Effect.all(
          [
            Effect.promise(() => launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })),
            read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal })),
            blockHeight
          ],
          { concurrency: "unbounded" }
        )
        const bundleTip = { account: address(tip.account), lamports: tip.lamports }
        const lifetime = { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight }
        const { input: txInput, plan } = yield* transactionInput(spec, mint, lifetime)
        const bundle = yield* Effect.promise(() =>
          assembleAtomicBundle({
            launch: { ...txInput, bundleTip },
            launchPlan: plan,
            legs: legs.map((l) => ({ buyer: createNoopSigner(address(l.buyer)), amountInRaw: l.amountInRaw, minAmountOutRaw: l.minAmountOutRaw, platformFeeRaw: l.platformFeeRaw })),
            treasury,
            lifetime
          })
        )
        // Sized as built (a blockhash is 32 bytes whatever its value); only an oversized launch pays for the name search.
        if (bundle.legs[0]!.bytes > SOLANA_TRANSACTION_BYTES_MAX) {
          yield* checkedSize({ ...txInput, bundleTip }, plan)
          return yield* launchError("transaction_too_large", `the launch transaction is ${bundle.legs[0]!.bytes} bytes, over the ${SOLANA_TRANSACTION_BYTES_MAX}-byte limit`)
        }
        return {
          mint: mint.address,
          bundle,
          lastValidBlockHeight: lifetime.lastValidBlockHeight,
          blocksLeft: blocksLeftOf(lifetime, height)
        } satisfies AtomicBuilt
      }).pipe(timedBuild("the bundle"), Effect.withSpan("SolanaLaunch.buildAtomic"))

    const signEmbedded: SolanaLaunchShape["signEmbedded"] = (accountId, wireBase64) =>
      provider.signWithEmbedded(accountId, "solana", new Uint8Array(fromBase64.encode(wireBase64))).pipe(
        Effect.map((s) => s.signedTransaction),
        Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromWalletProvider(e) : launchError("signing_failed", `wallet provider: ${e.message}`)))
      )

    return { size, launch, recover, buildForPayer, mintView, verifySigned, attemptMint, buildAtomic, signEmbedded } satisfies SolanaLaunchShape
  })

export const layer = (options: SolanaLaunchOptions): Layer.Layer<SolanaLaunch, never, WalletProvider> => Layer.effect(SolanaLaunch, make(options))
