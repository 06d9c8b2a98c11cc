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
import { ChainArrivals } from "../chains/ChainArrivals.js"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { AssembledBundle } from "../../chain/solana/launch/AtomicBundle.js"
import { LAUNCH_MINT_SECRET_BYTES_MIN, launchMintSigner } from "../../chain/solana/launch/LaunchMint.js"
import type { FeePlan, LaunchPlan, LaunchSize } from "../../chain/solana/launch/LaunchTransaction.js"
import { WalletProvider, layerTest as walletProviderTest } from "../wallets/WalletProvider.js"
import type { LaunchRequest } from "./request/LaunchRequest.js"
import { makeSolanaBuilds } from "./solana/SolanaBuilds.js"
import { makeSolanaContext } from "./solana/SolanaContext.js"
import { makeSolanaReads } from "./solana/SolanaReads.js"
import { makeSolanaRecover } from "./solana/SolanaRecover.js"
import { SIZING_MINT_ID } from "./solana/SolanaRules.js"
import { makeSolanaSend } from "./solana/SolanaSend.js"
import type { SolanaLaunchError } from "./SolanaLaunchError.js"

export { launchTermsOf, launchTransactionInput, oversizeRefusal } from "./solana/SolanaRules.js"



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

/**
 * The dry run's figures. Sizing uses one stand-in mint per process (`SolanaRules.SIZING_MINT_ID`;
 * every address is 32 bytes): the attempt is not named yet.
 */
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
  readonly size: (spec: SolanaLaunchSpec) => Effect.Effect<DryRunSize, SolanaLaunchError>
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

const positive = (name: string, v: number) =>
  Number.isSafeInteger(v) && v > 0 ? Effect.succeed(v) : Effect.dieMessage(`SolanaLaunch: ${name} must be a positive whole number of ms`)

/**
 * The service is a table of methods over parts in `solana/`: `SolanaReads` (simulation, the
 * landed transaction, one look at a sent one, a mint's view), `SolanaBuilds` (input, size, the
 * payer-signed and atomic builds, embedded signing), `SolanaSend` (the headless send and its
 * confirmation) and `SolanaRecover`, with the pure parts in `SolanaRules`.
 */
export const make = (options: SolanaLaunchOptions) =>
  Effect.gen(function* () {
    const provider = yield* WalletProvider
    const figures = {
      buildTimeoutMs: yield* positive("buildTimeoutMs", options.buildTimeoutMs ?? SolanaLaunchDefaults.buildTimeoutMs),
      confirmTimeoutMs: yield* positive("confirmTimeoutMs", options.confirmTimeoutMs ?? SolanaLaunchDefaults.confirmTimeoutMs),
      pollIntervalMs: yield* positive("pollIntervalMs", options.pollIntervalMs ?? SolanaLaunchDefaults.pollIntervalMs)
    }
    const secret = Redacted.value(options.mintSecret)
    if (secret.byteLength < LAUNCH_MINT_SECRET_BYTES_MIN) {
      return yield* Effect.dieMessage(`SolanaLaunch: the mint secret needs at least ${LAUNCH_MINT_SECRET_BYTES_MIN} bytes`)
    }
    // The ingest stream's deliveries wake a launch's confirmation read (absent: the poll alone).
    const arrivals = Option.getOrUndefined(yield* Effect.serviceOption(ChainArrivals))
    // Sizing's stand-in mint, once per process (a size does not depend on the mint's value).
    const sizingMint = yield* Effect.promise(() => launchMintSigner(secret, SIZING_MINT_ID))
    const ctx = makeSolanaContext(options, provider, figures, secret, sizingMint, arrivals)
    const reads = makeSolanaReads(ctx)
    const builds = makeSolanaBuilds(ctx, reads)
    const { launch } = makeSolanaSend(ctx, reads, builds)
    const { recover, verifySigned } = makeSolanaRecover(ctx, reads, builds)
    const { size, buildForPayer, attemptMint, buildAtomic, signEmbedded } = builds
    return { size, launch, recover, buildForPayer, mintView: reads.mintView, verifySigned, attemptMint, buildAtomic, signEmbedded } satisfies SolanaLaunchShape
  })

export const layer = (options: SolanaLaunchOptions): Layer.Layer<SolanaLaunch, never, WalletProvider> => Layer.effect(SolanaLaunch, make(options))

/** The real Solana launcher on the given cluster, signing with the real local provider (`WalletProvider.layerTest`). */
export const layerTest = (options: SolanaLaunchOptions) => layer(options).pipe(Layer.provide(walletProviderTest))
