/**
 * An atomic launch bundle's transactions (launch spec 2.4, 4 rules 8 and 9): the launch (leg 0,
 * `create_curve` without a dev buy, the bundle tip paid by its fee payer, partially signed by the
 * attempt's mint) and one transaction per priced first buy (`BuyLegTransaction.ts`), all on one
 * recent blockhash. Each leg is answered as wire bytes with every slot but the mint's empty, and
 * remembered by its message bytes: a signed leg handed back is the build's leg exactly when its
 * message bytes are equal (`sameMessage`), which is how `/submit` refuses a tampered or re-priced
 * leg (its minimum lives in the message).
 */
import {
  type Address,
  compileTransaction,
  getBase64Decoder,
  getTransactionDecoder,
  getTransactionEncoder,
  partiallySignTransactionMessageWithSigners,
  type TransactionSigner
} from "@solana/kit"
import type { BlockhashLifetime } from "../client/Transactions.js"
import { assembleBuyLeg } from "./BuyLegTransaction.js"
import { assembleLaunchTransaction, type LaunchPlan, type LaunchTransactionInput } from "./LaunchTransaction.js"

export interface AtomicLegInput {
  /** A noop signer for a client leg (the agent signs), the payer's for a server leg. */
  readonly buyer: TransactionSigner
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly platformFeeRaw: bigint
}

export interface AtomicBundleInput {
  /** The launch with `devBuyRaw` 0 and `bundleTip` set. */
  readonly launch: LaunchTransactionInput
  readonly launchPlan: LaunchPlan
  readonly legs: ReadonlyArray<AtomicLegInput>
  readonly treasury: Address
  readonly lifetime: BlockhashLifetime
}

export interface AssembledLeg {
  /** Wire bytes, base64: signatures present only for signers this side holds (the mint on leg 0). */
  readonly wireBase64: string
  /** The compiled message, base64: what a signed copy must carry unchanged. */
  readonly messageBase64: string
  readonly bytes: number
}

export interface AssembledBundle {
  readonly curve: string
  readonly legs: ReadonlyArray<AssembledLeg>
}

const encoder = getTransactionEncoder()
const decoder = getTransactionDecoder()
const base64 = getBase64Decoder()

const toLeg = (tx: ReturnType<typeof compileTransaction>): AssembledLeg => {
  const wire = new Uint8Array(encoder.encode(tx))
  return { wireBase64: base64.decode(wire), messageBase64: base64.decode(new Uint8Array(tx.messageBytes)), bytes: wire.length }
}

export const assembleAtomicBundle = async (i: AtomicBundleInput): Promise<AssembledBundle> => {
  const launch = await assembleLaunchTransaction({ ...i.launch, lifetime: i.lifetime }, i.launchPlan)
  const launchTx = await partiallySignTransactionMessageWithSigners(launch.message)
  const legs = await Promise.all(
    i.legs.map(async (l) =>
      toLeg(
        compileTransaction(
          await assembleBuyLeg({
            buyer: l.buyer,
            mint: i.launch.mint.address,
            quoteMint: i.launch.quoteMint,
            amountInRaw: l.amountInRaw,
            minAmountOutRaw: l.minAmountOutRaw,
            platformFee: { feeRaw: l.platformFeeRaw, treasury: i.treasury },
            lifetime: i.lifetime
          })
        )
      )
    )
  )
  return { curve: launch.curve, legs: [toLeg(launchTx), ...legs] }
}

export interface SignedLeg {
  readonly messageBase64: string
  /** Signer address → whether its signature slot is filled. */
  readonly signed: ReadonlyMap<string, boolean>
  readonly wireBytes: Uint8Array
}

/** Decodes a wire transaction handed back; undefined when it is not one. */
export const readSignedLeg = (wireBase64: string): SignedLeg | undefined => {
  try {
    const wireBytes = new Uint8Array(Buffer.from(wireBase64, "base64"))
    const tx = decoder.decode(wireBytes)
    return {
      messageBase64: base64.decode(new Uint8Array(tx.messageBytes)),
      signed: new Map(Object.entries(tx.signatures).map(([k, v]) => [k, v !== null])),
      wireBytes
    }
  } catch {
    return undefined
  }
}

/** The signed leg is the built one, byte for byte in its message, and signed by every signer. */
export const sameMessage = (built: AssembledLeg, signed: SignedLeg): boolean =>
  built.messageBase64 === signed.messageBase64 && [...signed.signed.values()].every((v) => v)
