/**
 * svc-curve's instructions: a 1-byte discriminator, then little-endian fixed-width arguments;
 * strings are `u8 length` + UTF-8 bytes, so a transaction's size follows its content (the launch
 * size check and `maxNameBytes` depend on it). Each instruction's account list is declared once
 * here, in order, with its signer/writable roles; the program, the client builders and
 * docs/solana-program.md all follow these lists. `decodeSvcCurveInstruction` returns undefined for
 * data that is not a well-formed svc-curve instruction, never throws.
 */
import { ByteReader, ByteWriter, tryDecode, utf8Bytes } from "./internal/bytes.js"
import { codeOf, type CurveMode, CurveModes, valueOf } from "./accounts/Common.js"
import { NAME_BYTES_MAX, SYMBOL_BYTES_MAX, URI_BYTES_MAX } from "./accounts/Metadata.js"

export const SvcCurveInstructionTag = {
  CreateCurve: 0,
  Buy: 1,
  Sell: 2,
  Migrate: 3,
  PoolSwap: 4,
  ClaimCreatorFee: 5
} as const

/** Launched tokens use 6 decimals on Solana (the SPL convention; Economics.ts). */
export const SOLANA_TOKEN_DECIMALS = 6

export interface CreateCurveArgs {
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
  readonly supplyRaw: bigint
  readonly stakerAllocationBps: number
  readonly mode: CurveMode
  readonly creatorFeeBps: number
  readonly name: string
  readonly symbol: string
  readonly uri: string
}

export interface TradeArgs {
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
}

export type PoolSide = "buy" | "sell"

export type SvcCurveInstructionData =
  | ({ readonly kind: "create_curve" } & CreateCurveArgs)
  | ({ readonly kind: "buy" } & TradeArgs)
  | ({ readonly kind: "sell" } & TradeArgs)
  | { readonly kind: "migrate" }
  | ({ readonly kind: "pool_swap"; readonly side: PoolSide } & TradeArgs)
  | { readonly kind: "claim_creator_fee" }

const lpSize = (s: string) => 1 + utf8Bytes(s).length

export const encodeCreateCurve = (a: CreateCurveArgs): Uint8Array =>
  new ByteWriter(1 + 8 * 3 + 2 + 1 + 2 + lpSize(a.name) + lpSize(a.symbol) + lpSize(a.uri))
    .u8(SvcCurveInstructionTag.CreateCurve)
    .u64(a.virtualQuoteRaw)
    .u64(a.thresholdRaw)
    .u64(a.supplyRaw)
    .u16(a.stakerAllocationBps)
    .u8(codeOf(CurveModes, a.mode))
    .u16(a.creatorFeeBps)
    .lpUtf8(a.name, NAME_BYTES_MAX)
    .lpUtf8(a.symbol, SYMBOL_BYTES_MAX)
    .lpUtf8(a.uri, URI_BYTES_MAX)
    .done()

const encodeTrade = (tag: number, a: TradeArgs): Uint8Array =>
  new ByteWriter(17).u8(tag).u64(a.amountInRaw).u64(a.minAmountOutRaw).done()

export const encodeBuy = (a: TradeArgs): Uint8Array => encodeTrade(SvcCurveInstructionTag.Buy, a)
export const encodeSell = (a: TradeArgs): Uint8Array => encodeTrade(SvcCurveInstructionTag.Sell, a)
export const encodeMigrate = (): Uint8Array => Uint8Array.of(SvcCurveInstructionTag.Migrate)
export const encodePoolSwap = (a: TradeArgs & { readonly side: PoolSide }): Uint8Array =>
  new ByteWriter(18)
    .u8(SvcCurveInstructionTag.PoolSwap)
    .u8(a.side === "buy" ? 0 : 1)
    .u64(a.amountInRaw)
    .u64(a.minAmountOutRaw)
    .done()
export const encodeClaimCreatorFee = (): Uint8Array => Uint8Array.of(SvcCurveInstructionTag.ClaimCreatorFee)

export const decodeSvcCurveInstruction = (data: Uint8Array): SvcCurveInstructionData | undefined =>
  tryDecode((): SvcCurveInstructionData | undefined => {
    const r = new ByteReader(data)
    const tag = r.u8()
    let out: SvcCurveInstructionData
    switch (tag) {
      case SvcCurveInstructionTag.CreateCurve:
        out = {
          kind: "create_curve",
          virtualQuoteRaw: r.u64(),
          thresholdRaw: r.u64(),
          supplyRaw: r.u64(),
          stakerAllocationBps: r.u16(),
          mode: valueOf(CurveModes, r.u8()),
          creatorFeeBps: r.u16(),
          name: r.lpUtf8(NAME_BYTES_MAX),
          symbol: r.lpUtf8(SYMBOL_BYTES_MAX),
          uri: r.lpUtf8(URI_BYTES_MAX)
        }
        break
      case SvcCurveInstructionTag.Buy:
        out = { kind: "buy", amountInRaw: r.u64(), minAmountOutRaw: r.u64() }
        break
      case SvcCurveInstructionTag.Sell:
        out = { kind: "sell", amountInRaw: r.u64(), minAmountOutRaw: r.u64() }
        break
      case SvcCurveInstructionTag.Migrate:
        out = { kind: "migrate" }
        break
      case SvcCurveInstructionTag.PoolSwap: {
        const side = r.u8()
        if (side > 1) return undefined
        out = { kind: "pool_swap", side: side === 0 ? "buy" : "sell", amountInRaw: r.u64(), minAmountOutRaw: r.u64() }
        break
      }
      case SvcCurveInstructionTag.ClaimCreatorFee:
        out = { kind: "claim_creator_fee" }
        break
      default:
        return undefined
    }
    r.end()
    return out
  })

