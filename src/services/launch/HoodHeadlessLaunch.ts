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
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import {
  type Address,
  BaseError,
  type Chain,
  decodeErrorResult,
  getAddress,
  getContractAddress,
  type Hash,
  type Hex,
  InsufficientFundsError,
  type PublicClient,
  serializeTransaction,
  type TransactionReceipt
} from "viem"
import { bondingCurveAbi, curveFactoryAbi, feeSplitterAbi } from "../../chain/hood/abi.generated.js"
import { hoodErrorsAbi, hoodPublicClient, predictCurveAddress, readCurve, revertName } from "../../chain/hood/client/HoodClient.js"
import { type FeeOutcome, feeAfterLateBuy, devBuyWatchMaxMs, type TxOutcome, txOutcome, watchDone } from "../../chain/hood/launch/DevBuyOutcome.js"
import {
  createCurveCall,
  curveCreatedIn,
  devBuyFillIn,
  devBuyPlan,
  ethTransferCall,
  type HoodCall,
  headlessSalt,
  platformFeeRaw,
  quoteTokenOf
} from "../../chain/hood/launch/HeadlessCalls.js"
import { initialState } from "../../domain/CurveMath.js"
import { awaitUntil } from "../../platform/AwaitUntil.js"
import { type Plan, planById } from "../../domain/Plans.js"
import { USDG_ADDRESS } from "../../domain/QuotePairs.js"
import type { Principal } from "../wallets/Principal.js"
import { WalletProvider, type WalletProviderError } from "../wallets/WalletProvider.js"
import { type WalletRefusalReason, walletRefusal } from "../wallets/WalletRefusal.js"
import type { WalletError } from "../wallets/WalletError.js"
import { WalletService } from "../wallets/WalletService.js"
import { type Also, type AttemptRef, LaunchLedger, LaunchLedgerError, type LaunchRecord, type LaunchRef } from "./LaunchLedger.js"
import type { StoredResult } from "./LaunchLedgerMachine.js"
import type { LaunchRequest } from "./request/LaunchRequest.js"
import { hoodLaunchResult } from "./internal/LaunchRecords.js"

export const HoodLaunchReasons = [
  /** Hood configuration incomplete (no RPC, factory or curve bytecode): nothing broadcast. */
  "hood_unavailable",
  /** Rule 8: the account has no linked EVM wallet. */
  "no_linked_evm_wallet",
  "not_embedded",
  "not_delegated",
  "delegation_revoked",
  /** The owner wallet's policy refused to sign. */
  "policy_denied",
  /** The wallet provider could not sign (its key cannot be opened, ...): nothing was signed. */
  "signing_failed",
  "insufficient_balance",
  /** The metadata URI is over the factory's 512 bytes. */
  "metadata_too_long",
  /** Not a Hood request (the route's decoder sends Hood requests only). */
  "not_hood",
  /** The build (estimate) reverted: `revert` names the contract error. */
  "build_reverted",
  "build_timeout",
  /** The chain could not be read or written. */
  "chain_read_failed",
  /** `createCurve` was mined with status 0. */
  "reverted",
  /** No receipt within the deadline: the transaction may still land; the row stays in flight. */
  "confirm_timeout"
] as const
export type HoodLaunchReason = (typeof HoodLaunchReasons)[number]

export class HoodLaunchError extends Schema.TaggedError<HoodLaunchError>()("HoodLaunchError", {
  reason: Schema.Literal(...HoodLaunchReasons),
  message: Schema.String,
  retryable: Schema.Boolean,
  /** `build_reverted`, `reverted`: the decoded custom error, when there is one. */
  revert: Schema.optional(Schema.String),
  /** `confirm_timeout`: the createCurve hash to look for. */
  txHash: Schema.optional(Schema.String)
}) {}

