/**
 * The launch rails' answers as schemas (launch spec 2.4 to 2.8), shared by the headless,
 * self-signed and atomic routes' declarations (`answer(...)`), from the domain's own lists.
 */
import { Schema } from "effect"
import { HoodLegKinds, HoodLegStatuses } from "../../src/services/launch/HoodOperation.js"
import { LaunchStates } from "../../src/services/launch/LaunchLedgerMachine.js"
import { DexVersions, LaunchModes, Visibilities } from "../../src/services/launch/request/LaunchRequest.js"
import { ChainId, EpochMs, RawAmount, Success } from "../ResponseSchemas.js"

const QuoteAsset = Schema.Literal("sol", "usdc", "svc", "eth", "usdg")

/** 2.9's `curveTerms` of an `exp-*` launch (`CurveMath.curveTerms`). */
export const CurveTerms = Schema.Struct({
  symbol: Schema.String,
  virtualQuoteRaw: RawAmount,
  thresholdRaw: RawAmount,
  raise: Schema.String,
  startFdv: Schema.String,
  bondingFdv: Schema.String,
  supplySoldPct: Schema.String,
  firstBuyRaw: RawAmount,
  firstBuySupplyPct: Schema.String
}).annotations({ identifier: "CurveTerms" })

const TxOutcome = Schema.Literal("landed", "reverted", "pending", "lapsed", "unknown")
const FeeOutcome = Schema.Literal("not_sent", "forgone", "landed", "pending", "unknown", "reverted", "refused", "lapsed")

/** 2.5's `devBuy`: a Solana dev buy rides the launch signature; a Hood one reports its outcomes. */
export const LaunchDevBuy = Schema.Struct({
  signature: Schema.optional(Schema.String),
  outcome: Schema.optional(TxOutcome),
  pendingSignature: Schema.optional(Schema.String),
  feeOutcome: Schema.optional(FeeOutcome),
  fee: Schema.optional(Schema.Struct({ bps: Schema.Int, feeRaw: RawAmount, treasury: Schema.String }))
}).annotations({ identifier: "LaunchDevBuy" })

/** The launch result (2.5): 200 from a headless launch, its replay, and a self-signed confirm. */
export const LaunchResult = Schema.Struct({
  success: Success,
  chain: ChainId,
  mint: Schema.String,
  pool: Schema.NullOr(Schema.String),
  signature: Schema.String,
  quoteAsset: QuoteAsset,
  mode: Schema.Literal(...LaunchModes),
  stakerAllocationBps: Schema.Int,
  matrixVersion: Schema.Int,
  createdDuringStream: Schema.optional(Schema.Literal(false)).annotations({
    description: "General rule 9: streaming is retired, always false (absent on results stored before the field existed)"
  }),
  links: Schema.Struct({ candle: Schema.String, explorer: Schema.optional(Schema.String) }),
  nextBuy: Schema.Struct({ market: Schema.String, quoteAsset: QuoteAsset, marketStateUrl: Schema.String }),
  devBuy: Schema.optional(LaunchDevBuy),
  curveTerms: Schema.optional(CurveTerms)
}).annotations({ identifier: "LaunchResult" })

/** 202 of an `async` headless launch. */
export const LaunchAccepted = Schema.Struct({
  success: Success,
  accepted: Schema.Literal(true),
  clientLaunchId: Schema.String,
  status: Schema.Literal("submitted"),
  jobUrl: Schema.String
}).annotations({ identifier: "LaunchAccepted" })

/** The dry-run result (2.6); the self-signed dry run adds `launchWalletId`. */
export const LaunchDryRun = Schema.Struct({
  success: Success,
  dryRun: Schema.Literal(true),
  launchWallet: Schema.String,
  launchWalletId: Schema.optional(Schema.String),
  resolved: Schema.Struct({
    chain: ChainId,
    quoteAsset: QuoteAsset,
    mode: Schema.Literal(...LaunchModes),
    stakerAllocationBps: Schema.Int,
    creatorFeeBps: Schema.optional(Schema.Literal(100, 200)),
    dexVersion: Schema.NullOr(Schema.Literal(...DexVersions)),
    visibility: Schema.Literal(...Visibilities),
    buyAmount: RawAmount,
    curve: Schema.optional(Schema.Struct({ virtualQuoteRaw: RawAmount, thresholdRaw: RawAmount }))
  }),
  checks: Schema.Struct({
    image: Schema.Literal("ok"),
    banner: Schema.optional(Schema.Literal("ok")),
    exclusiveEligible: Schema.optional(Schema.Literal(true))
  }),
  matrixVersion: Schema.Int,
  size: Schema.optional(Schema.Struct({ txBytes: Schema.Int, limit: Schema.Int, maxNameBytes: Schema.Int, fits: Schema.Literal(true) })),
  curveTerms: Schema.optional(CurveTerms)
}).annotations({ identifier: "LaunchDryRun" })

