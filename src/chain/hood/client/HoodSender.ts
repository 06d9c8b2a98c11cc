/**
 * Sending server-signed Hood transactions from an account's embedded EVM wallet, shared by every
 * rail that does it (the trade rail's `HoodTradeChain`, the transfer rail's `HoodTransfers`): the
 * wallet's lock, its next nonce and the fee caps, the unsigned EIP-1559 transaction with an
 * explicit gas limit, sending signed bytes once (preflight first), the verdict on a hash by its
 * receipt and the wallet's mined nonce, and releasing the nonce of a transaction recorded but never
 * sent. No SQL, no rail's rules; every read failure is the caller's `unavailable`, never a zero.
 *
 * One lock registry per process (`hoodWalletLocks`): a wallet's nonce is read, signed, recorded,
 * sent and awaited under its lock by whichever rail holds it, so a trade and a transfer of one
 * wallet in this process never take one nonce, and a transaction refused before broadcast leaves
 * no gap. Across processes the chain keeps money safe: two transactions with one nonce cannot both
 * land, and each row is settled by its own hash.
 *
 * Verdicts: a receipt says landed (status 1) or reverted (status 0); without one, the transaction
 * never lands once the wallet's mined nonce passed its own (the nonce went to another
 * transaction), else it is pending. The mined nonce is read BEFORE the receipt, so a transaction
 * mined between the two reads is never taken for one that never lands.
 */
import { Effect, Option } from "effect"
import {
  type Address,
  BaseError,
  type Chain,
  decodeErrorResult,
  getAddress,
  type Hash,
  type Hex,
  parseTransaction,
  type PublicClient,
  recoverTransactionAddress,
  serializeTransaction,
  type TransactionReceipt,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError
} from "viem"
import type { HoodCall } from "../launch/HeadlessCalls.js"
import { hoodErrorsAbi, hoodPublicClient } from "./HoodClient.js"

/** The zero-value self-transfer that releases a never-sent transaction's nonce (`releaseUnsent`). */
export const HOOD_RELEASE_GAS = 21_000n

/**
 * One holder at a time per wallet (its nonce is read, signed, recorded and sent under it), the
 * entry dropped when its last user leaves: the map holds only wallets with a transaction in progress.
 */
export const makeWalletLocks = () => {
  const locks = new Map<string, { readonly sem: Effect.Semaphore; users: number }>()
  const withWallet = <A, E, R>(wallet: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const key = wallet.toLowerCase()
      let entry = locks.get(key)
      if (entry === undefined) {
        entry = { sem: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, entry)
      }
      const e = entry
      e.users++
      return e.sem.withPermits(1)(effect).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (--e.users === 0) locks.delete(key)
          })
        )
      )
    })
  /** `effect` under the wallet's lock when nobody holds it now, else `None` without waiting (never deadlocks a holder that asks). */
  const withWalletIfFree = <A, E, R>(wallet: string, effect: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
    Effect.suspend(() => {
      const key = wallet.toLowerCase()
      if (locks.has(key)) return Effect.succeedNone
      return Effect.map(withWallet(wallet, effect), Option.some)
    })
  return { withWallet, withWalletIfFree, size: () => locks.size }
}

export type WalletLocks = ReturnType<typeof makeWalletLocks>

/** This process's wallet locks: every Hood rail that signs for an embedded wallet takes them. */
export const hoodWalletLocks: WalletLocks = makeWalletLocks()

/** The contracts' custom errors and Solidity's `Error(string)` (the router's `require` messages). */
export const revertAbi = [...hoodErrorsAbi, { type: "error", name: "Error", inputs: [{ name: "message", type: "string" }] }] as const

/** The revert data a node answered a call with (viem nests the JSON-RPC error's `data` in its causes), if any. Pure. */
export const revertDataOf = (e: unknown): Hex | undefined => {
  for (let x: unknown = e, depth = 0; typeof x === "object" && x !== null && depth < 8; x = (x as { cause?: unknown }).cause, depth++) {
    const data = (x as { data?: unknown }).data
    if (typeof data === "string" && /^0x[0-9a-fA-F]*$/.test(data) && data.length >= 10) return data as Hex
    const inner = typeof data === "object" && data !== null ? (data as { data?: unknown }).data : undefined
    if (typeof inner === "string" && /^0x[0-9a-fA-F]*$/.test(inner) && inner.length >= 10) return inner as Hex
  }
  return undefined
}

/** Whether a call's failure is the EVM's revert (not a node that could not be asked). Pure. */
export const isRevert = (e: unknown): boolean =>
  revertDataOf(e) !== undefined || /revert|VM Exception/i.test(e instanceof BaseError ? `${e.message} ${e.details}` : String(e))

