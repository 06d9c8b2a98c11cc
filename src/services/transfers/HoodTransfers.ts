/**
 * The Hood side of the transfer rail, the port `SolanaTransfers` is on Solana: which token an
 * asset names (ETH; USDG; a token this service's factory launched), the transfer's call (a plain
 * value transfer for ETH, ERC-20 `transfer(to, amount)` by viem's encoding of the generated ABI),
 * the source's balances, and the one shared sender (`HoodSender`: the wallet's lock, nonce, fee
 * caps, preflight and send once, the verdict by receipt and nonce, the release of a nonce recorded
 * but never sent; for a TEE wallet's row, whose key the server does not hold, the same signed
 * bytes broadcast again instead). Knows nothing of the ledger or the rules.
 *
 * Gas: fixed limits, never an estimate (as the trade rail): 21,000 for ETH to an address without
 * code (the protocol's exact cost), `HOOD_TRANSFER_GAS.ethToContract` to one with code (a
 * multisig's `receive`), `HOOD_TRANSFER_GAS.token` for an ERC-20 transfer (measured on the
 * localnet: ~35k to a holder, ~52k to a fresh one; the integration test asserts `gasUsed` stays
 * under). A limit too low mines a revert that moved nothing and spent its gas.
 */
import { Effect } from "effect"
import { type Address, type Chain, encodeFunctionData, getAddress, type Hash, type Hex, isAddress, keccak256, TransactionNotFoundError, zeroAddress } from "viem"
import { curveFactoryAbi, curveTokenAbi } from "../../chain/hood/abi.generated.js"
import { makeHoodSender } from "../../chain/hood/client/HoodSender.js"
import type { HoodCall } from "../../chain/hood/launch/HeadlessCalls.js"
import type { TransferChainPort } from "./TransferAttempt.js"
import type { TransferRow } from "./TransferStore.js"

export const HOOD_TRANSFER_GAS = {
  eth: 21_000n,
  ethToContract: 100_000n,
  token: 100_000n
} as const

export class HoodUnavailable {
  readonly _tag = "HoodUnavailable"
  constructor(readonly message: string) {}
}

export interface HoodTransfersOptions {
  readonly chain: Chain
  readonly rpcUrl: string
  /** The CurveFactory: a launched token is one it created a curve for. */
  readonly factory: Address
  /** The USDG token; absent: `usdg` is not served. */
  readonly usdg?: Address | undefined
  /** How long a transfer the node never saw is left before its nonce is released (default 60 s). */
  readonly unsentGraceMs?: number
}

/** The transfer's call from the wallet: ETH as the value, a token by `transfer(to, amount)`. Pure. */
export const hoodTransferCall = (i: { readonly to: Address; readonly token: Address | null; readonly amountRaw: bigint; readonly toHasCode: boolean }): HoodCall & { readonly gas: bigint } =>
  i.token === null
    ? { to: i.to, data: "0x", value: i.amountRaw, gas: i.toHasCode ? HOOD_TRANSFER_GAS.ethToContract : HOOD_TRANSFER_GAS.eth }
    : { to: i.token, data: encodeFunctionData({ abi: curveTokenAbi, functionName: "transfer", args: [i.to, i.amountRaw] }), value: 0n, gas: HOOD_TRANSFER_GAS.token }

