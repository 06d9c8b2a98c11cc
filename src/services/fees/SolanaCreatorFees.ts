/**
 * Creator fees on Solana: svc-curve's fee vault of a mint holds what its creator is owed now
 * (`creatorOwedRaw`: the creator's 30 % of curve fees, plus the graduated pool's creator fee on
 * exp-* launches), in the curve's quote asset; `claim_creator_fee` pays it all to the recorded
 * creator. This module reads that figure and claims it from the embedded wallet (the creator's
 * quote token account is created first when missing, the embedded wallet paying its rent).
 */
import { type Address, address, createNoopSigner, getBase64Encoder, partiallySignTransactionMessageWithSigners, getTransactionEncoder, signature as asSignature } from "@solana/kit"
import { Effect } from "effect"
import { getClaimCreatorFeeInstruction } from "../../chain/solana/client/CurveInstructions.js"
import { getCreateAssociatedTokenInstruction } from "../../chain/solana/client/SplInstructions.js"
import { makeTransactionWatch } from "../../chain/solana/client/TransactionWatch.js"
import { buildTransactionMessage } from "../../chain/solana/client/Transactions.js"
import { decodeFeeVault } from "../../chain/solana/program/accounts/FeeVault.js"
import { decodeMetadata } from "../../chain/solana/program/accounts/Metadata.js"
import { decodeSplMint } from "../../chain/solana/program/accounts/SplMint.js"
import { curveEventsFromLogs } from "../../chain/solana/program/Events.js"
import { curveAddressesSync, findAssociatedTokenAddressSync } from "../../chain/solana/program/Pda.js"
import { SVC_CURVE_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../chain/solana/program/ProgramIds.js"
import { QuotePairs } from "../../domain/QuotePairs.js"
import { feeError } from "./FeeError.js"

/** Solana's token-account rent (165 bytes): 0.00203928 SOL (spec 4.3 rule 3). */
export const TOKEN_ACCOUNT_RENT_LAMPORTS = 2_039_280n
/** A SOL amount must exceed this to be claimed (spec 4.3 rule 4). */
export const SOL_DUST_LAMPORTS = 50_000n
export const SIGNATURE_FEE_LAMPORTS = 5_000n
/** The embedded wallet stays rent-exempt after paying. */
export const PAYER_RESERVE_LAMPORTS = 890_880n

export interface SolanaFeeRead {
  readonly recipient: string
  readonly symbol: string
  readonly name: string
  readonly quoteMint: string
  readonly quoteSymbol: string
  readonly quoteDecimals: number
  readonly owedRaw: bigint
  /** SPL quote: whether the recipient already has a token account for it (else the claim pays rent). */
  readonly hasQuoteAccount: boolean
}

const b64 = getBase64Encoder()
const txEncoder = getTransactionEncoder()

export const makeSolanaCreatorFees = (rpcUrl: string) => {
  const watch = makeTransactionWatch(rpcUrl, (message) => feeError("chain_unavailable", message, { retryable: true }))
  const { rpc, read } = watch

  const accounts = (addresses: ReadonlyArray<Address>) =>
    Effect.map(
      read("getMultipleAccounts", (signal) => rpc.getMultipleAccounts([...addresses], { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })),
      (r) => r.value.map((a) => (a === null ? undefined : { owner: a.owner, lamports: a.lamports, data: new Uint8Array(b64.encode(a.data[0])) }))
    )

  /** What the fee vault of `mint` owes its creator now; undefined when the mint has no svc-curve fee vault. */
  const readFees = (mintText: string) =>
    Effect.gen(function* () {
      const mint = address(mintText)
      const a = curveAddressesSync(mint)
      const [vaultAccount, metadataAccount] = yield* accounts([a.feeVault.address, a.metadata.address])
      const vault = vaultAccount !== undefined && vaultAccount.owner === SVC_CURVE_PROGRAM_ID ? decodeFeeVault(vaultAccount.data) : undefined
      if (vault === undefined) return undefined
      const metadata = metadataAccount === undefined ? undefined : decodeMetadata(metadataAccount.data)
      const native = vault.quoteMint === WSOL_MINT_ADDRESS
      const quoteAta = findAssociatedTokenAddressSync(vault.creator, vault.quoteMint).address
      const [quoteMintAccount, ata] = yield* accounts([vault.quoteMint, quoteAta])
      const decimals = quoteMintAccount === undefined ? undefined : decodeSplMint(quoteMintAccount.data)?.decimals
      if (decimals === undefined) return yield* feeError("chain_unavailable", `the quote mint ${vault.quoteMint} is not readable`, { retryable: true })
      return {
        recipient: vault.creator,
        symbol: metadata?.symbol ?? "",
        name: metadata?.name ?? "",
        quoteMint: native ? WSOL_MINT_ADDRESS : vault.quoteMint,
        quoteSymbol: QuotePairs.find((q) => q.chain === "solana" && q.address === vault.quoteMint)?.symbol ?? "",
        quoteDecimals: decimals,
        owedRaw: vault.creatorOwedRaw,
        hasQuoteAccount: native || ata !== undefined
      } satisfies SolanaFeeRead
    })

  const lamportsOf = (owner: string) =>
    Effect.map(read("getBalance", (signal) => rpc.getBalance(address(owner), { commitment: "confirmed" }).send({ abortSignal: signal })), (r) => r.value)

  /** The claim transaction for the recipient to sign (its quote token account created first when missing). */
  const buildClaim = (mintText: string, fees: SolanaFeeRead) =>
    Effect.gen(function* () {
      const creator = createNoopSigner(address(fees.recipient))
      const quoteMint = address(fees.quoteMint)
      const native = quoteMint === WSOL_MINT_ADDRESS
      const latest = yield* read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal }))
      const claim = yield* Effect.promise(() => getClaimCreatorFeeInstruction({ creator, mint: address(mintText), quoteMint }))
      const instructions = native
        ? [claim]
        : [
            getCreateAssociatedTokenInstruction({
              payer: creator,
              ata: findAssociatedTokenAddressSync(creator.address, quoteMint).address,
              owner: creator.address,
              mint: quoteMint
            }),
            claim
          ]
      const message = buildTransactionMessage({ feePayer: creator, lifetime: latest.value, instructions })
      const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(message))
      return { wire: new Uint8Array(txEncoder.encode(partial)), lastValidBlockHeight: latest.value.lastValidBlockHeight }
    })

  /** The amount a landed claim paid, from its `CreatorFeeClaimed` event; undefined when not readable. */
  const claimedAmount = (signatureText: string) =>
    Effect.map(
      read("getTransaction", (signal) =>
        rpc.getTransaction(asSignature(signatureText), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send({ abortSignal: signal })
      ),
      (tx) => {
        const claimed = curveEventsFromLogs(tx?.meta?.logMessages ?? []).find((e) => e.event.kind === "CreatorFeeClaimed")?.event
        return claimed?.kind === "CreatorFeeClaimed" ? claimed.amountRaw : undefined
      }
    )

  return { readFees, lamportsOf, buildClaim, claimedAmount, watch }
}

export type SolanaCreatorFees = ReturnType<typeof makeSolanaCreatorFees>
