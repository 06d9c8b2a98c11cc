/**
 * The headless launch on Hood (spec document 1, rules 8 and 10, 2.5, 3.1): `createCurve` from the
 * key owner's own embedded EVM wallet on the matrix's terms, then the best-effort dev buy and its
 * platform-fee leg, each signed through the wallet provider (its policy applies) and sent from
 * that wallet. No HTTP here: typed input, `HoodLaunchError` with a `reason` union, and the launch
 * ledger's transitions (`sent` before broadcasting, `confirm`, `fail`, `timedOut`).
 *
 * Invariants:
 * - One attempt creates at most one curve: the CREATE2 salt is a pure function of (account,
 *   clientLaunchId, attempt), and the predicted curve address and the signed transaction's hash
 *   are written to the ledger row (`pool`, `signature`) BEFORE the transaction is broadcast. A
 *   resumed row (`recover`, or a same-attempt call after a crash) reads the chain first: a curve
 *   at the predicted address is this attempt's; a known transaction is waited for; only when the
 *   chain shows neither is `createCurve` signed and sent again, with the same salt, so even if the
 *   first one surfaces later only one of them can deploy.
 * - Every chain step is bounded: the build (`buildTimeoutMs`, `BUILD_TIMEOUT`), the confirmation
 *   (`confirmTimeoutMs`; a timeout is "outcome unknown": the row stays in flight with its slot),
 *   the dev buy's in-run wait (`devBuyWaitMs`), and the watcher (`watchMaxMs`, 24 h by default,
 *   at most `watchersMax` at once).
 * - The dev buy never blocks the launch: once `createCurve` is mined the launch is confirmed,
 *   whatever the buy does. A recovered launch never sends a dev buy (it may already be out).
 */
import { ChainArrivals } from "../chains/ChainArrivals.js"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Option } from "effect"
import type { Address, Chain, Hash, Hex } from "viem"
import { hoodPublicClient } from "../../chain/hood/client/HoodClient.js"
import { devBuyWatchMaxMs, type FeeOutcome, type TxOutcome } from "../../chain/hood/launch/DevBuyOutcome.js"
import type { Plan } from "../../domain/Plans.js"
import type { Principal } from "../wallets/Principal.js"
import { WalletProvider, layerTest as walletProviderTest } from "../wallets/WalletProvider.js"
import type { WalletError } from "../wallets/WalletError.js"
import { WalletService } from "../wallets/WalletService.js"
import { makeHoodHeadlessChain } from "./hoodHeadless/HoodHeadlessChain.js"
import type { HoodHeadlessContext } from "./hoodHeadless/HoodHeadlessContext.js"
import { makeHoodHeadlessCreate } from "./hoodHeadless/HoodHeadlessCreate.js"
import { makeHoodHeadlessDevBuys } from "./hoodHeadless/HoodHeadlessDevBuys.js"
import { makeHoodHeadlessDrive } from "./hoodHeadless/HoodHeadlessDrive.js"
import type { HoodLaunchError } from "./hoodHeadless/HoodLaunchError.js"
import { type Also, type AttemptRef, LaunchLedger, type LaunchLedgerError, type LaunchRecord, type LaunchRef, layerTest as launchLedgerTest } from "./LaunchLedger.js"
import type { StoredResult } from "./LaunchLedgerMachine.js"
import type { LaunchRequest } from "./request/LaunchRequest.js"

export { fromWalletProvider, HoodLaunchError, type HoodLaunchReason, HoodLaunchReasons } from "./hoodHeadless/HoodLaunchError.js"
export { tokenOfCurve } from "./hoodHeadless/HoodHeadlessRules.js"

