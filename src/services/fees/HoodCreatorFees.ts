/**
 * Creator fees on Hood: the fee splitter owes each curve's streamer (the launching wallet, fixed at
 * launch) per asset (`streamerOwed(curve, asset)`, address(0) = ETH): curve fees in the quote
 * asset, and after graduation the LP position's collected fees in the token and WETH/USDG. A claim
 * is one `claim(curve, asset)` call per asset, signed by the embedded EVM wallet through the wallet
 * provider, sent once each and awaited; nothing is ever resent.
 */
import { Effect, Either } from "effect"
import { type Address, type Chain, encodeFunctionData, type Hash, type Hex, parseEventLogs, serializeTransaction, zeroAddress } from "viem"
import { curveFactoryAbi, curveTokenAbi, feeSplitterAbi } from "../../chain/hood/abi.generated.js"
import { hoodPublicClient } from "../../chain/hood/client/HoodClient.js"
import { awaitUntil } from "../../platform/AwaitUntil.js"
import type { WalletProviderShape } from "../wallets/WalletProvider.js"
import { feeError } from "./FeeError.js"
import type { CallStatus } from "./FeeClaimOutcome.js"

/** Gas of one claim for the ETH dust floor: an amount must exceed 5 × gas price × 300,000 (spec 4.3 rule 4). */
export const DUST_GAS = 300_000n
export const DUST_MULTIPLE = 5n

export interface HoodAsset {
  readonly symbol: string
  readonly mint: string
  readonly decimals: number
  readonly amountRaw: bigint
  /** ETH-denominated (ETH or WETH): the dust floor applies. */
  readonly ethDenominated: boolean
}

export interface HoodFeeRead {
  readonly curve: Address
  readonly recipient: string
  readonly symbol: string
  readonly name: string
  readonly assets: ReadonlyArray<HoodAsset>
  readonly lpPosition: { readonly tokenId: string; readonly positionManager: string } | undefined
  readonly gasPrice: bigint
}

export interface HoodCall {
  readonly operation: "claim"
  readonly target: string
  readonly asset: HoodAsset
  readonly txHash: string | null
  readonly status: CallStatus
  readonly paidRaw?: bigint
}

export interface HoodFeeOptions {
  readonly chain: Chain
  readonly rpcUrl: string
  readonly factory: Address
  readonly feeSplitter: Address
  readonly weth9: Address
  readonly usdg?: Address | undefined
  readonly positionManager?: Address | undefined
  readonly receiptWaitMs?: number
  readonly pollMs?: number
}

