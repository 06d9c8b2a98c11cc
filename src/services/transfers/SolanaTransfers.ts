/**
 * The Solana side of the transfer rail: reads the source's balances and the mint, builds the
 * unsigned v0 transfer for the embedded wallet to sign (SOL through the System program; SPL
 * tokens with `TransferChecked`, creating the destination's associated account idempotently when
 * it does not exist, paid by the source), sends signed bytes once and looks at a signature
 * (`TransactionWatch`). Knows nothing of the ledger or the rules.
 */
import {
  address,
  type Address,
  createNoopSigner,
  getBase64Encoder,
  getTransactionEncoder,
  partiallySignTransactionMessageWithSigners,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND
} from "@solana/kit"
import { Effect } from "effect"
import { getCreateAssociatedTokenInstruction, getTokenTransferCheckedInstruction, getTransferSolInstruction } from "../../chain/solana/client/SplInstructions.js"
import { causedBy } from "../../chain/solana/client/NodeRefusals.js"
import { makeTransactionWatch } from "../../chain/solana/client/TransactionWatch.js"
import { memoInstruction } from "../../chain/solana/client/RequestMemo.js"
import { buildTransactionMessage } from "../../chain/solana/client/Transactions.js"
import { findAssociatedTokenAddressSync } from "../../chain/solana/program/Pda.js"
import { TOKEN_PROGRAM_ID } from "../../chain/solana/program/ProgramIds.js"
import type { TransferChainPort } from "./TransferAttempt.js"
import type { TransferRow } from "./TransferStore.js"

export const LAMPORTS_PER_SIGNATURE = 5_000n
/** The network fee of a transfer (one signature). */
export const SOLANA_FEE_LAMPORTS = LAMPORTS_PER_SIGNATURE
/** Rent-exempt minimum of an account of `dataLen` bytes (the runtime's default rent). */
export const rentLamports = (dataLen: number): bigint => BigInt(128 + dataLen) * 6_960n
export const TOKEN_ACCOUNT_RENT = rentLamports(165)
/** The least a system account may keep (rent-exempt with no data); zero closes it. */
export const SYSTEM_ACCOUNT_MIN = rentLamports(0)

export class SolanaUnavailable {
  readonly _tag = "SolanaUnavailable"
  constructor(readonly message: string) {}
}

export interface SolanaSource {
  readonly lamports: bigint
  /** The source's token balance (null for SOL); 0 when it has no token account. */
  readonly tokenRaw: bigint | null
  /** The mint's decimals (null for SOL); undefined: not a classic SPL mint. */
  readonly decimals: number | null | undefined
  /** Whether the destination's associated account must be created (SPL only). */
  readonly createsAccount: boolean
}

export interface SolanaBuilt {
  readonly wire: Uint8Array
  readonly lastValidBlockHeight: bigint
}

const txEncoder = getTransactionEncoder()
const base64 = getBase64Encoder()

export const makeSolanaTransfers = (rpcUrl: string) => {
  const watch = makeTransactionWatch(rpcUrl, (m) => new SolanaUnavailable(m))
  const { rpc, read } = watch

  const account = (a: Address) =>
    Effect.map(
      read("getAccountInfo", (signal) => rpc.getAccountInfo(a, { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })),
      (r) => (r.value === null ? undefined : { owner: r.value.owner, lamports: r.value.lamports, data: new Uint8Array(base64.encode(r.value.data[0])) })
    )

  const u64At = (data: Uint8Array, offset: number): bigint => new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true)

  /** What the rules need to know before building: balances, the mint's decimals, whether the destination's account exists. */
  const source = (owner: string, to: string, mint: string | null) =>
    Effect.gen(function* () {
      const own = yield* account(address(owner))
      const lamports = own?.lamports ?? 0n
      if (mint === null) return { lamports, tokenRaw: null, decimals: null, createsAccount: false } satisfies SolanaSource
      const m = yield* account(address(mint))
      if (m === undefined || m.owner !== TOKEN_PROGRAM_ID || m.data.byteLength < 82) return { lamports, tokenRaw: 0n, decimals: undefined, createsAccount: false } satisfies SolanaSource
      const decimals = m.data[44]!
      const src = yield* account(findAssociatedTokenAddressSync(address(owner), address(mint)).address)
      const dst = yield* account(findAssociatedTokenAddressSync(address(to), address(mint)).address)
      return {
        lamports,
        tokenRaw: src === undefined || src.data.byteLength < 72 ? 0n : u64At(src.data, 64),
        decimals,
        createsAccount: dst === undefined
      } satisfies SolanaSource
    })

  /** The unsigned v0 transfer, fee paid by the owner. */
  /** `memo`: the request's (`RequestMemo.ts`), so two transfers with the same content in one blockhash are two transactions. */
  const build = (i: {
    readonly owner: string
    readonly to: string
    readonly mint: string | null
    readonly amountRaw: bigint
    readonly decimals: number | null
    readonly createsAccount: boolean
    readonly memo: string
  }) =>
    Effect.gen(function* () {
      const owner = address(i.owner)
      const signer = createNoopSigner(owner)
      const to = address(i.to)
      const instructions =
        i.mint === null
          ? [getTransferSolInstruction({ from: signer, to, lamports: i.amountRaw })]
          : (() => {
              const mint = address(i.mint)
              const destination = findAssociatedTokenAddressSync(to, mint).address
              return [
                ...(i.createsAccount ? [getCreateAssociatedTokenInstruction({ payer: signer, ata: destination, owner: to, mint })] : []),
                getTokenTransferCheckedInstruction({
                  source: findAssociatedTokenAddressSync(owner, mint).address,
                  mint,
                  destination,
                  authority: signer,
                  amount: i.amountRaw,
                  decimals: i.decimals ?? 0
                })
              ]
            })()
      const latest = yield* read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal }))
      const message = buildTransactionMessage({ feePayer: signer, lifetime: latest.value, instructions: [...instructions, memoInstruction(i.memo)] })
      const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(message))
      return { wire: new Uint8Array(txEncoder.encode(partial)), lastValidBlockHeight: latest.value.lastValidBlockHeight } satisfies SolanaBuilt
    })

  const port: TransferChainPort = {
    // An unknown blockhash is final: those bytes never land, whoever holds them.
    send: (wire) => watch.send(wire).pipe(Effect.mapError((r) => ({ message: r.message, final: causedBy(r.cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND) }))),
    observe: (row: TransferRow) => watch.observe(row.signature, row.lastValidBlockHeight ?? 0n)
  }

  return { source, build, port }
}

export type SolanaTransfers = ReturnType<typeof makeSolanaTransfers>