/** Where the engine's Hood deployment is; any piece missing makes Hood launches unavailable. */
export interface HoodLaunchConfig {
  readonly chain: Chain | undefined
  readonly rpcUrl: string | undefined
  readonly factory: Address | undefined
  /** The compiled BondingCurve creation code (predicts the curve address before sending). */
  readonly bondingCurveBytecode: Hex | undefined
  readonly usdg?: Address
  /** `links.explorer` is set only when an explorer address is configured (spec 2.5). */
  readonly explorerUrl?: string
  /** The engine's public base URL for `links.candle`. */
  readonly baseUrl: string
  readonly plans: ReadonlyArray<Plan>
  /** Defaults: build 15 s, confirm 60 s, dev-buy in-run wait 30 s, poll 250 ms, watch 24 h, 10,000 watchers and statuses, slippage 100 bps. */
  readonly buildTimeoutMs?: number
  readonly confirmTimeoutMs?: number
  readonly devBuyWaitMs?: number
  readonly pollMs?: number
  readonly watchMaxMs?: number
  readonly watchersMax?: number
  /** Dev-buy statuses kept for `devBuyStatus` (default 10,000); beyond it the oldest is forgotten (the stored result remains). */
  readonly statusesMax?: number
  readonly devBuySlippageBps?: bigint
}

export const HoodLaunchDefaults = {
  buildTimeoutMs: 15_000,
  confirmTimeoutMs: 60_000,
  devBuyWaitMs: 30_000,
  pollMs: 250,
  watchMaxMs: devBuyWatchMaxMs,
  watchersMax: 10_000,
  statusesMax: 10_000,
  devBuySlippageBps: 100n
} as const

export interface HoodLaunchInput {
  /** The attempt `LaunchLedger.begin` accepted (or the in-flight row's current attempt). */
  readonly attempt: AttemptRef
  readonly principal: Principal
  readonly request: LaunchRequest
  /** The token metadata URI written on chain (at most 512 bytes); the hosted metadata or image URL. */
  readonly metadataUri: string
  /**
   * The caller's writes for the settled row (spec 3.1 "Also": token, activity, `launch.confirmed`
   * / `launch.failed` in the outbox), run in the ledger's transaction on confirm and on a
   * definitive failure.
   */
  readonly also?: Also
  /**
   * The caller's writes when `createCurve` is about to be broadcast, given the token address the
   * curve will deploy (its first CREATE): run in the ledger's `sent` transaction, so they are
   * durable before anything can land (the launch attribution).
   */
  readonly onSend?: (token: Address) => Also
}


/** Spec 2.5 `devBuy` as this service tracks it; amounts raw. */
export interface DevBuyReport {
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint | null
  /** Set once the buy has a success receipt. */
  readonly signature: Hash | null
  readonly outcome: TxOutcome
  /** The buy's hash while `pending`, `lapsed` or `reverted`. */
  readonly pendingSignature: Hash | null
  readonly amountOutRaw: bigint | null
  readonly feeOutcome: FeeOutcome
  readonly fee: { readonly bps: number; readonly feeRaw: bigint; readonly treasury: Address }
  readonly feeSignature: Hash | null
  /** A buy never sent: why (the decoded revert of its estimate, or the refusal reason). */
  readonly notSentBecause: string | null
  /** When the watcher last read the chain for it (Clock ms); null before its first read. */
  readonly watchedAtMs?: number
}

export interface HoodLaunchResult {
  /** The stored spec 2.5 result (the ledger replays it). */
  readonly result: StoredResult
  readonly curve: Address
  readonly token: Address
  readonly creator: Address
  readonly txHash: Hash
  readonly blockNumber: bigint
  readonly devBuy: DevBuyReport | null
  readonly record: LaunchRecord
}

export interface HoodHeadlessLaunchShape {
  /** Launches the accepted attempt; a row already sent resumes from what the chain shows. */
  readonly launch: (input: HoodLaunchInput) => Effect.Effect<HoodLaunchResult, HoodLaunchError | LaunchLedgerError | WalletError | SqlError>
  /** Carries a row that was sent (or accepted) before a crash to its outcome; never launches twice. */
  readonly recover: (input: HoodLaunchInput) => Effect.Effect<HoodLaunchResult, HoodLaunchError | LaunchLedgerError | WalletError | SqlError>
  /** The dev buy as last read by the watcher (or as the launch ended); undefined when none is known. */
  readonly devBuyStatus: (ref: LaunchRef) => Effect.Effect<DevBuyReport | undefined>
  /**
   * The pre-chain gates alone (configuration, rule 8's linked EVM wallet, the owner's delegated
   * embedded EVM wallet), for the dry run: the wallet a launch would pay from. Writes nothing.
   */
  readonly preflight: (input: Omit<HoodLaunchInput, "attempt" | "also" | "onSend">) => Effect.Effect<Address, HoodLaunchError | WalletError | SqlError>
  /** Dev buys being watched now (at most `watchersMax`). */
  readonly watching: Effect.Effect<number>
}