// ---------------------------------------------------------------------------------------------
// Account lists, in order. `signer`/`writable` are what the program requires.

export interface AccountSlot<N extends string = string> {
  readonly name: N
  readonly signer: boolean
  readonly writable: boolean
  readonly doc: string
}

const slot = <const N extends string>(name: N, signer: boolean, writable: boolean, doc: string): AccountSlot<N> => ({
  name,
  signer,
  writable,
  doc
})

export const CreateCurveAccounts = [
  slot("creator", true, true, "pays every rent reserve; recorded as the curve's creator"),
  slot("mint", true, true, "a fresh keypair; becomes the SPL mint (6 decimals, authority = curve, then none)"),
  slot("curve", false, true, "PDA [\"curve\", mint]"),
  slot("metadata", false, true, "PDA [\"metadata\", mint]"),
  slot("tokenVault", false, true, "PDA [\"token_vault\", curve]: token account of mint, authority curve"),
  slot("stakerVault", false, true, "PDA [\"staker_vault\", curve]: token account of mint, authority curve"),
  slot("quoteMint", false, false, "WSOL, USDC or SVC mint (any initialized SPL mint)"),
  slot("quoteVault", false, true, "PDA [\"quote_vault\", curve]: lamport vault (WSOL) or token account of quoteMint"),
  slot("feeVault", false, true, "PDA [\"fee_vault\", curve]"),
  slot("feeVaultQuote", false, true, "PDA [\"fee_vault_quote\", feeVault]: lamport vault (WSOL) or token account"),
  slot("config", false, false, "PDA [\"config\"]"),
  slot("systemProgram", false, false, "11111111111111111111111111111111"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

/** Shared by `buy` and `sell`. */
export const TradeAccounts = [
  slot("trader", true, true, "pays (buy) or receives (sell) the quote"),
  slot("curve", false, true, "PDA [\"curve\", mint]"),
  slot("mint", false, false, "the launched mint"),
  slot("tokenVault", false, true, "curve.tokenVault"),
  slot("traderTokenAccount", false, true, "trader's token account of mint (usually its ATA)"),
  slot("quoteVault", false, true, "curve.quoteVault"),
  slot("traderQuoteAccount", false, true, "WSOL pair: the trader itself; SPL pair: trader's token account of quoteMint"),
  slot("feeVault", false, true, "curve.feeVault"),
  slot("feeVaultQuote", false, true, "feeVault.quoteHolder"),
  slot("systemProgram", false, false, "11111111111111111111111111111111"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

export const MigrateAccounts = [
  slot("keeper", true, true, "config.keeper; pays the pool's rent reserves"),
  slot("config", false, false, "PDA [\"config\"]"),
  slot("curve", false, true, "PDA [\"curve\", mint]; must be completed"),
  slot("mint", false, false, "the launched mint"),
  slot("tokenVault", false, true, "curve.tokenVault"),
  slot("quoteVault", false, true, "curve.quoteVault"),
  slot("quoteMint", false, false, "curve.quoteMint"),
  slot("pool", false, true, "PDA [\"pool\", mint]"),
  slot("poolTokenVault", false, true, "PDA [\"pool_token_vault\", pool]: token account of mint, authority pool"),
  slot("poolQuoteVault", false, true, "PDA [\"pool_quote_vault\", pool]: lamport vault (WSOL) or token account"),
  slot("systemProgram", false, false, "11111111111111111111111111111111"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

export const PoolSwapAccounts = [
  slot("trader", true, true, "pays (buy) or receives (sell) the quote"),
  slot("pool", false, true, "PDA [\"pool\", mint]"),
  slot("mint", false, false, "the launched mint"),
  slot("poolTokenVault", false, true, "pool.tokenVault"),
  slot("poolQuoteVault", false, true, "pool.quoteVault"),
  slot("traderTokenAccount", false, true, "trader's token account of mint"),
  slot("traderQuoteAccount", false, true, "WSOL pair: the trader itself; SPL pair: trader's token account of quoteMint"),
  slot("feeVault", false, true, "pool.feeVault"),
  slot("feeVaultQuote", false, true, "feeVault.quoteHolder"),
  slot("systemProgram", false, false, "11111111111111111111111111111111"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

export const ClaimCreatorFeeAccounts = [
  slot("creator", true, true, "feeVault.creator"),
  slot("feeVault", false, true, "PDA [\"fee_vault\", curve]"),
  slot("feeVaultQuote", false, true, "feeVault.quoteHolder"),
  slot("creatorQuoteAccount", false, true, "WSOL pair: the creator itself; SPL pair: creator's token account of quoteMint"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const