export const makeHoodTransfers = (options: HoodTransfersOptions) => {
  const sender = makeHoodSender({ chain: options.chain, rpcUrl: options.rpcUrl }, (m) => new HoodUnavailable(m))
  const { read } = sender
  const usdg = options.usdg === undefined ? undefined : getAddress(options.usdg)

  /** The token an asset names: null for ETH, undefined when it is neither USDG nor a token the factory launched. */
  const tokenOf = (asset: string): Effect.Effect<Address | null | undefined, HoodUnavailable> => {
    if (asset === "eth") return Effect.succeed(null)
    if (asset === "usdg") return Effect.succeed(usdg)
    if (!isAddress(asset, { strict: false })) return Effect.succeed(undefined)
    const token = getAddress(asset.toLowerCase())
    if (usdg !== undefined && token === usdg) return Effect.succeed(usdg)
    return Effect.map(
      read("curve lookup", (c) => c.readContract({ address: options.factory, abi: curveFactoryAbi, functionName: "curveOf", args: [token] })),
      (curve) => (curve === zeroAddress ? undefined : token)
    )
  }

  /** What the rules need before building: the source's wei and token balance, and whether the destination has code. */
  const source = (owner: Address, to: Address, token: Address | null) =>
    Effect.map(
      Effect.all([
        read("balance", (c) => c.getBalance({ address: owner })),
        token === null ? Effect.succeed(null) : read("token balance", (c) => c.readContract({ address: token, abi: curveTokenAbi, functionName: "balanceOf", args: [owner] })),
        read("code", (c) => c.getCode({ address: to }))
      ]),
      ([weiRaw, tokenRaw, code]) => ({ weiRaw, tokenRaw, toHasCode: code !== undefined && code !== "0x" })
    )

  /** Whether the node has the transaction (mined or in its pool); undefined when that could not be read (it decides nothing). */
  const known = (hash: Hash): Effect.Effect<boolean | undefined> =>
    read("transaction", (c) =>
      c.getTransaction({ hash }).then(
        () => true,
        (e: unknown) => {
          if (e instanceof TransactionNotFoundError) return false
          throw e
        }
      )
    ).pipe(Effect.orElseSucceed(() => undefined))

  /**
   * A recorded signed transaction the node does not know (a crash between the record and the
   * send), broadcast again once `unsentGraceMs` passed since it was recorded: the same bytes, so
   * the same nonce and hash, preflighted first (bytes whose call reverts now, a balance short
   * since, are not mined as a revert: they wait, the caller may still top the wallet up); the
   * node's refusal (its nonce used meanwhile) changes nothing, the verdict by nonce settles it.
   */
  const rebroadcast = (hash: Hash, signed: Hex, createdAtMs: number) =>
    Effect.gen(function* () {
      if ((yield* Effect.clockWith((c) => c.currentTimeMillis)) - createdAtMs < (options.unsentGraceMs ?? 60_000)) return
      if ((yield* known(hash)) !== false) return
      const refused = yield* sender.send(signed)
      yield* Effect.logWarning("Hood TEE transfer not on the node: its signed bytes broadcast again").pipe(
        Effect.annotateLogs({ transaction: hash, ...(refused !== undefined ? { refusal: refused.reason } : {}) })
      )
    })

  const port = (sign: (accountId: string, unsigned: Uint8Array) => Effect.Effect<{ readonly signedTransaction: string }, unknown>): TransferChainPort => ({
    // Bytes the node already holds (a TEE wallet's relay-signed transfer its caller broadcast too) are
    // sent: never refused as a duplicate. No refusal is final here: an EVM transaction has no expiry,
    // the verdict by receipt or by the wallet's mined nonce passing the row's settles it.
    send: (wire) =>
      Effect.gen(function* () {
        const hash = keccak256(wire as Hex)
        if ((yield* known(hash)) === true) return
        const refused = yield* sender.send(wire as Hex)
        if (refused === undefined) return
        return yield* Effect.fail({ message: refused.stage === "preflight" ? `the preflight reverted: ${refused.reason}` : refused.reason, final: false })
      }),
    // A Hood row keeps its transaction's nonce where a Solana row keeps its last valid block height.
    observe: (row: TransferRow) =>
      Effect.gen(function* () {
        const nonce = row.lastValidBlockHeight ?? 0n
        const seen = yield* sender.verdict(row.signature as Hash, getAddress(row.from), nonce)
        if (seen._tag === "Receipt") {
          return seen.receipt.status === "success"
            ? ({ outcome: "landed" } as const)
            : ({ outcome: "reverted", error: `the transaction reverted on chain (block ${seen.receipt.blockNumber})` } as const)
        }
        if (seen.neverLands) return { outcome: "never_lands" } as const
        // A TEE row: the server cannot sign for the wallet; the same signed bytes are broadcast again after the grace.
        if (row?.payer === "tee") {
          if (row.signedTransaction !== null) yield* rebroadcast(row.signature as Hash, row.signedTransaction as Hex, row.createdAtMs)
          return { outcome: "pending" } as const
        }
        // Recorded but maybe never sent (a crash between the save and the send): its nonce is released after the grace.
        yield* sender.releaseUnsent(
          { signature: row.signature, wallet: row.from, nonce, createdAtMs: row.createdAtMs },
          (bytes) => sign(row.accountId, bytes),
          options.unsentGraceMs ?? 60_000
        )
        return { outcome: "pending" } as const
      })
  })

  return { tokenOf, source, unsigned: sender.unsigned, withWallet: sender.withWallet, port, publicClient: sender.publicClient }
}

export type HoodTransfers = ReturnType<typeof makeHoodTransfers>