/** A sequenced Hood TEE operation (`HoodOperation.ts`): its legs are signed one at a time, `nextLeg` first. */
export const HoodOperation = Schema.Struct({
  operationId: Schema.String,
  state: Schema.Literal("awaiting_signature", "confirming", "confirmed", "failed"),
  legs: Schema.Array(
    Schema.Struct({
      index: Schema.Int,
      kind: Schema.Literal(...HoodLegKinds),
      to: Schema.String,
      data: Schema.String,
      value: RawAmount,
      nonce: Schema.Int,
      unsignedTransaction: Schema.String,
      claimId: Schema.String,
      walletId: Schema.String,
      status: Schema.Literal(...HoodLegStatuses),
      txHash: Schema.NullOr(Schema.String),
      signedTransaction: Schema.optional(Schema.NullOr(Schema.String))
    })
  ),
  nextLeg: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "HoodOperation" })

/** The job record (2.7), every path's: a Hood headless dev buy, a Hood TEE operation, an atomic bundle's id. */
export const LaunchJob = Schema.Struct({
  success: Success,
  job: Schema.Struct({
    clientLaunchId: Schema.String,
    chain: ChainId,
    status: Schema.Literal(...LaunchStates),
    mint: Schema.NullOr(Schema.String),
    pool: Schema.NullOr(Schema.String),
    signature: Schema.NullOr(Schema.String),
    createdAt: EpochMs,
    updatedAt: EpochMs,
    errorCode: Schema.optional(Schema.String),
    devBuy: Schema.optional(
      Schema.Struct({ outcome: Schema.NullOr(TxOutcome), pendingSignature: Schema.NullOr(Schema.String), feeOutcome: Schema.NullOr(FeeOutcome) })
    ),
    operation: Schema.optional(HoodOperation),
    bundleId: Schema.optional(Schema.String)
  })
}).annotations({ identifier: "LaunchJob" })

/** `POST /api/v1/uploads/agent-image`. */
export const UploadedImage = Schema.Struct({ success: Success, imageUrl: Schema.String }).annotations({ identifier: "UploadedImage" })

// ---- atomic launches (2.4, 2.8) --------------------------------------------------------------

const OperatorState = Schema.NullOr(Schema.Literal("build_expired", "execution_unknown", "landed_pending_booking", "booked", "reverted"))
const BuyErrorCode = Schema.Literal("SLIPPAGE_EXCEEDED", "TRADE_REVERTED")

/** The atomic build (2.4): the bundle's legs in order, 0 the launch. */
export const AtomicBuilt = Schema.Struct({
  success: Success,
  bundleId: Schema.String,
  clientLaunchId: Schema.String,
  mint: Schema.String,
  expiresAt: EpochMs,
  legs: Schema.Array(
    Schema.Struct({
      index: Schema.Int,
      role: Schema.Literal("launch", "buy"),
      signer: Schema.Literal("server", "client"),
      expectedFill: Schema.optional(Schema.Struct({ amountOutRaw: RawAmount, minAmountOutRaw: RawAmount })),
      unsignedTxBase64: Schema.optional(Schema.String),
      signClaim: Schema.optional(Schema.NullOr(Schema.Struct({ claimId: Schema.String, walletId: Schema.String })))
    })
  )
}).annotations({ identifier: "AtomicBuilt" })

/** A landed submit (2.4, 200). */
export const AtomicLanded = Schema.Struct({
  status: Schema.Literal("landed"),
  bundleId: Schema.String,
  mint: Schema.String,
  signatures: Schema.Array(Schema.NullOr(Schema.String)),
  booking: Schema.Struct({ state: Schema.Literal("booked", "landed_pending_booking"), missing: Schema.Array(Schema.String) })
}).annotations({ identifier: "AtomicLanded" })