export const makeHoodCreatorFees = (o: HoodFeeOptions, provider: WalletProviderShape) => {
  const pc = hoodPublicClient(o.chain, o.rpcUrl)
  const read = <A>(what: string, f: () => Promise<A>) =>
    Effect.tryPromise({ try: f, catch: (e) => feeError("chain_unavailable", `${what} failed: ${String(e).slice(0, 300)}`, { retryable: true }) })

  const assetInfo = (asset: Address, token: Address, tokenSymbol: string): Omit<HoodAsset, "amountRaw"> =>
    asset === zeroAddress
      ? { symbol: "ETH", mint: zeroAddress, decimals: 18, ethDenominated: true }
      : asset.toLowerCase() === o.weth9.toLowerCase()
        ? { symbol: "WETH", mint: asset, decimals: 18, ethDenominated: true }
        : o.usdg !== undefined && asset.toLowerCase() === o.usdg.toLowerCase()
          ? { symbol: "USDG", mint: asset, decimals: 6, ethDenominated: false }
          : { symbol: asset.toLowerCase() === token.toLowerCase() ? tokenSymbol : "", mint: asset, decimals: 18, ethDenominated: false }

  /** The position manager holding the LP NFTs: configured, or the splitter's own (a configured node names none). */
  let knownPositionManager: string | undefined = o.positionManager
  const positionManager = Effect.suspend(() =>
    knownPositionManager !== undefined
      ? Effect.succeed(knownPositionManager)
      : Effect.tap(
          read("positionManager", () => pc.readContract({ address: o.feeSplitter, abi: feeSplitterAbi, functionName: "positionManager" })),
          (a) => Effect.sync(() => (knownPositionManager = a))
        )
  )

  const readFees = (tokenText: string) =>
    Effect.gen(function* () {
      const token = tokenText as Address
      const curve = yield* read("curveOf", () => pc.readContract({ address: o.factory, abi: curveFactoryAbi, functionName: "curveOf", args: [token] }))
      if (curve === zeroAddress) return undefined
      const [, streamer, quoteAsset, lpTokenId] = yield* read("curves", () => pc.readContract({ address: o.feeSplitter, abi: feeSplitterAbi, functionName: "curves", args: [curve] }))
      const [symbol, name, gasPrice] = yield* Effect.all([
        read("symbol", () => pc.readContract({ address: token, abi: curveTokenAbi, functionName: "symbol" })),
        read("name", () => pc.readContract({ address: token, abi: curveTokenAbi, functionName: "name" })),
        read("gasPrice", () => pc.getGasPrice())
      ])
      const graduated = lpTokenId > 0n
      const candidates: Address[] = [quoteAsset, ...(graduated ? [token, quoteAsset === zeroAddress ? o.weth9 : quoteAsset] : [])]
      const unique = candidates.filter((a, i) => candidates.findIndex((b) => b.toLowerCase() === a.toLowerCase()) === i)
      const assets = yield* Effect.forEach(unique, (asset) =>
        Effect.map(
          read("streamerOwed", () => pc.readContract({ address: o.feeSplitter, abi: feeSplitterAbi, functionName: "streamerOwed", args: [curve, asset] })),
          (amountRaw) => ({ ...assetInfo(asset, token, symbol), amountRaw })
        )
      )
      return {
        curve,
        recipient: streamer,
        symbol,
        name,
        assets,
        lpPosition: graduated ? { tokenId: lpTokenId.toString(), positionManager: yield* positionManager } : undefined,
        gasPrice
      } satisfies HoodFeeRead
    })

  const dustFloorWei = (gasPrice: bigint) => DUST_MULTIPLE * gasPrice * DUST_GAS
  const aboveDust = (a: HoodAsset, gasPrice: bigint) => a.amountRaw > 0n && (!a.ethDenominated || a.amountRaw > dustFloorWei(gasPrice))

  /** Whether the wallet has a transaction sent but not mined (a claim must not start then). */
  const unsettled = (wallet: Address) =>
    Effect.map(
      Effect.all([
        read("nonce", () => pc.getTransactionCount({ address: wallet, blockTag: "pending" })),
        read("nonce", () => pc.getTransactionCount({ address: wallet, blockTag: "latest" }))
      ]),
      ([pending, latest]) => pending > latest
    )

  /** Prepares every claim call (gas estimated, fees filled); undefined when an estimate failed. */
  const prepare = (wallet: Address, curve: Address, assets: ReadonlyArray<HoodAsset>) =>
    Effect.gen(function* () {
      const latestNonce = yield* read("nonce", () => pc.getTransactionCount({ address: wallet, blockTag: "pending" }))
      const prepared = []
      for (const [i, asset] of assets.entries()) {
        const data = encodeFunctionData({ abi: feeSplitterAbi, functionName: "claim", args: [curve, asset.mint as Address] })
        const p = yield* Effect.either(
          Effect.tryPromise(() =>
            pc.prepareTransactionRequest({ account: wallet, chain: o.chain, to: o.feeSplitter, data, value: 0n, type: "eip1559", nonce: latestNonce + i })
          )
        )
        if (p._tag === "Left") return undefined
        prepared.push({ asset, data, p: p.right })
      }
      return prepared
    })

  const costWei = (prepared: ReadonlyArray<{ p: { gas: bigint; maxFeePerGas: bigint } }>) => prepared.reduce((s, x) => s + x.p.gas * x.p.maxFeePerGas, 0n)

  /** Signs and sends each prepared call once, in order, stopping at the first that is not confirmed. */
  const send = (accountId: string, prepared: NonNullable<Effect.Effect.Success<ReturnType<typeof prepare>>>) =>
    Effect.gen(function* () {
      const calls: HoodCall[] = prepared.map((x) => ({ operation: "claim", target: o.feeSplitter, asset: x.asset, txHash: null, status: "not_sent" }))
      for (const [i, x] of prepared.entries()) {
        const serialized = serializeTransaction({
          type: "eip1559",
          chainId: o.chain.id,
          nonce: x.p.nonce,
          gas: x.p.gas,
          maxFeePerGas: x.p.maxFeePerGas,
          maxPriorityFeePerGas: x.p.maxPriorityFeePerGas,
          to: o.feeSplitter,
          data: x.data,
          value: 0n
        })
        const signed = yield* Effect.either(provider.signWithEmbedded(accountId, "evm", Buffer.from(serialized.slice(2), "hex")))
        if (signed._tag === "Left") break
        const hash = signed.right.signature as Hash
        calls[i] = { ...calls[i]!, txHash: hash, status: "submitted_unknown" }
        yield* Effect.ignore(Effect.tryPromise(() => pc.sendRawTransaction({ serializedTransaction: signed.right.signedTransaction as Hex })))
        const receipt = yield* waitReceipt(hash)
        if (receipt === undefined) break
        if (receipt.status !== "success") {
          calls[i] = { ...calls[i]!, status: "reverted" }
          break
        }
        const event = parseEventLogs({ abi: feeSplitterAbi, logs: receipt.logs, eventName: "CreatorFeeClaimed" })[0]?.args
        calls[i] = { ...calls[i]!, status: "confirmed", ...(event !== undefined ? { paidRaw: event.amount } : {}) }
      }
      return calls
    })

  /** The receipt, polled until it is there (a failed read is a "not yet"); none within `receiptWaitMs` is `undefined`. */
  const waitReceipt = (hash: Hash) =>
    awaitUntil(Effect.either(Effect.tryPromise(() => pc.getTransactionReceipt({ hash }))), Either.isRight, {
      what: `the receipt of ${hash}`,
      timeoutMs: o.receiptWaitMs ?? 30_000,
      intervalMs: o.pollMs ?? 100
    }).pipe(
      Effect.map((r) => r.right),
      Effect.catchTag("AwaitTimedOut", () => Effect.succeed(undefined))
    )

  const balanceOf = (wallet: Address) => read("balance", () => pc.getBalance({ address: wallet }))

  return { readFees, aboveDust, dustFloorWei, unsettled, prepare, costWei, send, balanceOf }
}

export type HoodCreatorFees = ReturnType<typeof makeHoodCreatorFees>
