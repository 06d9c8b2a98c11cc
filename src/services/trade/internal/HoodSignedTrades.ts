/**
 * The linked and TEE payers on the Hood trade rail (issue 28), the Hood half of `SignedTrades`: the
 * same rules, row and runner as Solana's linked and TEE builds, with a Hood transaction, as the Hood TEE
 * transfer rail stores and checks one (`HoodTeeTransfers.ts`, docs/decisions.md "Hood TEE
 * transfers"):
 * - build: the trade's unsigned EIP-1559 transaction for the paying EVM wallet (an imported wallet
 *   on the `linked` spend rail, or the TEE wallet bound to the key on the `tee` rail, whose caps
 *   are hard: `SpendGate.decide`) on the venue the
 *   market trades on (the curve, or the Uniswap v3 pool once migrated) with the on-chain minimum
 *   out, built like the embedded payer's (`HoodTradeChain.build`: the wallet's next `pending`
 *   nonce, the node's fee caps, the fixed gas limit), the wallet's ETH checked against its value
 *   plus the gas limit at the fee cap; its single-use sign claim (`WalletService.recordBuilt`, the
 *   transaction itself with no expiry: an EVM transaction has none; the claim's 30-minute lifetime
 *   bounds when the relay can sign it: a TEE build unsigned past it lapses, its hold released,
 *   `TradeAttempt.traceHoodTee`); recorded `built` with the nonce in
 *   `lastValidBlockHeight`, the unsigned bytes (base64) and their sha-256.
 * - submit: the signed bytes must be the canonical signed form of exactly the built transaction,
 *   signed by the linked wallet (`signedEvmParts`: viem's recovery, the unsigned serialization
 *   compared); the hash is the trade's signature and the bytes are sent once by the runner. A TEE
 *   wallet's bytes come from the sign relay, which signs exactly the built bytes once under the
 *   build's claim (`WalletService.signClaimed`: the key the wallet is bound to, `swap:write`).
 * - confirm: a hash the caller broadcast: the node's transaction under it, rebuilt into its
 *   signed bytes (`signedEvmOf`), must pass the same check and hash to the same value; nothing is
 *   sent, the runner awaits its verdict.
 * Settling is the runner's, as for `payer: main`: a receipt decides (reverted: `failed`, nothing
 * traded); without one, the wallet's mined nonce past the trade's means another transaction took
 * it (`never_lands`). A refused send decides nothing: the caller holds the bytes (`TradeAttempt`).
 * A TEE build no request sent is traced through its claim: the relay's hash looked up, or the
 * claim expired and the row lapsed once unsigned past its lifetime (docs/decisions.md "Hood TEE
 * trade holds").
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { type Hash, type Hex } from "viem"
import { builtHashOf, builtTransactionHashOf } from "../../../chain/hood/client/SignedEvm.js"
import type { HoodTradeChain } from "../HoodTradeChain.js"
import { tradeError } from "../TradeError.js"
import type { TradeCaller, TradeRequest } from "../TradeInputs.js"
import type { TradeRow } from "../TradeStore.js"
import type { TradeBuiltView } from "../TradeViews.js"
import { hoodGasFunded, hoodPricedRow, type HoodPricedTrade, hoodTradeBuild } from "./HoodTradeSubmit.js"
import type { TradeContext } from "./TradeContext.js"
import { newTradeRow } from "./TradeRows.js"
import { insertBuilt } from "./SolanaSignedBuild.js"
import type { TradeFailure } from "./TradeSubmit.js"

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")
const hexOf = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString("hex")}`
const EVM_HASH = /^0x[0-9a-fA-F]{64}$/

export const makeHoodSignedTrades = (ctx: TradeContext, hood: HoodTradeChain) => {
  /**
   * Records the linked wallet's build: the unsigned transaction, its claim and the `built` row.
   * `replayBuild` answers a build another request recorded first.
   */
  const record = (
    caller: TradeCaller,
    request: TradeRequest,
    p: HoodPricedTrade,
    replayBuild: (request: TradeRequest, row: TradeRow) => Effect.Effect<TradeBuiltView, TradeFailure>
  ): Effect.Effect<TradeBuiltView, TradeFailure> =>
    Effect.gen(function* () {
      const wallets = ctx.wallets
      if (wallets === undefined || p.walletId === null) return yield* tradeError("chain_unsupported", "linked and TEE payers need the wallet service", { field: "payer" })
      // The head before the build: a trace of this build reads the chain from here (`HoodTradeChain.trace`).
      const [built, atBlock] = yield* Effect.all([hoodTradeBuild(hood, caller.accountId, request, p), hood.blockNumber], { concurrency: 2 })
      yield* hoodGasFunded(hood, p, built)
      const claim = yield* wallets.recordBuilt({
        accountId: caller.accountId,
        walletId: p.walletId,
        keyId: caller.keyId,
        chain: "evm",
        transaction: built.bytes,
        purpose: "trade",
        requiredScopes: ["swap:write"],
        txExpiresAtMs: null
      })
      const row: TradeRow = {
        ...newTradeRow(caller, request, hoodPricedRow(p), {
          state: "built",
          signature: "",
          // Hood: the transaction's nonce (what decides that it never lands).
          lastValidBlockHeight: BigInt(built.nonce),
          createdAtMs: yield* ctx.clock.currentTimeMillis
        }),
        walletId: p.walletId,
        claimId: claim.claimId,
        transaction: Buffer.from(built.bytes).toString("base64"),
        messageHash: sha256Hex(built.bytes),
        // Hood: the block the build read (where its trace starts).
        builtSlot: atBlock
      }
      return yield* insertBuilt(ctx, caller, request, row, claim.claimId, replayBuild)
    })

  /** The signed bytes' hash when they are the built transaction, canonically signed by the row's wallet; else undefined. */
  const provenHash = (row: TradeRow, signed: Hex) => builtHashOf(signed, row.messageHash ?? "", row.wallet)

  /** `POST /submit`: the signature (hash) and the wire (hex) to send once, or `wrong_transaction` (nothing changes). */
  const verifySubmit = (row: TradeRow, signedTransaction: Uint8Array) =>
    Effect.gen(function* () {
      const signed = hexOf(signedTransaction)
      const hash = yield* provenHash(row, signed)
      if (hash === undefined) {
        return yield* tradeError("wrong_transaction", "signedTransaction is not the built Hood transaction signed by the paying wallet; nothing was sent", { field: "signedTransaction" })
      }
      return { signature: hash as string, wire: signed as string }
    })

  /** `POST /confirm`: the hash the caller broadcast is the built transaction signed by the paying wallet, as the node holds it. */
  const verifyConfirm = (row: TradeRow, signature: string) =>
    Effect.gen(function* () {
      const refused = (why: string) => tradeError("wrong_transaction", why, { field: "signature" })
      if (!EVM_HASH.test(signature)) return yield* refused("signature must be the Hood transaction hash (0x and 32 bytes) of the built transaction")
      const tx = yield* hood.transaction(signature as Hash)
      if (tx === undefined) return yield* refused(`The Hood node knows no transaction ${signature}: broadcast the signed build first, then confirm`)
      const hash = yield* builtTransactionHashOf(tx, row.messageHash ?? "", row.wallet)
      if (hash === undefined || hash.toLowerCase() !== signature.toLowerCase()) {
        return yield* refused(`${signature} is not the built transaction signed by the paying wallet`)
      }
      return hash as string
    })

  return { record, verifySubmit, verifyConfirm }
}
