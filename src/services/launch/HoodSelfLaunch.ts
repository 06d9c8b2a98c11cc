/**
 * Self-signed launches on Hood from an imported linked EVM wallet (launch spec 2.3, 3.1's
 * self-signed rows, 3.2, 3.3's last paragraph, 3.4, endpoint rules 4 and 5): the service builds
 * the unsigned `createCurve` transaction (the factory entry point is non-payable: nothing is spent
 * at build) and, when the dev buy carries a platform fee, the `feeTransfer` leg, each staked out
 * with a single-use sign claim; the agent has the relay sign them, broadcasts them itself, and
 * `confirm` records what the chain shows. Typed input, one failure (`LaunchError`); no HTTP.
 *
 * Invariants:
 * - No token row at build (3.2): the predicted curve is stored as `pool`; the token row is
 *   inserted by `confirm`, which verifies the launcher and every curve parameter on chain: the
 *   curve sits at the CREATE2 address predicted from the build's own init code (every constructor
 *   argument and the payer as creator), and the receipt's `CurveCreated` names it.
 * - A build with a nonzero fee confirms only with a `feeTxHash` that verifies (a successful plain
 *   transfer of exactly the fee from the payer to the treasury): else `FEE_LEG_MISSING` (402),
 *   nothing recorded. A `devBuySignature` is bound only when its `to` is the curve and its value
 *   exactly `buyAmount`; otherwise it is ignored and the confirm still succeeds (endpoint rule 5).
 * - A repeat build from a linked wallet gets a NEW curve address (a new attempt, new salt), unless
 *   the chain shows the earlier attempt's curve exists: then 409 `prior_attempt_on_chain`, so a
 *   landed launch is confirmed, never built twice (docs/decisions.md).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Context, Effect, Layer } from "effect"
import {
  type Address,
  type Chain,
  getAddress,
  type Hash,
  type Hex,
  BaseError,
  type PublicClient,
  keccak256,
  parseTransaction,
  recoverTransactionAddress,
  serializeTransaction,
  type TransactionReceipt
} from "viem"
import { type AgentLaunches, AgentLaunchRegistry } from "../../../actors/AgentLaunches.js"
import { curveFactoryAbi, feeSplitterAbi } from "../../chain/hood/abi.generated.js"
import { hoodPublicClient, predictCurveAddress } from "../../chain/hood/client/HoodClient.js"
import { createCurveCall, curveCreatedIn, devBuyPlan, ethTransferCall, type HoodCall, launchSalt, platformFeeRaw, quoteTokenOf } from "../../chain/hood/launch/HeadlessCalls.js"
import { initialState, tokenReserveRaw } from "../../domain/CurveMath.js"
import { isEvmTxHash } from "../../domain/ChainValues.js"
import { findEconomics, MATRIX_VERSION } from "../../domain/Economics.js"
import { USDG_ADDRESS } from "../../domain/QuotePairs.js"
import { TierService } from "../accounts/TierService.js"
import { ImageService, type ImageServiceShape } from "../images/ImageService.js"
import { WalletService, type WalletServiceShape, type WalletView } from "../wallets/WalletService.js"
import { idempotencyHash } from "./Idempotency.js"
import { exclusiveEligibility, fetchImages, launchStorage, payerRules, selfPayer, selfSignedTier, launchHoldings } from "./internal/LaunchGates.js"
import { attribute, confirmedWrites, hoodLaunchResult } from "./internal/LaunchRecords.js"
import { admitted, failOnChainFailure, feeTxUsedElsewhere, Overlap, overlapping, readBuild, recordConfirmed, recordFeeTx, selfJobNotFound, storeBuild, sweepOwnBuilds, updateOperation } from "./internal/SelfBuilds.js"
import { type Also, type AttemptRef, type BeginInput, LaunchLedger, type LaunchLedgerShape, type LaunchRecord, type LaunchRef } from "./LaunchLedger.js"
import { isRevivable, type StoredResult } from "./LaunchLedgerMachine.js"
import { fromLedger, fromWallet, type LaunchError, launchFailure } from "./LaunchError.js"
import { canonicalSelfBody } from "./request/CanonicalBody.js"
import type { SelfLaunchBody } from "./request/DecodeLaunchRequest.js"
import type { SelfCaller } from "./SolanaSelfLaunch.js"
import { tokenOfCurve } from "./HoodHeadlessLaunch.js"
import { type HoodOperation, type HoodOperationLeg, newOperation, step as stepOperation } from "./HoodOperation.js"

/** The factory's metadata URI bound (bytes). */
const FACTORY_URI_MAX_BYTES = 512

/** An unsigned Hood transaction the relay can sign once (the claim binds its serialized bytes). */
export interface HoodUnsignedLeg {
  readonly to: string
  readonly data: string
  /** Wei, decimal string. */
  readonly value: string
  readonly nonce: number
  /** The EIP-1559 transaction, serialized and unsigned (0x hex): what the relay signs. */
  readonly unsignedTransaction: string
  readonly claimId: string
  readonly walletId: string
}