/** The error code the ledger row records on a definitive failure (the spec's codes). */
export const ledgerErrorCode: { readonly [R in HoodLaunchReason]: string } = {
  hood_unavailable: "HOOD_LAUNCH_UNAVAILABLE",
  no_linked_evm_wallet: "LAUNCH_FAILED",
  not_embedded: "AGENT_WALLET_NOT_EMBEDDED",
  not_delegated: "AGENT_WALLET_NOT_DELEGATED",
  delegation_revoked: "DELEGATION_REVOKED",
  policy_denied: "SPEND_POLICY_DENIED",
  signing_failed: "LAUNCH_FAILED",
  insufficient_balance: "INSUFFICIENT_OWNER_BALANCE",
  metadata_too_long: "VALIDATION_FAILED",
  not_hood: "VALIDATION_FAILED",
  build_reverted: "LAUNCH_FAILED",
  build_timeout: "BUILD_TIMEOUT",
  chain_read_failed: "LAUNCH_FAILED",
  reverted: "LAUNCH_FAILED",
  confirm_timeout: "LAUNCH_FAILED"
}

const retryableReasons: ReadonlySet<HoodLaunchReason> = new Set([
  "hood_unavailable",
  "not_delegated",
  "delegation_revoked",
  "signing_failed",
  "insufficient_balance",
  "build_timeout",
  "chain_read_failed",
  "confirm_timeout",
  "no_linked_evm_wallet"
])

const refuse = (reason: HoodLaunchReason, message: string, extra: { revert?: string; txHash?: string } = {}) =>
  new HoodLaunchError({ reason, message, retryable: retryableReasons.has(reason), ...extra })

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

/** The token a curve deploys in its constructor: the curve's first contract creation (nonce 1, EIP-161). */
export const tokenOfCurve = (curve: Address): Address => getContractAddress({ from: curve, nonce: 1n })

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

const FACTORY_URI_MAX_BYTES = 512

/** A refused estimate carries the revert data on the RPC error, not as a contract error: decode it. */
const estimateRevertName = (e: unknown): string | undefined => {
  if (!(e instanceof BaseError)) return undefined
  // Hardhat puts it on the JSON-RPC error as `data` (a hex string) or `data.data`.
  const hexOf = (x: unknown): Hex | undefined => {
    const d = (x as { data?: unknown }).data
    const v = typeof d === "string" ? d : typeof d === "object" && d !== null ? (d as { data?: unknown }).data : undefined
    return typeof v === "string" && v.startsWith("0x") && v.length >= 10 ? (v as Hex) : undefined
  }
  const found = e.walk((x) => x !== null && x !== undefined && hexOf(x) !== undefined)
  const data = found === null ? undefined : hexOf(found)
  if (data === undefined) return undefined
  try {
    return decodeErrorResult({ abi: hoodErrorsAbi, data }).errorName
  } catch {
    return undefined
  }
}

/** A viem error while talking to the node, as the reason the caller branches on. */
const chainError = (e: unknown, what: string): HoodLaunchError => {
  if (e instanceof BaseError && e.walk((x) => x instanceof InsufficientFundsError) !== null) {
    return refuse("insufficient_balance", `the owner wallet cannot cover ${what}`)
  }
  const name = revertName(e) ?? estimateRevertName(e)
  if (name !== undefined) return refuse("build_reverted", `${what} would revert: ${name}`, { revert: name })
  return refuse("chain_read_failed", `${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`)
}

/** The wallet refusal's reason on this chain (`WalletRefusal` decides what the provider's failure means). */
const walletReasons: { readonly [R in WalletRefusalReason]: HoodLaunchReason } = {
  not_embedded: "not_embedded",
  not_delegated: "not_delegated",
  delegation_revoked: "delegation_revoked",
  policy_denied: "policy_denied",
  signing_failed: "signing_failed"
}

/** The wallet provider's refusal to resolve or sign, as this chain's failure. */
export const fromWalletProvider = (e: WalletProviderError): HoodLaunchError => {
  const r = walletRefusal(e)
  return refuse(walletReasons[r.reason], r.message)
}

