/**
 * Live platform-token balances for Pro by holding (spec 2.2): what an owner holds of the
 * platform token and of its staked receipt, read from the chain through its RPC, never from
 * our own records. `cached` bounds staleness (at most 5 minutes, the spec's re-check window)
 * and memory (a bounded LRU); a failed read is not cached.
 *
 * Solana: the owner's associated token accounts for the platform mint and the staked-receipt
 * mint, read together with one `getMultipleAccounts`. Tokens held in other (non-associated)
 * token accounts are not counted (docs/decisions.md).
 */
import { type Address, address } from "@solana/kit"
import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { findAssociatedTokenAddressSync } from "../../chain/solana/program/Pda.js"
import { decodeSplTokenAccount } from "../../chain/solana/program/accounts/SplTokenAccount.js"
import type { Chain } from "../../domain/Chain.js"
import { SVC_MINT } from "../../domain/QuotePairs.js"
import { TtlLru } from "../keys/TtlLru.js"
import { createNodeSolanaRpc } from "../../chain/internal/JsonRpcHttp.js"

export class BalanceUnavailable extends Schema.TaggedError<BalanceUnavailable>()("BalanceUnavailable", {
  chain: Schema.String,
  owner: Schema.String,
  message: Schema.String
}) {}

export interface BalanceReaderShape {
  /** Raw units of the platform token the owner holds (not staked). */
  readonly platformTokenBalance: (chain: Chain, owner: string) => Effect.Effect<bigint, BalanceUnavailable>
  /** Raw units of the staked receipt the owner holds (pending withdrawals are not counted). */
  readonly stakedBalance: (chain: Chain, owner: string) => Effect.Effect<bigint, BalanceUnavailable>
}

export class BalanceReader extends Context.Tag("curvestream/BalanceReader")<BalanceReader, BalanceReaderShape>() {}

/** Staleness ceiling of cached balances (spec: "within 5 minutes"). */
export const BALANCE_TTL_MS_MAX = 5 * 60_000

export interface CacheOptions {
  readonly ttlMs?: number
  readonly maxEntries?: number
}

/** Wraps a reader with a bounded cache; `ttlMs` is clamped to `BALANCE_TTL_MS_MAX`. */
export const cached = (inner: BalanceReaderShape, options: CacheOptions = {}): BalanceReaderShape => {
  const ttlMs = Math.min(options.ttlMs ?? 60_000, BALANCE_TTL_MS_MAX)
  const cache = new TtlLru<string, bigint>({ maxEntries: options.maxEntries ?? 20_000, ttlMs })
  const through = (kind: string, read: (chain: Chain, owner: string) => Effect.Effect<bigint, BalanceUnavailable>) =>
    (chain: Chain, owner: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
        const key = `${kind}:${chain}:${owner}`
        const hit = cache.get(key, nowMs)
        return hit !== undefined ? Effect.succeed(hit) : Effect.tap(read(chain, owner), (v) => Effect.map(Clock.currentTimeMillis, (at) => cache.set(key, v, at)))
      })
  return { platformTokenBalance: through("held", inner.platformTokenBalance), stakedBalance: through("staked", inner.stakedBalance) }
}

export interface SolanaBalanceOptions {
  readonly rpcUrl: string
  readonly platformMint?: string
  /** The staked-receipt mint; undefined while staking is not deployed (staked balance 0). */
  readonly stakedMint?: string | undefined
  readonly timeoutMs?: number
}

/**
 * Solana over JSON-RPC. Hood balances are not read yet (the EVM adapter is not built): a Hood
 * read answers 0, so only Solana wallets count, as the spec's "eligible Solana wallets" says.
 */
export const solanaBalanceReader = (options: SolanaBalanceOptions): BalanceReaderShape => {
  const rpc = createNodeSolanaRpc(options.rpcUrl)
  const platformMint = address(options.platformMint ?? SVC_MINT)
  const stakedMint = options.stakedMint === undefined ? undefined : address(options.stakedMint)
  const timeout = Duration.millis(options.timeoutMs ?? 5_000)
  const read = (owner: string, mint: Address | undefined) =>
    Effect.gen(function* () {
      if (mint === undefined) return 0n
      const ownerAddress = yield* Effect.try({ try: () => address(owner), catch: () => "not a Solana address" })
      const ata = findAssociatedTokenAddressSync(ownerAddress, mint).address
      const { value } = yield* Effect.tryPromise((signal) => rpc.getMultipleAccounts([ata], { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal }))
      const account = value[0]
      if (account === null || account === undefined) return 0n
      const decoded = decodeSplTokenAccount(Buffer.from(account.data[0], "base64"))
      return decoded !== undefined && decoded.mint === mint ? decoded.amount : 0n
    }).pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: () => "timed out" }),
      Effect.mapError((cause) => new BalanceUnavailable({ chain: "solana", owner, message: `balance read failed: ${String(cause)}` }))
    )
  return {
    platformTokenBalance: (chain, owner) => (chain === "solana" ? read(owner, platformMint) : Effect.succeed(0n)),
    stakedBalance: (chain, owner) => (chain === "solana" ? read(owner, stakedMint) : Effect.succeed(0n))
  }
}

export const solanaLayer = (options: SolanaBalanceOptions & CacheOptions): Layer.Layer<BalanceReader> =>
  Layer.succeed(BalanceReader, cached(solanaBalanceReader(options), options))

/** Fixed balances by owner, for tests. */
export const layerTest = (held: Readonly<Record<string, bigint>>, staked: Readonly<Record<string, bigint>> = {}): Layer.Layer<BalanceReader> =>
  Layer.succeed(BalanceReader, {
    platformTokenBalance: (_c, owner) => Effect.succeed(held[owner] ?? 0n),
    stakedBalance: (_c, owner) => Effect.succeed(staked[owner] ?? 0n)
  })