/** A revert's name for the record: the decoded error, else the node's message. Pure. */
export const revertReasonOf = (e: unknown): string => {
  const data = revertDataOf(e)
  if (data !== undefined) {
    try {
      const d = decodeErrorResult({ abi: revertAbi, data }) as { readonly errorName: string; readonly args?: ReadonlyArray<unknown> }
      return d.errorName === "Error" ? String(d.args?.[0]) : d.errorName
    } catch {
      return `revert data ${data.slice(0, 10)}`
    }
  }
  return e instanceof BaseError ? e.shortMessage : String(e)
}

/** Signed bytes the chain refused before they were broadcast: by the preflight's revert or the node's answer. */
export interface HoodSendRefused {
  readonly stage: "preflight" | "node"
  /** The failure itself (a rail decodes its own code from it). */
  readonly cause: unknown
  /** The decoded revert or the node's message. */
  readonly reason: string
}

/** The verdict on a hash: its receipt, or none yet (`neverLands` once the wallet's mined nonce passed the transaction's). */
export type HoodVerdict = { readonly _tag: "Receipt"; readonly receipt: TransactionReceipt } | { readonly _tag: "NoReceipt"; readonly neverLands: boolean }

export interface HoodSenderOptions {
  readonly chain: Chain
  readonly rpcUrl: string
  /** Defaults to this process's registry (`hoodWalletLocks`). */
  readonly locks?: WalletLocks
  /** At most this many calls to the node in flight from this sender (default `HOOD_READS_IN_FLIGHT`); the rest wait their turn. */
  readonly readsInFlight?: number
}

/**
 * The sender's bound on calls in flight to its node. A burst (50 concurrent submits of one id, each
 * pricing its trade with several reads) waits here in order instead of all at once in the node's
 * queue, where each call's HTTP timeout would count the others' time and fail it
 * `chain_unavailable` although the node answers every call. A receipt's wait is not counted.
 */
export const HOOD_READS_IN_FLIGHT = 8