const keyOf = (ref: LaunchRef) => `${ref.accountId}\u0000${ref.clientLaunchId}`

export const make = (config: HoodLaunchConfig) =>
  Effect.gen(function* () {
    const ledger = yield* LaunchLedger
    const provider = yield* WalletProvider
    const wallets = yield* WalletService
    const scope = yield* Effect.scope
    const o = {
      buildTimeoutMs: config.buildTimeoutMs ?? HoodLaunchDefaults.buildTimeoutMs,
      confirmTimeoutMs: config.confirmTimeoutMs ?? HoodLaunchDefaults.confirmTimeoutMs,
      devBuyWaitMs: config.devBuyWaitMs ?? HoodLaunchDefaults.devBuyWaitMs,
      pollMs: config.pollMs ?? HoodLaunchDefaults.pollMs,
      watchMaxMs: config.watchMaxMs ?? HoodLaunchDefaults.watchMaxMs,
      watchersMax: config.watchersMax ?? HoodLaunchDefaults.watchersMax,
      statusesMax: config.statusesMax ?? HoodLaunchDefaults.statusesMax,
      devBuySlippageBps: config.devBuySlippageBps ?? HoodLaunchDefaults.devBuySlippageBps
    }
    const pc: PublicClient | undefined =
      config.chain !== undefined && config.rpcUrl !== undefined ? hoodPublicClient(config.chain, config.rpcUrl) : undefined
    /** Insertion-ordered: at `statusesMax` the oldest status is dropped (its watcher then stops). */
    const devBuys = new Map<string, DevBuyReport>()
    const remember = (key: string, r: DevBuyReport) => {
      if (!devBuys.has(key) && devBuys.size >= o.statusesMax) {
        const oldest = devBuys.keys().next()
        if (oldest.done !== true) devBuys.delete(oldest.value)
      }
      if (o.statusesMax > 0) devBuys.set(key, r)
    }
    let watchers = 0

    const rpc = <A>(what: string, f: (pc: PublicClient) => Promise<A>) =>
      Effect.tryPromise({ try: () => f(pc!), catch: (e) => chainError(e, what) })

    /** Fills nonce, gas and fees for `call` from `from`, then has the provider sign it. */
    const signCall = (accountId: string, from: Address, call: HoodCall, what: string, nonce?: number) =>
      Effect.gen(function* () {
        const prepared = yield* rpc(what, (c) =>
          c.prepareTransactionRequest({
            account: from,
            chain: config.chain!,
            to: call.to,
            data: call.data,
            value: call.value,
            type: "eip1559",
            ...(nonce === undefined ? {} : { nonce })
          })
        ).pipe(
          Effect.timeoutFail({ duration: Duration.millis(o.buildTimeoutMs), onTimeout: () => refuse("build_timeout", `building ${what} exceeded ${o.buildTimeoutMs} ms`) })
        )
        const serialized = serializeTransaction({
          type: "eip1559",
          chainId: config.chain!.id,
          nonce: prepared.nonce,
          gas: prepared.gas,
          maxFeePerGas: prepared.maxFeePerGas,
          maxPriorityFeePerGas: prepared.maxPriorityFeePerGas,
          to: call.to,
          data: call.data,
          value: call.value
        })
        const signed = yield* provider.signWithEmbedded(accountId, "evm", Buffer.from(serialized.slice(2), "hex")).pipe(
          Effect.catchTag("WalletProviderError", (e) => Effect.fail(fromWalletProvider(e)))
        )
        return { hash: signed.signature as Hash, raw: signed.signedTransaction as Hex, nonce: prepared.nonce }
      })

    /** Broadcasts signed bytes; false when the node did not return the hash (the send may still have happened). */
    const broadcast = (raw: Hex) =>
      rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: raw })).pipe(
        Effect.as(true),
        Effect.catchAll(() => Effect.succeed(false))
      )

    const receiptOf = (hash: Hash) =>
      rpc("receipt", (c) => c.getTransactionReceipt({ hash })).pipe(
        Effect.map(Option.some<TransactionReceipt>),
        Effect.catchAll(() => Effect.succeed(Option.none<TransactionReceipt>()))
      )

    /** Polls for a receipt for `waitMs` (by the Clock); none by then is `Option.none`. */
    const awaitReceipt = (hash: Hash, waitMs: number) =>
      awaitUntil(receiptOf(hash), Option.isSome, { what: `the receipt of ${hash}`, timeoutMs: waitMs, intervalMs: o.pollMs }).pipe(
        Effect.catchTag("AwaitTimedOut", () => Effect.succeed(Option.none<TransactionReceipt>()))
      )

    const failDefinitively = (input: HoodLaunchInput, error: HoodLaunchError) =>
      Effect.zipRight(
        ledger.fail(input.attempt, ledgerErrorCode[error.reason], input.also === undefined ? {} : { also: input.also }),
        Effect.fail(error)
      )

    /** Pre-chain gates: configuration, rule 8, the owner's delegated embedded EVM wallet (rule 10). */
    const gates = (input: HoodLaunchInput) =>
      Effect.gen(function* () {
        if (pc === undefined || config.factory === undefined || config.bondingCurveBytecode === undefined) {
          return yield* refuse("hood_unavailable", "Hood launches are not configured on this server (RPC, factory or curve bytecode missing)")
        }
        if (input.request.chain !== "hood" || input.request.dexVersion === null) return yield* refuse("not_hood", "not a Hood launch request")
        if (Buffer.byteLength(input.metadataUri, "utf8") > FACTORY_URI_MAX_BYTES) {
          return yield* refuse("metadata_too_long", `the metadata URI is over ${FACTORY_URI_MAX_BYTES} bytes`)
        }
        const listed = yield* wallets.list(input.principal)
        if (!listed.wallets.some((w) => w.chain === "evm")) {
          return yield* refuse("no_linked_evm_wallet", "a Hood launch needs a linked EVM wallet on the account")
        }
        const embedded = yield* provider.resolveDelegation(input.attempt.accountId, "evm").pipe(
          Effect.catchTag("WalletProviderError", (e) => Effect.fail(fromWalletProvider(e)))
        )
        return { wallet: getAddress(embedded.address), factory: config.factory, bytecode: config.bondingCurveBytecode }
      })

    const createInput = (input: HoodLaunchInput, salt: Hex) => ({
      name: input.request.name,
      symbol: input.request.symbol,
      uri: input.metadataUri,
      quoteToken: quoteTokenOf(input.request.quoteAsset as "eth" | "usdg", config.usdg ?? (USDG_ADDRESS as Address)),
      virtualQuoteRaw: input.request.curve.virtualQuoteRaw,
      thresholdRaw: input.request.curve.thresholdRaw,
      stakerAllocationBps: Number(input.request.stakerAllocationBps),
      dexVersion: input.request.dexVersion!,
      salt
    })

    const predicted = (factory: Address, creator: Address, bytecode: Hex, input: HoodLaunchInput, salt: Hex) =>
      Effect.gen(function* () {
        const [feeSplitter, feeBps] = yield* rpc("factory read", (c) =>
          Promise.all([
            c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "feeSplitter" }),
            c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "curveFeeBps" })
          ])
        )
        return predictCurveAddress({ factory, creator, feeSplitter, feeBps, bondingCurveBytecode: bytecode, input: createInput(input, salt) })
      })

    /** Signs createCurve, records hash and predicted curve, THEN broadcasts. */
    const sendCreate = (input: HoodLaunchInput, wallet: Address, factory: Address, salt: Hex, curve: Address) =>
      Effect.gen(function* () {
        const signed = yield* signCall(input.attempt.accountId, wallet, createCurveCall(factory, createInput(input, salt)), "createCurve")
        yield* ledger.sent(input.attempt, { pool: curve, signature: signed.hash }, input.onSend?.(tokenOfCurve(curve)))
        yield* broadcast(signed.raw)
        return signed.hash
      })

    /** The CurveCreated of a curve already on chain (recovery: the receipt of whichever hash created it). */
    const createdLog = (factory: Address, curve: Address) =>
      rpc("CurveCreated lookup", (c) =>
        c.getContractEvents({ address: factory, abi: curveFactoryAbi, eventName: "CurveCreated", args: { curve }, fromBlock: 0n, strict: true })
      ).pipe(Effect.map((logs) => logs[0]))

    /** Waits for createCurve's receipt; a timeout keeps the row in flight. */
    const confirmCreate = (input: HoodLaunchInput, factory: Address, hash: Hash) =>
      Effect.gen(function* () {
        const receipt = yield* awaitReceipt(hash, o.confirmTimeoutMs)
        if (Option.isNone(receipt)) {
          yield* ledger.timedOut(input.attempt)
          return yield* refuse("confirm_timeout", `createCurve ${hash} has no receipt after ${o.confirmTimeoutMs} ms; it may still land`, { txHash: hash })
        }
        const created = receipt.value.status === "success" ? curveCreatedIn(factory, receipt.value) : undefined
        if (created === undefined) return yield* failDefinitively(input, refuse("reverted", `createCurve ${hash} reverted on chain`, { txHash: hash }))
        return created
      })

    /** Reads the fee splitter's treasury (the platform fee's destination). */
    const treasuryOf = (factory: Address) =>
      rpc("treasury read", async (c) => {
        const splitter = await c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "feeSplitter" })
        return c.readContract({ address: splitter, abi: feeSplitterAbi, functionName: "treasury" })
      })

    /** The platform fee of the dev buy (spec 2.5 `fee`): the plan's bps of `buyAmount`, to the splitter's treasury. */
    const feeOf = (input: HoodLaunchInput, factory: Address) =>
      Effect.map(treasuryOf(factory), (treasury) => {
        const bps = planById(config.plans, input.principal.plan).feeBps
        return { bps, feeRaw: platformFeeRaw(input.request.buyAmountRaw, bps), treasury }
      })

    const txObservation = (hash: Hash, from: Address, nonce: number, sentAtMs: number, hashReturned: boolean) =>
      Effect.gen(function* () {
        const receipt = yield* receiptOf(hash)
        const minedNonce = yield* rpc("nonce", (c) => c.getTransactionCount({ address: from, blockTag: "latest" }))
        const nowMs = yield* Clock.currentTimeMillis
        const obs = {
          receipt: Option.match(receipt, { onNone: () => null, onSome: (r) => r.status }),
          hashReturned,
          txNonce: nonce,
          minedNonce,
          sentAtMs,
          nowMs,
          watchMaxMs: o.watchMaxMs
        } as const
        return { obs, outcome: txOutcome(obs), receipt }
      })

    interface SentTx {
      readonly hash: Hash
      readonly nonce: number
      readonly sentAtMs: number
      readonly hashReturned: boolean
    }

    /** Sends a signed call and waits up to `waitMs` for its receipt; a signing refusal is `refused`. */
    const sendAndWait = (accountId: string, from: Address, call: HoodCall, what: string, waitMs: number) =>
      Effect.gen(function* () {
        const signed = yield* signCall(accountId, from, call, what)
        const sentAtMs = yield* Clock.currentTimeMillis
        const hashReturned = yield* broadcast(signed.raw)
        yield* awaitReceipt(signed.hash, waitMs)
        const seen = yield* txObservation(signed.hash, from, signed.nonce, sentAtMs, hashReturned)
        const sent: SentTx = { hash: signed.hash, nonce: signed.nonce, sentAtMs, hashReturned }
        return { sent, outcome: seen.outcome, receipt: seen.receipt }
      })

    const report = (base: Omit<DevBuyReport, "signature" | "pendingSignature">, hash: Hash | null): DevBuyReport => ({
      ...base,
      signature: base.outcome === "landed" ? hash : null,
      pendingSignature: base.outcome === "pending" || base.outcome === "lapsed" || base.outcome === "reverted" ? hash : null
    })

    /** Keeps a non-final dev buy current by reading the chain, until final or `watchMaxMs` after it was sent. */
    const watch = (ref: LaunchRef, from: Address, curve: Address, sent: SentTx) =>
      Effect.gen(function* () {
        while (true) {
          yield* Effect.sleep(Duration.millis(o.pollMs))
          const seen = yield* txObservation(sent.hash, from, sent.nonce, sent.sentAtMs, sent.hashReturned).pipe(Effect.option)
          if (Option.isNone(seen)) {
            // The node could not be read: try again, but never past the bound.
            if ((yield* Clock.currentTimeMillis) - sent.sentAtMs >= o.watchMaxMs) return
            continue
          }
          const current = devBuys.get(keyOf(ref))
          if (current === undefined) return
          const fill = Option.flatMap(seen.value.receipt, (r) => Option.fromNullable(r.status === "success" ? devBuyFillIn(curve, r) : undefined))
          devBuys.set(
            keyOf(ref), // present: checked above, and nothing yields in between
            report(
              {
                ...current,
                outcome: seen.value.outcome,
                amountOutRaw: Option.match(fill, { onNone: () => current.amountOutRaw, onSome: (f) => f.amountOutRaw }),
                feeOutcome: feeAfterLateBuy(seen.value.outcome, current.feeOutcome),
                watchedAtMs: seen.value.obs.nowMs
              },
              sent.hash
            )
          )
          if (watchDone(seen.value.obs, seen.value.outcome)) return
        }
      }).pipe(Effect.ensuring(Effect.sync(() => watchers--)))

    /** The best-effort dev buy and, once it landed in the run, the platform-fee leg. */
    const devBuy = (input: HoodLaunchInput, wallet: Address, factory: Address, curve: Address, atBlock: bigint) =>
      Effect.gen(function* () {
        const amountInRaw = input.request.buyAmountRaw
        const fee = yield* feeOf(input, factory)
        // Quoted against the fresh curve (the launch price): a buy that lands before the dev buy,
        // even in createCurve's own block, moves the price and `minAmountOut` guards the creator.
        const snapshot = yield* rpc("curve read", (c) => readCurve(c, curve, atBlock))
        const plan = devBuyPlan(curve, snapshot.params, initialState(snapshot.params), amountInRaw, o.devBuySlippageBps)
        const notSent = { amountInRaw, minAmountOutRaw: null, amountOutRaw: null, feeOutcome: "not_sent" as const, fee, feeSignature: null }
        if (plan === undefined) return { report: report({ ...notSent, outcome: "reverted", notSentBecause: "curve_refused" }, null), watch: undefined }
        const bought = yield* sendAndWait(input.attempt.accountId, wallet, plan.call, "dev buy", o.devBuyWaitMs).pipe(Effect.either)
        if (bought._tag === "Left") {
          // Never signed (policy, delegation) or never built: no buy is outstanding.
          const because = bought.left._tag === "HoodLaunchError" ? (bought.left.revert ?? bought.left.reason) : "storage"
          return { report: report({ ...notSent, minAmountOutRaw: plan.minAmountOutRaw, outcome: "reverted", notSentBecause: because }, null), watch: undefined }
        }
        const { sent, outcome, receipt } = bought.right
        const fill = Option.flatMap(receipt, (r) => Option.fromNullable(r.status === "success" ? devBuyFillIn(curve, r) : undefined))
        const buyBase = {
          amountInRaw,
          minAmountOutRaw: plan.minAmountOutRaw,
          amountOutRaw: Option.getOrNull(Option.map(fill, (f) => f.amountOutRaw)),
          fee,
          notSentBecause: null
        }
        if (outcome !== "landed" || fee.feeRaw === 0n) {
          const r = report({ ...buyBase, outcome, feeOutcome: "not_sent", feeSignature: null }, sent.hash)
          return { report: r, watch: outcome === "landed" ? undefined : sent }
        }
        const paid = yield* sendAndWait(input.attempt.accountId, wallet, ethTransferCall(fee.treasury, fee.feeRaw), "platform fee", o.devBuyWaitMs).pipe(Effect.either)
        const feeOutcome: FeeOutcome =
          paid._tag === "Left" ? (paid.left._tag === "HoodLaunchError" && paid.left.reason === "policy_denied" ? "refused" : "not_sent") : paid.right.outcome
        const feeSignature = paid._tag === "Right" ? paid.right.sent.hash : null
        return { report: report({ ...buyBase, outcome, feeOutcome, feeSignature }, sent.hash), watch: undefined }
      })

    /** What a recovered launch can say of a dev buy it may have sent: a Trade by the wallet, or `unknown`. */
    const recoveredDevBuy = (input: HoodLaunchInput, wallet: Address, factory: Address, curve: Address) =>
      Effect.gen(function* () {
        const amountInRaw = input.request.buyAmountRaw
        const fee = yield* feeOf(input, factory)
        const trades = yield* rpc("Trade lookup", (c) =>
          c.getContractEvents({ address: curve, abi: bondingCurveAbi, eventName: "Trade", args: { trader: wallet }, fromBlock: 0n, strict: true })
        )
        const trade = trades.find((t) => t.args.isBuy)
        return report(
          {
            amountInRaw,
            minAmountOutRaw: null,
            amountOutRaw: trade?.args.amountOut ?? null,
            outcome: trade !== undefined ? "landed" : "unknown",
            feeOutcome: trade !== undefined ? "forgone" : "not_sent",
            fee,
            feeSignature: null,
            notSentBecause: null
          },
          trade?.transactionHash ?? null
        )
      })

    const devBuyJson = (d: DevBuyReport): Record<string, unknown> => ({
      ...(d.signature !== null ? { signature: d.signature } : {}),
      outcome: d.outcome,
      ...(d.pendingSignature !== null ? { pendingSignature: d.pendingSignature } : {}),
      feeOutcome: d.feeOutcome,
      fee: { bps: d.fee.bps, feeRaw: d.fee.feeRaw.toString(), treasury: d.fee.treasury }
    })

    const resultOf = (input: HoodLaunchInput, curve: Address, token: Address, hash: Hash, d: DevBuyReport | null): StoredResult =>
      hoodLaunchResult({ baseUrl: config.baseUrl, explorerUrl: config.explorerUrl }, input.request, { curve, token, txHash: hash }, d === null ? null : devBuyJson(d))

    const finish = (
      input: HoodLaunchInput,
      created: { curve: Address; token: Address; creator: Address; txHash: Hash; blockNumber: bigint },
      d: { report: DevBuyReport; watch: SentTx | undefined; wallet: Address } | null
    ) =>
      Effect.gen(function* () {
        const result = resultOf(input, created.curve, created.token, created.txHash, d?.report ?? null)
        const record = yield* ledger.confirm(input.attempt, result, { mint: created.token, pool: created.curve, signature: created.txHash }, input.also)
        if (d !== null) {
          remember(keyOf(input.attempt), d.report)
          if (d.watch !== undefined && watchers < o.watchersMax) {
            watchers++
            yield* Effect.forkIn(watch(input.attempt, d.wallet, created.curve, d.watch), scope)
          }
        }
        return { result, ...created, devBuy: d?.report ?? null, record }
      })

    const wantsDevBuy = (input: HoodLaunchInput) => input.request.buyAmountRaw > 0n && input.request.quoteAsset === "eth"

    /**
     * One path for a fresh attempt and a resumed one: a row already `confirming` is read from
     * the chain before anything is sent again.
     */
    const drive = (input: HoodLaunchInput) =>
      Effect.gen(function* () {
        const row = yield* ledger.get(input.attempt)
        if (row === undefined || row.attempt !== input.attempt.attempt || (row.state !== "submitted" && row.state !== "confirming")) {
          const reason = row === undefined ? "not_found" : row.attempt !== input.attempt.attempt ? "stale_attempt" : "not_in_flight"
          return yield* new LaunchLedgerError({ reason, message: `launch ${input.attempt.clientLaunchId} attempt ${input.attempt.attempt}: ${reason}`, retryable: false })
        }
        const g = yield* gates(input).pipe(Effect.catchTag("HoodLaunchError", (e) => (row.state === "submitted" ? failDefinitively(input, e) : Effect.fail(e))))
        const salt = headlessSalt(input.attempt.accountId, input.attempt.clientLaunchId, input.attempt.attempt)
        const curve = yield* predicted(g.factory, g.wallet, g.bytecode, input, salt)
        let hash: Hash
        if (row.state === "confirming" && row.signature !== null) {
          const onChain = yield* rpc("factory read", (c) => c.readContract({ address: g.factory, abi: curveFactoryAbi, functionName: "isCurve", args: [curve] }))
          if (onChain) {
            const log = yield* createdLog(g.factory, curve)
            if (log === undefined) return yield* refuse("chain_read_failed", `curve ${curve} exists but its CurveCreated log was not found`)
            const created = {
              curve,
              token: getAddress(log.args.token),
              creator: getAddress(log.args.creator),
              txHash: log.transactionHash,
              blockNumber: log.blockNumber
            }
            const d = wantsDevBuy(input) ? { report: yield* recoveredDevBuy(input, g.wallet, g.factory, curve), watch: undefined, wallet: g.wallet } : null
            return yield* finish(input, created, d)
          }
          const known = yield* rpc("transaction read", (c) => c.getTransaction({ hash: row.signature as Hash })).pipe(
            Effect.as(true),
            Effect.catchAll(() => Effect.succeed(false))
          )
          // Known to the node (pending or mined): wait for it. Unknown and no curve: it never got out; send again, same salt.
          hash = known ? (row.signature as Hash) : yield* sendCreate(input, g.wallet, g.factory, salt, curve)
        } else {
          // Every failure here comes before the broadcast: nothing can land, so it is definitive.
          hash = yield* sendCreate(input, g.wallet, g.factory, salt, curve).pipe(
            Effect.catchTag("HoodLaunchError", (e) => failDefinitively(input, e))
          )
        }
        const created = yield* confirmCreate(input, g.factory, hash)
        const d = wantsDevBuy(input)
          ? { ...(yield* devBuy(input, g.wallet, g.factory, created.curve, created.blockNumber)), wallet: g.wallet }
          : null
        return yield* finish(input, created, d)
      })

    const service: HoodHeadlessLaunchShape = {
      preflight: (input) =>
        Effect.map(
          gates({ ...input, attempt: { accountId: input.principal.accountId, clientLaunchId: input.request.clientLaunchId, attempt: 0 } }),
          (g) => g.wallet
        ),
      launch: Effect.fn("HoodHeadlessLaunch.launch")((input: HoodLaunchInput) => drive(input)),
      recover: Effect.fn("HoodHeadlessLaunch.recover")((input: HoodLaunchInput) => drive(input)),
      devBuyStatus: (ref) => Effect.sync(() => devBuys.get(keyOf(ref))),
      watching: Effect.sync(() => watchers)
    }
    return service
  })

/** Scoped: the dev-buy watchers live as long as the layer. */
export const layer = (config: HoodLaunchConfig): Layer.Layer<HoodHeadlessLaunch, never, LaunchLedger | WalletProvider | WalletService> =>
  Layer.scoped(HoodHeadlessLaunch, make(config))