export class HoodHeadlessLaunch extends Context.Tag("curvestream/HoodHeadlessLaunch")<HoodHeadlessLaunch, HoodHeadlessLaunchShape>() {}

/**
 * The service is a table of methods over parts in `hoodHeadless/`: `HoodHeadlessChain` (sign,
 * send, receipts), `HoodHeadlessCreate` (gates and `createCurve`), `HoodHeadlessDevBuys` (the dev
 * buy, its fee leg and watchers) and `HoodHeadlessDrive` (a fresh or resumed attempt), with the
 * pure parts in `HoodHeadlessRules` and the failures in `HoodLaunchError`.
 */
export const make = (config: HoodLaunchConfig) =>
  Effect.gen(function* () {
    const ctx: HoodHeadlessContext = {
      config,
      o: {
        buildTimeoutMs: config.buildTimeoutMs ?? HoodLaunchDefaults.buildTimeoutMs,
        confirmTimeoutMs: config.confirmTimeoutMs ?? HoodLaunchDefaults.confirmTimeoutMs,
        devBuyWaitMs: config.devBuyWaitMs ?? HoodLaunchDefaults.devBuyWaitMs,
        pollMs: config.pollMs ?? HoodLaunchDefaults.pollMs,
        watchMaxMs: config.watchMaxMs ?? HoodLaunchDefaults.watchMaxMs,
        watchersMax: config.watchersMax ?? HoodLaunchDefaults.watchersMax,
        statusesMax: config.statusesMax ?? HoodLaunchDefaults.statusesMax,
        devBuySlippageBps: config.devBuySlippageBps ?? HoodLaunchDefaults.devBuySlippageBps
      },
      ledger: yield* LaunchLedger,
      provider: yield* WalletProvider,
      wallets: yield* WalletService,
      scope: yield* Effect.scope,
      pc: config.chain !== undefined && config.rpcUrl !== undefined ? hoodPublicClient(config.chain, config.rpcUrl) : undefined,
      arrivals: Option.getOrUndefined(yield* Effect.serviceOption(ChainArrivals))
    }
    const chain = makeHoodHeadlessChain(ctx)
    const create = makeHoodHeadlessCreate(ctx, chain)
    const devBuys = makeHoodHeadlessDevBuys(ctx, chain)
    const { drive } = makeHoodHeadlessDrive(ctx, chain, create, devBuys)

    const service: HoodHeadlessLaunchShape = {
      preflight: (input) =>
        Effect.map(
          create.gates({ ...input, attempt: { accountId: input.principal.accountId, clientLaunchId: input.request.clientLaunchId, attempt: 0 } }),
          (g) => g.wallet
        ),
      launch: Effect.fn("HoodHeadlessLaunch.launch")((input: HoodLaunchInput) => drive(input)),
      recover: Effect.fn("HoodHeadlessLaunch.recover")((input: HoodLaunchInput) => drive(input)),
      devBuyStatus: (ref) => devBuys.status(ref),
      watching: devBuys.watching
    }
    return service
  })

/** Scoped: the dev-buy watchers live as long as the layer. */
export const layer = (config: HoodLaunchConfig): Layer.Layer<HoodHeadlessLaunch, never, LaunchLedger | WalletProvider | WalletService> =>
  Layer.scoped(HoodHeadlessLaunch, make(config))

/** The real Hood headless launch on the given chain, over the real ledger and local provider (their `layerTest`); the wallet service and the failure codes are the test's. */
export const layerTest = (config: HoodLaunchConfig) => layer(config).pipe(Layer.provide(Layer.merge(launchLedgerTest, walletProviderTest)))