export const makeHoodSender = <E>(options: HoodSenderOptions, unavailable: (message: string) => E) => {
  const pc: PublicClient = hoodPublicClient(options.chain, options.rpcUrl)
  const locks = options.locks ?? hoodWalletLocks

  const inFlight = Effect.unsafeMakeSemaphore(options.readsInFlight ?? HOOD_READS_IN_FLIGHT)

  const call = <A>(what: string, f: (c: PublicClient) => Promise<A>): Effect.Effect<A, E> =>
    Effect.tryPromise({ try: () => f(pc), catch: (e) => unavailable(`Hood ${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`) })

  /** One call to the node, within the sender's bound on calls in flight. */
  const read = <A>(what: string, f: (c: PublicClient) => Promise<A>): Effect.Effect<A, E> => inFlight.withPermits(1)(call(what, f))

  /** The current fee caps (a fee read, not a gas estimate). */
  const fees = read("fees", (c) => c.estimateFeesPerGas({ chain: options.chain, type: "eip1559" }))

  /** The wallet's next nonce, counting its transactions the node holds unmined. */
  const nextNonce = (wallet: Address) => read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "pending" }))

  /** An unsigned EIP-1559 transaction of `call` from `wallet`: explicit gas and the wallet's next nonce. */
  const unsigned = (wallet: Address, call: HoodCall & { readonly gas: bigint }) =>
    Effect.gen(function* () {
      const [nonce, f] = yield* Effect.all([nextNonce(wallet), fees])
      const bytes = serializeTransaction({
        type: "eip1559",
        chainId: options.chain.id,
        nonce,
        gas: call.gas,
        maxFeePerGas: f.maxFeePerGas,
        maxPriorityFeePerGas: f.maxPriorityFeePerGas,
        to: call.to,
        data: call.data,
        value: call.value
      })
      return { bytes: Buffer.from(bytes.slice(2), "hex") as Uint8Array, nonce, gas: call.gas, maxFeePerGas: f.maxFeePerGas, value: call.value }
    })

  /**
   * Preflights signed bytes (an `eth_call` of the same call from the same sender at the pending
   * state), then sends them once. A refusal (the preflight's revert or the node's answer) is
   * returned and nothing was broadcast; a lost answer is none (the chain decides).
   */
  const send = (raw: Hex): Effect.Effect<HoodSendRefused | undefined> =>
    Effect.gen(function* () {
      const tx = parseTransaction(raw)
      const from = yield* Effect.promise(() => recoverTransactionAddress({ serializedTransaction: raw as Parameters<typeof recoverTransactionAddress>[0]["serializedTransaction"] }))
      const preflight = yield* Effect.tryPromise({
        try: () => pc.call({ account: from, to: tx.to!, ...(tx.data !== undefined ? { data: tx.data } : {}), value: tx.value ?? 0n, gas: tx.gas!, blockTag: "pending" }),
        catch: (e) => e
      }).pipe(Effect.either)
      // Only a revert is a refusal; a node that could not be asked decides nothing (send anyway: the chain decides).
      if (preflight._tag === "Left" && isRevert(preflight.left)) return { stage: "preflight", cause: preflight.left, reason: revertReasonOf(preflight.left) } satisfies HoodSendRefused
      return yield* Effect.tryPromise({ try: () => pc.sendRawTransaction({ serializedTransaction: raw }), catch: (e) => e }).pipe(
        Effect.as(undefined),
        Effect.catchAll((e) => {
          // An RPC error answer is the node's refusal (nonce used, fee too low): the transaction is not in. Only a
          // JSON-RPC error counts (its code is a number): a socket's code (ECONNRESET) is an answer lost, not a refusal.
          if (e instanceof BaseError && e.walk((x) => (x as { name?: string }).name === "RpcRequestError" || typeof (x as { code?: unknown }).code === "number") !== null) {
            return Effect.succeed<HoodSendRefused>({ stage: "node", cause: e, reason: revertReasonOf(e) })
          }
          return Effect.as(Effect.logWarning("Hood send: answer lost; the chain decides", e), undefined)
        })
      )
    })

  /** The chain's verdict on a sent transaction: its hash, and the wallet and nonce it was signed with. */
  const verdict = (hash: Hash, wallet: Address, nonce: bigint): Effect.Effect<HoodVerdict, E> =>
    Effect.gen(function* () {
      // The mined nonce first: a transaction mined after this read still shows its receipt below.
      const mined = yield* read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "latest" }))
      const receipt = yield* read("receipt", (c) =>
        c.getTransactionReceipt({ hash }).catch((e: unknown) => {
          // Only "no receipt" is an answer; any other failure is the node's, not the chain's.
          if (e instanceof TransactionReceiptNotFoundError) return undefined
          throw e
        })
      )
      return receipt === undefined ? { _tag: "NoReceipt", neverLands: BigInt(mined) > nonce } : { _tag: "Receipt", receipt }
    })

  /**
   * Frees the nonce of a transaction that was recorded but never reached the node (a crash between
   * the save and the send, or a send whose answer was lost and never arrived), so its verdict
   * becomes final: when the wallet's lock is free, the node knows no transaction of that hash, the
   * wallet's mined and pending nonces both still equal the transaction's, and `graceMs` passed
   * since it was recorded, a zero-value transfer to the wallet itself is sent on that nonce (the
   * usual EVM cancel). The transaction is never sent again: if its own bytes still land somewhere
   * first, the cancel is the one refused and the receipt settles it; otherwise the wallet's mined
   * nonce passes its own and it never lands. Costs 21,000 gas, moves no money. True when sent.
   */
  const releaseUnsent = (
    row: { readonly signature: string; readonly wallet: string; readonly nonce: bigint; readonly createdAtMs: number },
    sign: (unsigned: Uint8Array) => Effect.Effect<{ readonly signedTransaction: string }, unknown>,
    graceMs: number
  ): Effect.Effect<boolean> =>
    Effect.gen(function* () {
      if ((yield* Effect.clockWith((c) => c.currentTimeMillis)) - row.createdAtMs < graceMs) return false
      const wallet = getAddress(row.wallet)
      const released = yield* locks.withWalletIfFree(
        wallet,
        Effect.gen(function* () {
          const known = yield* read("transaction", (c) =>
            c.getTransaction({ hash: row.signature as Hash }).then(
              () => true,
              (e: unknown) => {
                if (e instanceof TransactionNotFoundError) return false
                throw e
              }
            )
          )
          if (known) return false
          const [mined, pending] = yield* Effect.all([
            read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "latest" })),
            read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "pending" }))
          ])
          if (BigInt(mined) !== row.nonce || BigInt(pending) !== row.nonce) return false
          const f = yield* fees
          const bytes = serializeTransaction({
            type: "eip1559",
            chainId: options.chain.id,
            nonce: Number(row.nonce),
            gas: HOOD_RELEASE_GAS,
            maxFeePerGas: f.maxFeePerGas,
            maxPriorityFeePerGas: f.maxPriorityFeePerGas,
            to: wallet,
            value: 0n
          })
          const signed = yield* sign(Buffer.from(bytes.slice(2), "hex"))
          yield* read("release", (c) => c.sendRawTransaction({ serializedTransaction: signed.signedTransaction as Hex }))
          yield* Effect.logWarning("Hood transaction never reached the node: its nonce released by a zero-value transfer").pipe(
            Effect.annotateLogs({ wallet, nonce: row.nonce.toString(), transaction: row.signature })
          )
          return true
        })
      )
      return Option.getOrElse(released, () => false)
    }).pipe(Effect.catchAll(() => Effect.succeed(false)))

  /** A receipt by hash within the bound. */
  const receipt = (hash: Hash, timeoutMs: number) => call("receipt", (c) => c.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: timeoutMs }))

  return { publicClient: pc, read, fees, nextNonce, unsigned, send, verdict, releaseUnsent, receipt, withWallet: locks.withWallet, withWalletIfFree: locks.withWalletIfFree }
}

export type HoodSender<E> = ReturnType<typeof makeHoodSender<E>>