/** A sent bundle that did not land (2.4, 502). */
export const AtomicNotLanded = Schema.Struct({
  status: Schema.Literal("failed", "timeout"),
  bundleId: Schema.String,
  retryable: Schema.Literal(false)
}).annotations({ identifier: "AtomicNotLanded" })

/** The bundle record (2.8). */
export const AtomicBundle = Schema.Struct({
  success: Success,
  bundle: Schema.Struct({
    bundleId: Schema.String,
    clientLaunchId: Schema.String,
    mint: Schema.String,
    operatorState: OperatorState,
    signature: Schema.NullOr(Schema.String),
    missingPhases: Schema.Array(Schema.String),
    nextAction: Schema.Literal("submit", "build_again", "wait", "none"),
    buys: Schema.Array(
      Schema.Struct({
        index: Schema.Int,
        clientTradeId: Schema.String,
        operatorState: OperatorState,
        signature: Schema.NullOr(Schema.String),
        rowStatus: Schema.Literal("pending", "confirmed", "failed"),
        errorCode: Schema.NullOr(BuyErrorCode),
        expiredLabelSuperseded: Schema.Boolean
      })
    ),
    attemptState: Schema.Literal("built", "submitting", "signing", "sent", "landed", "failed", "expired"),
    keyPrefix: Schema.String,
    chainOutcome: Schema.NullOr(
      Schema.Struct({
        landed: Schema.Boolean,
        slot: Schema.NullOr(Schema.Int),
        revertedLegs: Schema.Array(Schema.Struct({ index: Schema.Int, signature: Schema.NullOr(Schema.String), errorCode: BuyErrorCode }))
      })
    ),
    unknownPhases: Schema.Array(Schema.String),
    lastError: Schema.NullOr(Schema.String),
    lastErrorPhase: Schema.NullOr(Schema.String),
    lastAttemptAt: Schema.NullOr(EpochMs),
    recoveryAttempts: Schema.Int
  })
}).annotations({ identifier: "AtomicBundle" })

// ---- self-signed launches (2.3) --------------------------------------------------------------

const PlatformFee = Schema.NullOr(Schema.Struct({ bps: Schema.Int, feeRaw: RawAmount, treasury: Schema.String }))
const SignClaim = Schema.Struct({ claimId: Schema.String, walletId: Schema.String })
const HoodUnsignedLeg = {
  to: Schema.String,
  data: Schema.String,
  value: RawAmount,
  nonce: Schema.Int,
  unsignedTransaction: Schema.String,
  claimId: Schema.String,
  walletId: Schema.String
}

/** A Solana self-signed build: the transaction with the mint's signature in place, and the sign claim. */
export const SolanaSelfBuilt = Schema.Struct({
  success: Success,
  clientLaunchId: Schema.String,
  chain: Schema.Literal("solana"),
  transaction: Schema.String,
  mint: Schema.String,
  pool: Schema.String,
  expiresAt: EpochMs,
  fee: PlatformFee,
  signClaim: SignClaim,
  matrixVersion: Schema.Int
}).annotations({ identifier: "SolanaSelfBuilt" })

/** A Hood self-signed build: the `createCurve` leg, the fee leg, and a TEE wallet's operation. */
export const HoodSelfBuilt = Schema.Struct({
  success: Success,
  clientLaunchId: Schema.String,
  chain: Schema.Literal("hood"),
  transaction: Schema.Struct(HoodUnsignedLeg),
  mint: Schema.String,
  pool: Schema.String,
  expiresAt: EpochMs,
  fee: PlatformFee,
  feeTransfer: Schema.NullOr(Schema.Struct({ ...HoodUnsignedLeg, quoteAsset: Schema.Literal("eth"), amountRaw: RawAmount })),
  operation: Schema.optional(HoodOperation),
  matrixVersion: Schema.Int
}).annotations({ identifier: "HoodSelfBuilt" })

/** A sequenced Hood TEE confirm whose operation has a leg still to sign. */
export const HoodOperationPending = Schema.Struct({ success: Success, clientLaunchId: Schema.String, operation: HoodOperation }).annotations({
  identifier: "HoodOperationPending"
})