/** A Hood build's artifacts (launch spec 4: `transaction`, `mint`, `pool`, `expiresAt`, `fee`, `feeTransfer`, `clientLaunchId`). */
export interface HoodSelfBuild {
  readonly clientLaunchId: string
  readonly chain: "hood"
  /** The `createCurve` call. */
  readonly transaction: HoodUnsignedLeg
  /** The token the curve will create (its first CREATE). */
  readonly mint: string
  /** The predicted curve address. */
  readonly pool: string
  /** When the sign claims lapse (epoch ms): the relay signs these legs until then. */
  readonly expiresAtMs: number
  readonly fee: { readonly bps: number; readonly feeRaw: string; readonly treasury: string } | null
  /** The platform fee leg (a plain ETH transfer of `fee.feeRaw` to the treasury); null without a fee. */
  readonly feeTransfer: (HoodUnsignedLeg & { readonly quoteAsset: "eth"; readonly amountRaw: string }) | null
  /** A TEE wallet's build: the sequenced operation (its legs are signed one at a time, `nextLeg` first). */
  readonly operation?: HoodOperation
}

export type HoodSelfBuildOutcome = { readonly _tag: "Built"; readonly build: HoodSelfBuild } | { readonly _tag: "Replay"; readonly result: StoredResult }

export interface HoodSelfConfirmInput {
  readonly clientLaunchId: string
  /** The broadcast `createCurve` hash (a linked wallet's build). */
  readonly signature?: string | undefined
  /** A TEE build's operation, and its next leg signed through the relay (2.3). `operationId` alone advances from what the chain shows. */
  readonly operationId?: string | undefined
  readonly signedTransaction?: string | undefined
  readonly feeTxHash?: string | undefined
  readonly devBuySignature?: string | undefined
}

export interface HoodSelfLaunchShape {
  readonly dryRun: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<Record<string, unknown>, LaunchError>
  readonly build: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<HoodSelfBuildOutcome, LaunchError>
  readonly confirm: (caller: SelfCaller, input: HoodSelfConfirmInput) => Effect.Effect<StoredResult, LaunchError>
}

export class HoodSelfLaunch extends Context.Tag("curvestream/HoodSelfLaunch")<HoodSelfLaunch, HoodSelfLaunchShape>() {}

export interface HoodSelfLaunchConfig {
  readonly chain: Chain | undefined
  readonly rpcUrl: string | undefined
  readonly factory: Address | undefined
  readonly bondingCurveBytecode: Hex | undefined
  readonly usdg?: Address
  readonly explorerUrl?: string
  readonly baseUrl: string
  readonly exclusiveHolderPassRaw: bigint
  readonly teeLaunchBuysEnabled: boolean
}

export interface HoodSelfLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly wallets: WalletServiceShape
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
}

/** What a Hood build resolved, stored beside it. */
interface Resolved {
  readonly metadataUri: string
  readonly factory: Address
  readonly salt: Hex
  readonly nonce: number
}

type StoredFee = NonNullable<HoodSelfBuild["fee"]> & { readonly leg: NonNullable<HoodSelfBuild["feeTransfer"]> }

const storage = launchStorage

/** How long a confirm carrying a signed leg waits for its receipt before answering the operation as it stands. */
const OPERATION_WAIT_MS = 30_000

/** The gas limit of a TEE operation's dev-buy leg, built before its curve exists (a curve buy uses well under it). */
const DEV_BUY_GAS_LIMIT = 500_000n

/** `retryAfter` of a TEE repeat build refused while its signed attempt can still land (an EVM transaction has no expiry to wait for). */
const TEE_RETRY_AFTER_MS = 60_000

const randomBytesHex = (n: number): string => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString("hex")

/** The ETH dev buy on a curve not yet created: CurveMath's fill on the virgin curve, less 100 bps (the headless dev buy's slippage). */
const devBuyOnVirginCurve = (body: SelfLaunchBody, curve: Address, curveFeeBps: number) => {
  const economics = findEconomics("hood", body.request.quoteAsset)!
  const params = {
    virtualQuoteRaw: body.request.curve.virtualQuoteRaw,
    thresholdRaw: body.request.curve.thresholdRaw,
    tokenReserveRaw: tokenReserveRaw(economics.tokenSupplyRaw, body.request.stakerAllocationBps),
    feeBps: BigInt(curveFeeBps),
    crossingModel: "capped-refund" as const
  }
  return devBuyPlan(curve, params, initialState(params), body.request.buyAmountRaw, 100n)
}

const chainRead = (what: string) => (e: unknown) =>
  launchFailure("launch_failed", `${what} failed: ${e instanceof BaseError ? e.shortMessage : String(e)}`, { retryable: true, details: { reason: "chain_read_failed" } })

