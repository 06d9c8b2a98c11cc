/**
 * One attempt of a Hood self-signed build (launch spec 3.2, 3.3): its legs built for the payer
 * (`createCurve`, the fee transfer, a TEE wallet's dev buy), then, inside the ledger transaction
 * that admits the attempt, claimed with the wallet service and stored (`self_launch_builds`); and
 * the stored build read back by a repeat build or a confirm.
 */
import { Clock, Effect } from "effect"
import { type Address, type Chain, getAddress, type Hex } from "viem"
import { createCurveCall, ethTransferCall, type HoodCall, launchSalt, platformFeeRaw } from "../../../chain/hood/launch/HeadlessCalls.js"
import { USDG_ADDRESS } from "../../../domain/QuotePairs.js"
import type { LaunchPictures } from "../../images/ImageService.js"
import type { WalletView } from "../../wallets/WalletService.js"
import { tokenOfCurve } from "../HoodHeadlessLaunch.js"
import { type HoodOperation, newOperation } from "../HoodOperation.js"
import type { HoodSelfBuild, HoodUnsignedLeg } from "../HoodSelfLaunch.js"
import { launchStorage } from "../internal/LaunchGates.js"
import { Overlap, readBuild, storeBuild } from "../internal/SelfBuilds.js"
import type { Also, AttemptRef, LaunchRecord } from "../LaunchLedger.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfLaunchBody } from "../request/DecodeLaunchRequest.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { HoodSelfContext, Resolved, Stored, StoredFee } from "./HoodSelfContext.js"
import type { HoodSelfSpend } from "./HoodSelfSpend.js"
import { createInput, DEV_BUY_GAS_LIMIT, devBuyOnVirginCurve } from "./HoodSelfRules.js"

const storage = launchStorage

const randomBytesHex = (n: number): string => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString("hex")

export const platformFeeOf = (caller: SelfCaller, body: SelfLaunchBody) => platformFeeRaw(body.request.buyAmountRaw, caller.plan.feeBps)

export type HoodSelfAttempts = ReturnType<typeof makeHoodSelfAttempts>

export const makeHoodSelfAttempts = (ctx: HoodSelfContext, spend: HoodSelfSpend) => {
  const { images, wallets } = ctx.deps
  const { chain, withSql } = ctx
  const feeRawOf = platformFeeOf

  /** A new attempt: the legs built, then (in the ledger's transaction) claimed and stored. */
  const buildAttempt = (
    caller: SelfCaller,
    body: SelfLaunchBody,
    payer: WalletView,
    g: { readonly c: { factory: Address; bytecode: Hex; chain: Chain }; readonly pictures: LaunchPictures },
    attempt: number,
    admit: (also: Also<unknown>) => Effect.Effect<LaunchRecord | "replay", unknown>
  ) =>
    Effect.gen(function* () {
      const hosted = yield* images.hostLaunch(body.request, g.pictures).pipe(storage("re-hosting the images and the metadata document"))
      const from = getAddress(payer.address)
      const salt = launchSalt("self", caller.accountId, body.request.clientLaunchId, attempt)
      const { curve, feeSplitter, feeBps } = yield* chain.predicted(g.c.factory, g.c.bytecode, from, body, hosted.metadataUrl, salt)
      const nonce = yield* chain.rpc("nonce", (c) => c.getTransactionCount({ address: from, blockTag: "pending" }))
      const create = createCurveCall(g.c.factory, createInput(body, hosted.metadataUrl, salt, ctx.config.usdg ?? (USDG_ADDRESS as Address)))
      const createTx = yield* chain.unsigned(g.c.chain, from, create, nonce, "createCurve")
      const feeRaw = feeRawOf(caller, body)
      const treasury = feeRaw > 0n ? yield* chain.treasuryOf(feeSplitter) : null
      const feeCall = treasury === null ? null : ethTransferCall(treasury, feeRaw)
      const feeTx = feeCall === null ? null : yield* chain.unsigned(g.c.chain, from, feeCall, nonce + 1, "feeTransfer")
      // A TEE wallet's dev buy is a leg of its operation, after the fee (rule 4); a linked wallet buys on its own.
      const tee = payer.walletKind === "tee"
      const buy = tee && body.request.buyAmountRaw > 0n ? devBuyOnVirginCurve(body, curve, feeBps) : undefined
      if (tee && body.request.buyAmountRaw > 0n && buy === undefined) {
        return yield* launchFailure("validation_failed", "the dev buy fills nothing on this curve", { field: "buyAmount", retryable: false })
      }
      const buyNonce = nonce + (feeTx === null ? 1 : 2)
      // The curve does not exist yet, so the buy's gas cannot be estimated: it carries a fixed limit (unused gas is not charged).
      const buyTx = buy === undefined ? null : yield* chain.unsigned(g.c.chain, from, buy.call, buyNonce, "devBuy", DEV_BUY_GAS_LIMIT)
      const builtAtMs = yield* Clock.currentTimeMillis
      const token = tokenOfCurve(curve)
      // A TEE wallet's dev buy through the spend gate (launch spec 3.1, document 2, 4.1): held against the key's USD window
      // in the accepting transaction, before any leg is signed; past it the attempt is refused and nothing is recorded.
      const devBuy = buyTx === null ? undefined : yield* spend.devBuySpend(caller, body.request, payer)
      let built: HoodSelfBuild | undefined
      const also: Also<unknown> = (record) =>
        Effect.gen(function* () {
          if (record.attempt !== attempt) return yield* Effect.fail(new Overlap())
          yield* spend.holdIn(caller, { accountId: caller.accountId, clientLaunchId: body.request.clientLaunchId, attempt }, devBuy)
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
          // The hold outlives every leg's sign claim: an unsigned leg's hold is swept only once nothing can sign it.
          if (devBuy !== undefined && buyClaim !== null) {
            const lastSignable = Math.max(createClaim.expiresAtMs, feeClaim?.expiresAtMs ?? 0, buyClaim.expiresAtMs)
            yield* spend.keepUntilIn({ accountId: caller.accountId, clientLaunchId: body.request.clientLaunchId, attempt }, lastSignable)
          }
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
            resolved: { metadataUri: hosted.metadataUrl, factory: g.c.factory, salt, nonce },
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

  const storedOf = (ref: AttemptRef): Effect.Effect<Stored | undefined, LaunchError> =>
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

  return { buildAttempt, storedOf }
}
