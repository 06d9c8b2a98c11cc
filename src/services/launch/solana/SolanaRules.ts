/**
 * The pure parts of a Solana launch (launch spec 2.5, 2.6): the oversize refusal, a request's
 * curve terms and its launch transaction's input, the blocks a blockhash has left, the stand-ins
 * sizing uses, and whether the node (not the transport) refused a send. No I/O.
 */
import { type Address, address, isSolanaError, type TransactionSigner } from "@solana/kit"
import { findEconomics } from "../../../domain/Economics.js"
import { findQuotePair } from "../../../domain/QuotePairs.js"
import type { BlockhashLifetime } from "../../../chain/solana/client/Transactions.js"
import type { LaunchSize, LaunchTerms, LaunchTransactionInput } from "../../../chain/solana/launch/LaunchTransaction.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { SolanaLaunchSpec } from "../SolanaLaunch.js"
import { launchError, type SolanaLaunchError } from "../SolanaLaunchError.js"

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
    creatorFeeBps: r.creatorFeeBps,
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
export const blocksLeftOf = (lifetime: BlockhashLifetime, height: bigint): bigint =>
  lifetime.lastValidBlockHeight > height ? lifetime.lastValidBlockHeight - height : 0n

/** A stand-in lifetime for sizing: a blockhash is 32 bytes whatever its value. */
export const SIZING_LIFETIME: BlockhashLifetime = { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 0n }

/**
 * The id sizing's stand-in mint is derived under, once per process (`SolanaContext.sizingMint`): no
 * attempt has it (account ids are never empty, ledger attempts start at 1), and a size does not
 * depend on the mint's value (every address is 32 bytes, and a mint's derived addresses never
 * coincide with the others of its launch).
 */
export const SIZING_MINT_ID = { accountId: "", clientLaunchId: "", attempt: 0 } as const

/** A JSON-RPC error answered by the node (codes -32768..-32000), as opposed to a transport failure. */
export const nodeAnswered = (e: unknown): boolean => {
  if (!isSolanaError(e)) return false
  const code = e.context.__code as number
  return code >= -32768 && code <= -32000
}