export const make = (config: HoodSelfLaunchConfig, deps: HoodSelfLaunchDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { ledger, images, wallets } = deps
    const pc: PublicClient | undefined = config.chain !== undefined && config.rpcUrl !== undefined ? hoodPublicClient(config.chain, config.rpcUrl) : undefined
    const withSql = <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(self, SqlClient.SqlClient, sql)

    const rpc = <A>(what: string, f: (c: PublicClient) => Promise<A>) => Effect.tryPromise({ try: () => f(pc!), catch: chainRead(what) })

    const configured = Effect.suspend(() =>
      pc === undefined || config.factory === undefined || config.bondingCurveBytecode === undefined || config.chain === undefined
        ? Effect.fail(
            launchFailure("hood_launch_unavailable", "Hood launches are not configured on this server (RPC, factory or curve bytecode missing)", { retryable: true })
          )
        : Effect.succeed({ factory: config.factory, bytecode: config.bondingCurveBytecode, chain: config.chain })
    )

    const beginInput = (caller: SelfCaller, body: SelfLaunchBody, payer: WalletView): BeginInput => ({
      accountId: caller.accountId,
      clientLaunchId: body.request.clientLaunchId,
      keyId: caller.keyId,
      path: "self",
      chain: "hood",
      payer: payer.walletKind === "tee" ? "tee" : "linked",
      canonicalBody: canonicalSelfBody(body.request, body.linkedWalletId),
      dailyCap: { keyDailyCap: caller.keyDailyCap, plan: caller.plan }
    })

    const feeRawOf = (caller: SelfCaller, body: SelfLaunchBody) => platformFeeRaw(body.request.buyAmountRaw, caller.plan.feeBps)

    /** Every gate before the ledger: plan, payer, TEE and cap, configuration, eligibility, the image (and its URI's bound). */
    const gates = (caller: SelfCaller, body: SelfLaunchBody) =>
      Effect.gen(function* () {
        if (body.request.chain !== "hood" || body.request.dexVersion === null) return yield* Effect.dieMessage("HoodSelfLaunch: not a Hood request")
        yield* selfSignedTier(caller.plan)
        const payer = yield* selfPayer(wallets, caller, body.linkedWalletId, "evm", body.request, feeRawOf(caller, body), config.teeLaunchBuysEnabled)
        const c = yield* configured
        const exclusive = yield* exclusiveEligibility(deps.holdings, config.exclusiveHolderPassRaw, caller.accountId, body.request)
        const pictures = yield* fetchImages(images, body.request)
        const metadataUri = images.hostedUrlOf(pictures.image)
        if (Buffer.byteLength(metadataUri, "utf8") > FACTORY_URI_MAX_BYTES) {
          return yield* launchFailure("validation_failed", `the metadata URI is over the factory's ${FACTORY_URI_MAX_BYTES} bytes`, { field: "imageUrl", retryable: false })
        }
        return { payer, c, exclusive, pictures }
      })

    const createInput = (body: SelfLaunchBody, metadataUri: string, salt: Hex) => ({
      name: body.request.name,
      symbol: body.request.symbol,
      uri: metadataUri,
      quoteToken: quoteTokenOf(body.request.quoteAsset as "eth" | "usdg", config.usdg ?? (USDG_ADDRESS as Address)),
      virtualQuoteRaw: body.request.curve.virtualQuoteRaw,
      thresholdRaw: body.request.curve.thresholdRaw,
      stakerAllocationBps: Number(body.request.stakerAllocationBps),
      dexVersion: body.request.dexVersion!,
      salt
    })

    /** The curve a build predicts for `creator` (its CREATE2 address covers every constructor argument). */
    const predicted = (factory: Address, bytecode: Hex, creator: Address, body: SelfLaunchBody, metadataUri: string, salt: Hex) =>
      Effect.map(
        rpc("factory read", (c) =>
          Promise.all([
            c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "feeSplitter" }),
            c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "curveFeeBps" })
          ])
        ),
        ([feeSplitter, feeBps]) => ({
          curve: predictCurveAddress({ factory, creator, feeSplitter, feeBps, bondingCurveBytecode: bytecode, input: createInput(body, metadataUri, salt) }),
          feeSplitter,
          feeBps
        })
      )

    const treasuryOf = (feeSplitter: Address) => rpc("treasury read", (c) => c.readContract({ address: feeSplitter, abi: feeSplitterAbi, functionName: "treasury" }))

    /** Nonce, gas and fees for `call` from `from`: the serialized unsigned EIP-1559 transaction. */
    const unsigned = (chain: Chain, from: Address, call: HoodCall, nonce: number, what: string, gas?: bigint) =>
      rpc(what, (c) =>
        c.prepareTransactionRequest({ account: from, chain, to: call.to, data: call.data, value: call.value, type: "eip1559", nonce, ...(gas === undefined ? {} : { gas }) })
      ).pipe(
        Effect.catchAll((e) =>
          e.details?.reason === "chain_read_failed" && String(e.message).toLowerCase().includes("insufficient funds")
            ? Effect.fail(launchFailure("insufficient_owner_balance", `${from} cannot cover the gas of ${what}`, { retryable: true }))
            : Effect.fail(e)
        ),
        Effect.map((p) =>
          serializeTransaction({
            type: "eip1559",
            chainId: chain.id,
            nonce: p.nonce,
            gas: p.gas,
            maxFeePerGas: p.maxFeePerGas,
            maxPriorityFeePerGas: p.maxPriorityFeePerGas,
            to: call.to,
            data: call.data,
            value: call.value
          })
        )
      )

    /** A new attempt: the legs built, then (in the ledger's transaction) claimed and stored. */
    const buildAttempt = (
      caller: SelfCaller,
      body: SelfLaunchBody,
      payer: WalletView,
      g: { readonly c: { factory: Address; bytecode: Hex; chain: Chain }; readonly pictures: { readonly image: Parameters<ImageServiceShape["rehost"]>[0]; readonly banner: Parameters<ImageServiceShape["rehost"]>[0] | null } },
      attempt: number,
      admit: (also: Also<unknown>) => Effect.Effect<LaunchRecord | "replay", unknown>
    ) =>
      Effect.gen(function* () {
        const hosted = yield* images.rehost(g.pictures.image).pipe(storage("re-hosting the image"))
        if (g.pictures.banner !== null) yield* images.rehost(g.pictures.banner).pipe(storage("re-hosting the banner"))
        const from = getAddress(payer.address)
        const salt = launchSalt("self", caller.accountId, body.request.clientLaunchId, attempt)
        const { curve, feeSplitter, feeBps } = yield* predicted(g.c.factory, g.c.bytecode, from, body, hosted.url, salt)
        const nonce = yield* rpc("nonce", (c) => c.getTransactionCount({ address: from, blockTag: "pending" }))
        const create = createCurveCall(g.c.factory, createInput(body, hosted.url, salt))
        const createTx = yield* unsigned(g.c.chain, from, create, nonce, "createCurve")
        const feeRaw = feeRawOf(caller, body)
        const treasury = feeRaw > 0n ? yield* treasuryOf(feeSplitter) : null
        const feeCall = treasury === null ? null : ethTransferCall(treasury, feeRaw)
        const feeTx = feeCall === null ? null : yield* unsigned(g.c.chain, from, feeCall, nonce + 1, "feeTransfer")
        // A TEE wallet's dev buy is a leg of its operation, after the fee (rule 4); a linked wallet buys on its own.
        const tee = payer.walletKind === "tee"
        const buy = tee && body.request.buyAmountRaw > 0n ? devBuyOnVirginCurve(body, curve, feeBps) : undefined
        if (tee && body.request.buyAmountRaw > 0n && buy === undefined) {
          return yield* launchFailure("validation_failed", "the dev buy fills nothing on this curve", { field: "buyAmount", retryable: false })
        }
        const buyNonce = nonce + (feeTx === null ? 1 : 2)
        // The curve does not exist yet, so the buy's gas cannot be estimated: it carries a fixed limit (unused gas is not charged).
        const buyTx = buy === undefined ? null : yield* unsigned(g.c.chain, from, buy.call, buyNonce, "devBuy", DEV_BUY_GAS_LIMIT)
        const builtAtMs = yield* Clock.currentTimeMillis
        const token = tokenOfCurve(curve)
        let built: HoodSelfBuild | undefined
        const also: Also<unknown> = (record) =>
          Effect.gen(function* () {
            if (record.attempt !== attempt) return yield* Effect.fail(new Overlap())
            const claim = (tx: Hex) =>
              wallets.recordBuilt({ accountId: caller.accountId, walletId: payer.id, keyId: caller.keyId, chain: "evm", transaction: Buffer.from(tx.slice(2), "hex"), purpose: "launch", txExpiresAtMs: null })
            const createClaim = yield* claim(createTx)
            const feeClaim = feeTx === null ? null : yield* claim(feeTx)
            const leg = (call: HoodCall, tx: Hex, n: number, claimId: string): HoodUnsignedLeg => ({
              to: call.to,
              data: call.data,
              value: call.value.toString(),
              nonce: n,
              unsignedTransaction: tx,
              claimId,
              walletId: payer.id
            })
            const fee = treasury === null ? null : { bps: caller.plan.feeBps, feeRaw: feeRaw.toString(), treasury }
            const buyClaim = buyTx === null ? null : yield* claim(buyTx)
            const operation = !tee
              ? null
              : newOperation(`op_${randomBytesHex(16)}`, [
                  { kind: "createCurve", ...leg(create, createTx, nonce, createClaim.claimId) },
                  ...(feeCall !== null && feeTx !== null && feeClaim !== null ? [{ kind: "feeTransfer" as const, ...leg(feeCall, feeTx, nonce + 1, feeClaim.claimId) }] : []),
                  ...(buy !== undefined && buyTx !== null && buyClaim !== null ? [{ kind: "devBuy" as const, ...leg(buy.call, buyTx, buyNonce, buyClaim.claimId) }] : [])
                ])
            built = {
              clientLaunchId: body.request.clientLaunchId,
              chain: "hood",
              transaction: leg(create, createTx, nonce, createClaim.claimId),
              mint: token,
              pool: curve,
              expiresAtMs: createClaim.expiresAtMs,
              fee,
              feeTransfer:
                feeCall === null || feeTx === null || feeClaim === null
                  ? null
                  : { ...leg(feeCall, feeTx, nonce + 1, feeClaim.claimId), quoteAsset: "eth", amountRaw: feeRaw.toString() },
              ...(operation !== null ? { operation } : {})
            }
            yield* storeBuild<Resolved, StoredFee>({
              accountId: caller.accountId,
              clientLaunchId: body.request.clientLaunchId,
              attempt,
              chain: "hood",
              walletId: payer.id,
              walletKind: tee ? "tee" : "imported",
              payer: from,
              keyId: caller.keyId,
              request: body.request,
              resolved: { metadataUri: hosted.url, factory: g.c.factory, salt, nonce },
              mint: token,
              pool: curve,
              transaction: JSON.stringify(built.transaction),
              lastValidBlockHeight: null,
              expiresAtMs: built.expiresAtMs,
              fee: fee === null || built.feeTransfer === null ? null : { ...fee, leg: built.feeTransfer },
              claimId: createClaim.claimId,
              builtAtMs,
              operation
            })
          })
        const admittedRecord = yield* admit(also)
        return admittedRecord === "replay" ? undefined : built
      })

    const storedOf = (ref: AttemptRef) =>
      withSql(readBuild<Resolved, StoredFee>(ref)).pipe(
        storage("reading the build"),
        Effect.map((r) =>
          r === undefined
            ? undefined
            : {
                row: r,
                build: {
                  clientLaunchId: r.clientLaunchId,
                  chain: "hood",
                  transaction: JSON.parse(r.transaction) as HoodUnsignedLeg,
                  mint: r.mint,
                  pool: r.pool,
                  expiresAtMs: r.expiresAtMs,
                  fee: r.fee === null ? null : { bps: r.fee.bps, feeRaw: r.fee.feeRaw, treasury: r.fee.treasury },
                  feeTransfer: r.fee?.leg ?? null,
                  ...(r.operation !== null ? { operation: r.operation as HoodOperation } : {})
                } satisfies HoodSelfBuild
              }
        )
      )

    const curveExists = (factory: Address, curve: string) =>
      rpc("factory read", (c) => c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "isCurve", args: [getAddress(curve)] }))

    const sweep = (accountId: string) => sweepOwnBuilds(ledger, accountId)

    const build: HoodSelfLaunchShape["build"] = (caller, body) =>
      Effect.gen(function* () {
        // The plan gate first: a refused request sweeps nothing.
        yield* selfSignedTier(caller.plan)
        yield* sweep(caller.accountId)
        const g = yield* gates(caller, body)
        const input = beginInput(caller, body, g.payer)
        const row = yield* ledger.get(input).pipe(storage("reading the launch ledger"))
        const sameRequest = row !== undefined && row.path === "self" && row.bodyHash === idempotencyHash(input.canonicalBody)
        const earlier = sameRequest && (row.state === "submitted" || isRevivable(row)) ? yield* storedOf({ ...input, attempt: row.attempt }) : undefined
        if (earlier !== undefined && (yield* curveExists(g.c.factory, earlier.build.pool))) {
          return yield* launchFailure("idempotency_conflict", "the earlier build of this clientLaunchId created its curve: confirm it; never build again", {
            retryable: false,
            details: { reason: "prior_attempt_on_chain", mint: earlier.build.mint }
          })
        }
        if (earlier?.build.operation !== undefined) {
          // 3.3: a TEE wallet refuses a rebuild while a signed attempt can still land; unsigned, the same operation is the answer.
          const op = earlier.build.operation
          const signed = op.legs[0]?.status !== "pending" || (yield* wallets.claimStatus(earlier.row.claimId).pipe(Effect.mapError(fromWallet)))?.state !== "open"
          if (!signed) return { _tag: "Built", build: earlier.build } satisfies HoodSelfBuildOutcome
          const mined = yield* rpc("nonce", (cl) => cl.getTransactionCount({ address: getAddress(earlier.row.payer), blockTag: "latest" }))
          if (mined <= earlier.row.resolved.nonce) {
            const now = yield* Clock.currentTimeMillis
            return yield* launchFailure("idempotency_conflict", "an earlier signed build of this clientLaunchId can still land: finish its operation (confirm with operationId)", {
              retryable: true,
              details: { reason: "prior_attempt_in_flight", retryAfter: now + TEE_RETRY_AFTER_MS, operationId: op.operationId }
            })
          }
        }
        if (sameRequest && row.state === "submitted") {
          // 3.3: a linked wallet's repeat build gets a NEW curve address (a new attempt in the same slot); so does a TEE build proven dead.
          const ref = { ...input, attempt: row.attempt }
          const rebuilt = yield* buildAttempt(caller, body, g.payer, g, row.attempt + 1, (also) => ledger.rebuild(ref, also)).pipe(admitted)
          if (rebuilt === undefined) return yield* overlapping()
          return { _tag: "Built", build: rebuilt } satisfies HoodSelfBuildOutcome
        }
        const seen = yield* ledger.preview(input).pipe(Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("reading the launch ledger"))
        if (seen._tag === "Replay") return { _tag: "Replay", result: seen.result } satisfies HoodSelfBuildOutcome
        const attempt = row === undefined ? 1 : row.attempt + 1
        const built = yield* buildAttempt(caller, body, g.payer, g, attempt, (also) =>
          Effect.map(ledger.begin(input, also), (a) => (a._tag === "Replay" ? ("replay" as const) : a.record))
        ).pipe(admitted)
        if (built === undefined) {
          const now = yield* ledger.get(input).pipe(storage("reading the launch ledger"))
          return { _tag: "Replay", result: now?.result ?? {} } satisfies HoodSelfBuildOutcome
        }
        return { _tag: "Built", build: built } satisfies HoodSelfBuildOutcome
      })

    const dryRun: HoodSelfLaunchShape["dryRun"] = (caller, body) =>
      Effect.gen(function* () {
        const g = yield* gates(caller, body)
        const request = body.request
        return {
          success: true,
          dryRun: true,
          launchWallet: getAddress(g.payer.address),
          launchWalletId: g.payer.id,
          resolved: {
            chain: request.chain,
            quoteAsset: request.quoteAsset,
            mode: request.mode,
            stakerAllocationBps: Number(request.stakerAllocationBps),
            dexVersion: request.dexVersion,
            visibility: request.visibility,
            buyAmount: request.buyAmountRaw.toString()
          },
          checks: { image: "ok", ...(g.pictures.banner !== null ? { banner: "ok" } : {}), ...(g.exclusive === true ? { exclusiveEligible: true } : {}) },
          matrixVersion: MATRIX_VERSION
        }
      })

    const notFound = selfJobNotFound

    const receiptOf = (hash: string) =>
      rpc("receipt", (c) => c.getTransactionReceipt({ hash: hash as Hash })).pipe(
        Effect.map((r): TransactionReceipt | undefined => r),
        Effect.catchAll(() => Effect.succeed(undefined))
      )
    const transactionOf = (hash: string) =>
      rpc("transaction", (c) => c.getTransaction({ hash: hash as Hash })).pipe(
        Effect.map((t) => ({ from: getAddress(t.from), to: t.to === null ? null : getAddress(t.to), value: t.value, input: t.input, nonce: t.nonce })),
        Effect.catchAll(() => Effect.succeed(undefined))
      )

    /** The fee leg verifies: mined successfully, from the payer, to the treasury, exactly the fee, no calldata. */
    const feeVerified = (fee: StoredFee, payer: Address, hash: string | undefined) =>
      Effect.gen(function* () {
        if (hash === undefined) return false
        const receipt = yield* receiptOf(hash)
        const tx = yield* transactionOf(hash)
        return (
          receipt !== undefined &&
          receipt.status === "success" &&
          tx !== undefined &&
          tx.from === payer &&
          tx.to === getAddress(fee.treasury) &&
          tx.value === BigInt(fee.feeRaw)
        )
      })

    type Stored = NonNullable<Effect.Effect.Success<ReturnType<typeof storedOf>>>

    /** The attempt the chain shows: verify `createCurve` (and the fee, and a reported dev buy), then record the launch. */
    const record = (row: LaunchRecord, stored: Stored, hashes: { signature: string; feeTxHash?: string | undefined; devBuySignature?: string | undefined }) =>
      Effect.gen(function* () {
        const c = yield* configured
        const ref: LaunchRef = { accountId: row.accountId, clientLaunchId: row.clientLaunchId }
        const attemptRef = { ...ref, attempt: row.attempt }
        const payer = getAddress(stored.row.payer)
        const receipt = yield* receiptOf(hashes.signature)
        if (receipt === undefined) {
          // Not mined. Dead only when the payer's nonce moved past the build's and no curve exists.
          const mined = yield* rpc("nonce", (cl) => cl.getTransactionCount({ address: payer, blockTag: "latest" }))
          if (mined > stored.row.resolved.nonce && !(yield* curveExists(c.factory, stored.build.pool))) return yield* notFound()
          return yield* launchFailure("validation_failed", "the createCurve transaction is not mined yet; confirm again once it is", { field: "signature", retryable: true })
        }
        const tx = yield* transactionOf(hashes.signature)
        if (tx === undefined) return yield* launchFailure("launch_failed", "the createCurve transaction is not readable; confirm again", { retryable: true, details: { reason: "chain_read_failed" } })
        if (tx.from !== payer) return yield* launchFailure("signer_mismatch", "the createCurve transaction was not sent by the wallet this launch was built for", { retryable: false })
        // This build's createCurve: to the factory with the build's own calldata (its salt names the attempt). Anything else, failed or not, is not this launch.
        const notThis = launchFailure("validation_failed", "this transaction did not create this launch's curve", { field: "signature", retryable: false })
        if (tx.to !== getAddress(c.factory) || tx.input.toLowerCase() !== stored.build.transaction.data.toLowerCase()) return yield* notThis
        if (receipt.status !== "success") {
          yield* failOnChainFailure(ledger, row)
          return yield* launchFailure("launch_failed", `createCurve ${hashes.signature} reverted on chain; build again with the same clientLaunchId`, {
            retryable: true,
            details: { reason: "reverted", signature: hashes.signature }
          })
        }
        const created = curveCreatedIn(c.factory, receipt)
        if (created === undefined || created.curve !== getAddress(stored.build.pool) || created.creator !== payer) return yield* notThis
        const fee = stored.row.fee
        const feeReused = fee !== null && hashes.feeTxHash !== undefined && (yield* withSql(feeTxUsedElsewhere(attemptRef, hashes.feeTxHash)).pipe(storage("reading the fee leg")))
        if (fee !== null && (feeReused || !(yield* feeVerified(fee, payer, hashes.feeTxHash)))) {
          return yield* launchFailure("fee_leg_missing", "this build's platform fee leg has no verifying feeTxHash; pay only the missing fee with the build's feeTransfer leg, then confirm", {
            retryable: false
          })
        }
        const devBuy = yield* boundDevBuy(stored.row.request.buyAmountRaw, created.curve, hashes.devBuySignature)
        const result = hoodLaunchResult({ baseUrl: config.baseUrl, explorerUrl: config.explorerUrl }, stored.row.request, created, devBuy)
        const onChain = { mint: created.token, pool: created.curve, signature: created.txHash }
        const writes: Also = (r) =>
          Effect.gen(function* () {
            yield* attribute(
              { accountId: row.accountId, keyId: stored.row.keyId, path: "self", chain: "hood", mint: created.token, visibility: stored.row.request.visibility },
              deps.agentLaunches
            )(r)
            // One fee transfer pays one launch: the unique index refuses a race that passed the check above.
            if (fee !== null && hashes.feeTxHash !== undefined) yield* recordFeeTx(attemptRef, hashes.feeTxHash)
            yield* confirmedWrites({ keyId: stored.row.keyId, fee: fee === null ? null : { quoteAsset: "eth", feeRaw: BigInt(fee.feeRaw) }, devBuy: result.devBuy })(r)
          })
        const confirmed = yield* recordConfirmed(ledger, row, result, onChain, writes)
        const claims = stored.build.operation?.legs.map((l) => l.claimId) ?? [stored.row.claimId, ...(fee !== null ? [fee.leg.claimId] : [])]
        for (const claimId of claims) yield* wallets.settleClaim(claimId, "confirmed").pipe(Effect.ignore)
        return confirmed
      })

    // ---- the sequenced TEE operation ---------------------------------------------------------

    /** Compare-and-swap of the stored operation: a confirm that lost the race to another answers retryable and wrote nothing. */
    const saveOperation = (ref: AttemptRef, from: HoodOperation, to: HoodOperation) =>
      withSql(updateOperation(ref, from, to)).pipe(
        storage("recording the operation"),
        Effect.flatMap((saved) =>
          saved
            ? Effect.void
            : Effect.fail(launchFailure("launch_failed", "another confirm is advancing this operation; confirm again with the same operationId", { retryable: true, details: { reason: "build_in_progress" } }))
        )
      )

    /** A leg rebuilt for the payer on `nonce` with a new claim (a reissued fee leg, or a later leg moved after it). */
    const reissue = (caller: SelfCaller, stored: Stored, op: HoodOperation, leg: HoodOperationLeg, nonce: number) =>
      Effect.gen(function* () {
        const c = yield* configured
        const from = getAddress(stored.row.payer)
        const call: HoodCall = { to: getAddress(leg.to), data: leg.data as Hex, value: BigInt(leg.value) }
        const tx = yield* unsigned(c.chain, from, call, nonce, leg.kind, leg.kind === "devBuy" ? DEV_BUY_GAS_LIMIT : undefined)
        const claim = yield* wallets
          .recordBuilt({ accountId: caller.accountId, walletId: stored.row.walletId, keyId: caller.keyId, chain: "evm", transaction: Buffer.from(tx.slice(2), "hex"), purpose: "launch", txExpiresAtMs: null })
          .pipe(Effect.mapError(() => launchFailure("launch_failed", "reissuing the leg failed; confirm again", { retryable: true })))
        return stepOperation(op, { _tag: "Reissued", leg: leg.index, unsignedTransaction: tx, nonce, claimId: claim.claimId })
      })

    /**
     * Reads every sent leg. Mined: `Mined` or `Reverted` by its receipt. Not mined: if another
     * transaction used its nonce it can never be mined (`Reverted`); else its stored bytes are
     * broadcast again (a crash or a refused send after the hash was recorded). A reverted fee leg is
     * reissued on a fresh nonce with a new claim, and the legs after it move to the nonces after it
     * (3.4); a reverted buy is final (rule 4).
     */
    const observe = (caller: SelfCaller, stored: Stored, op: HoodOperation) =>
      Effect.gen(function* () {
        const from = getAddress(stored.row.payer)
        let next = op
        for (const leg of op.legs) {
          if (leg.status !== "sent" || leg.txHash === null) continue
          const receipt = yield* receiptOf(leg.txHash)
          if (receipt === undefined) {
            const used = yield* rpc("nonce", (cl) => cl.getTransactionCount({ address: from, blockTag: "latest" }))
            if (used > leg.nonce) {
              // Another transaction took the nonce (or ours was mined meanwhile: read once more).
              if ((yield* receiptOf(leg.txHash)) === undefined) next = stepOperation(next, { _tag: "Reverted", leg: leg.index })
              else next = stepOperation(next, { _tag: "Mined", leg: leg.index })
            } else if (leg.signedTransaction != null) {
              yield* rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: leg.signedTransaction as Hex })).pipe(Effect.ignore)
            }
            continue
          }
          next = stepOperation(next, { _tag: receipt.status === "success" ? "Mined" : "Reverted", leg: leg.index })
        }
        for (const leg of next.legs) {
          if (leg.status !== "reverted" || leg.kind !== "feeTransfer") continue
          let nonce = yield* rpc("nonce", (cl) => cl.getTransactionCount({ address: from, blockTag: "pending" }))
          next = yield* reissue(caller, stored, next, leg, nonce)
          for (const later of next.legs.filter((l) => l.index > leg.index && l.status === "pending")) {
            nonce += 1
            next = yield* reissue(caller, stored, next, later, nonce)
          }
        }
        return next
      })

    /** The signed `nextLeg`: exactly the leg's unsigned transaction, signed by the payer. */
    const signedLeg = (op: HoodOperation, payer: Address, signedTransaction: string) =>
      Effect.gen(function* () {
        const leg = op.nextLeg === null ? undefined : op.legs[op.nextLeg]
        const refused = launchFailure("validation_failed", "signedTransaction is not the operation's next leg signed by its wallet", { field: "signedTransaction", retryable: false })
        if (leg === undefined || leg.status !== "pending" || !/^0x[0-9a-fA-F]+$/.test(signedTransaction)) return yield* refused
        const parsed = yield* Effect.try({ try: () => parseTransaction(signedTransaction as Hex), catch: () => refused })
        const { r: _r, s: _s, v: _v, yParity: _y, ...fields } = parsed as typeof parsed & { r?: Hex; s?: Hex; v?: bigint; yParity?: number }
        const same = yield* Effect.try({ try: () => serializeTransaction(fields as Parameters<typeof serializeTransaction>[0]) === leg.unsignedTransaction, catch: () => refused })
        const signer = yield* Effect.tryPromise({ try: () => recoverTransactionAddress({ serializedTransaction: signedTransaction as never }), catch: () => refused })
        if (!same || getAddress(signer) !== payer) return yield* refused
        return { leg, hash: keccak256(signedTransaction as Hex) }
      })

    /** One step of a TEE operation: read the chain, take the signed next leg (recorded before it is sent), and record the launch once every leg is mined. */
    const advance = (caller: SelfCaller, row: LaunchRecord, stored: Stored, op0: HoodOperation, input: HoodSelfConfirmInput) =>
      Effect.gen(function* () {
        if (input.operationId !== op0.operationId) {
          return yield* launchFailure("validation_failed", "operationId does not name this launch's operation", { field: "operationId", retryable: false })
        }
        const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
        const payer = getAddress(stored.row.payer)
        let saved = op0
        const save = (to: HoodOperation) => (to === saved ? Effect.void : Effect.tap(saveOperation(ref, saved, to), () => Effect.sync(() => void (saved = to))))
        let op = yield* observe(caller, stored, op0)
        yield* save(op)
        if (input.signedTransaction !== undefined) {
          const { leg, hash } = yield* signedLeg(op, payer, input.signedTransaction)
          // Recorded (hash and bytes) before it is broadcast: a crash or a refused send is retried from the record.
          op = stepOperation(op, { _tag: "Signed", leg: leg.index, txHash: hash, signedTransaction: input.signedTransaction })
          yield* save(op)
          yield* rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: input.signedTransaction as Hex })).pipe(Effect.ignore)
          yield* rpc("receipt", (c) => c.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: OPERATION_WAIT_MS })).pipe(Effect.ignore)
          op = yield* observe(caller, stored, op)
          yield* save(op)
        }
        if (op.state === "failed") {
          yield* failOnChainFailure(ledger, row)
          return yield* launchFailure("launch_failed", "createCurve reverted on chain; build again with the same clientLaunchId", { retryable: true, details: { reason: "reverted" } })
        }
        if (op.nextLeg !== null) return { success: true, clientLaunchId: row.clientLaunchId, operation: op } satisfies StoredResult
        const hashOf = (kind: string) => op.legs.find((l) => l.kind === kind)?.txHash ?? undefined
        const result = yield* record(row, stored, { signature: hashOf("createCurve")!, feeTxHash: hashOf("feeTransfer"), devBuySignature: hashOf("devBuy") })
        yield* save(stepOperation(op, { _tag: "Recorded" })).pipe(Effect.ignore)
        return result
      })

    const confirm: HoodSelfLaunchShape["confirm"] = (caller, input) =>
      Effect.gen(function* () {
        yield* selfSignedTier(caller.plan)
        yield* configured
        const ref: LaunchRef = { accountId: caller.accountId, clientLaunchId: input.clientLaunchId }
        const row = yield* ledger.get(ref).pipe(storage("reading the launch ledger"))
        if (row === undefined || row.path !== "self" || row.chain !== "hood") return yield* notFound()
        if (row.state === "confirmed") return row.result ?? {}
        if (row.state === "failed" && !isRevivable(row)) return yield* notFound()
        const stored = yield* storedOf({ ...ref, attempt: row.attempt })
        if (stored === undefined) return yield* notFound()
        yield* payerRules(wallets, caller.principal, stored.row.walletId, "evm")
        const op = stored.build.operation
        if (op !== undefined) return yield* advance(caller, row, stored, op, input)
        if (input.signature === undefined) return yield* launchFailure("validation_failed", "signature is required: the broadcast createCurve hash", { field: "signature", retryable: false })
        // The confirm body carries no chain: a hash that is not 0x and 32 bytes is refused, not read as "not mined yet" or an unpaid fee.
        for (const field of ["signature", "feeTxHash", "devBuySignature"] as const) {
          const hash = input[field]
          if (hash !== undefined && !isEvmTxHash(hash)) {
            return yield* launchFailure("validation_failed", `${field} must be a Hood transaction hash (0x and 32 bytes)`, { field, retryable: false })
          }
        }
        return yield* record(row, stored, { signature: input.signature, feeTxHash: input.feeTxHash, devBuySignature: input.devBuySignature })
      })

    /** Endpoint rule 5: a dev buy is bound only when it went to the curve with exactly `buyAmount`; else it is ignored. */
    const boundDevBuy = (buyAmountRaw: bigint, curve: Address, hash: string | undefined) =>
      Effect.gen(function* () {
        if (hash === undefined || buyAmountRaw === 0n) return null
        const tx = yield* transactionOf(hash)
        if (tx === undefined || tx.to !== curve || tx.value !== buyAmountRaw) return null
        const receipt = yield* receiptOf(hash)
        const outcome = receipt === undefined ? "pending" : receipt.status === "success" ? "landed" : "reverted"
        return { ...(outcome === "landed" ? { signature: hash } : { pendingSignature: hash }), outcome }
      })

    return { dryRun, build, confirm } satisfies HoodSelfLaunchShape
  })

export const layer = (
  config: HoodSelfLaunchConfig
): Layer.Layer<HoodSelfLaunch, never, SqlClient.SqlClient | LaunchLedger | ImageService | WalletService | TierService | AgentLaunchRegistry> =>
  Layer.effect(
    HoodSelfLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        wallets: yield* WalletService,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry
      })
    })
  )
