/**
 * The TEE payer on the Hood transfer rail (spec document 2: 2.1 "out of the bound TEE wallet to
 * its pinned vault or a wallet the owner linked while signed in or marked trusted", 3.2, 4.1
 * "Transaction-limit rules"): the Solana TEE payer's rules and records (`TeeCommon`), with a
 * Hood transaction, as a Hood TEE launch's legs are (`hoodSelf/HoodSelfOperation.ts`): an unsigned
 * EIP-1559 transaction on the TEE wallet's next nonce at the node's fee caps with a fixed gas limit
 * (`hoodTransferCall`), serialized as 0x-hex; the sign relay signs those exact bytes under the
 * build's claim; `POST /transfer/submit` takes the serialized signed transaction.
 *
 * Build, first refusal wins and a refusal records, claims and holds nothing: a known id answered
 * from its row (the service, before this); the key's scopes and the paying TEE wallet on `evm`
 * bound to this key; the destination (pinned vault, or a wallet linked while signed in or marked
 * trusted); the asset (ETH, USDG or a token the factory launched); the spend gate on the `tee` rail
 * (txLimit, the key's cap); the TEE wallet's balances (the amount, and ETH for the value plus the
 * gas limit at the fee cap). Then, under the spend hold, the claim and the `built` row (the nonce
 * in `lastValidBlockHeight`). The hold lasts until the transfer settles; an unsigned build's
 * (claim unconsumed) is released by the sweep once it is 30 minutes old and the claim's own
 * 30-minute lifetime (on Hood the operation's expiry) has passed. A relay-signed one keeps it: an
 * EVM transaction has no expiry and the caller holds the bytes, so only the chain's verdict (its
 * receipt, or the wallet's nonce used by another transaction) settles it (`SpendStore.sweep`).
 *
 * Submit: the bytes must parse as a signed transaction whose unsigned form is exactly the built
 * one and whose signer is the TEE wallet, in canonical form (low `s`, and exactly the bytes the
 * parse serializes to again: a malleated twin would be recorded under a hash that never lands
 * while the canonical bytes can) (else `wrong_transaction`, nothing changes); its hash is
 * the transfer's signature. The row keeps the signed bytes when it moves to `sending`, so a
 * recovery pass after a crash broadcasts the same bytes again (same nonce, same hash: never a
 * second transfer) instead of releasing the nonce with a signature the server cannot make.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { getAddress, type Hex } from "viem"
import { signedEvmParts } from "../../../chain/hood/client/SignedEvm.js"
import { check as checkSpend } from "../../spend/SpendStore.js"
import { hoodTransferCall, type HoodTransfers, type HoodUnavailable } from "../HoodTransfers.js"
import { transferError } from "../TransferError.js"
import type { TransferCaller, TransferInput, TransferView } from "../TransferService.js"
import type { TransferRow } from "../TransferStore.js"
import type { TeeCommon, TeeCommonContext, TeeTransferFailure } from "./TeeCommon.js"

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")
const hexOf = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString("hex")}`

export const makeHoodTeeTransfers = (ctx: TeeCommonContext, common: TeeCommon, hood: HoodTransfers) => {
  const down = (e: HoodUnavailable) => ctx.chainDown(e)

  /** `POST /transfer/build` with `payer: tee` on Hood. */
  const build = (caller: TransferCaller, input: TransferInput, requestHash: string): Effect.Effect<TransferView, TeeTransferFailure | SqlError> =>
    Effect.gen(function* () {
      const payer = yield* common.payerOf(caller, input, "evm")
      const from = getAddress(payer.address)
      // `normalized` by the service: EIP-55 when it is an address at all (anything else matches no wallet and is refused).
      const destination = yield* common.destinationOf(caller, input, payer, from, "evm")
      const token = yield* Effect.mapError(hood.tokenOf(input.asset), down)
      if (token === undefined) return yield* transferError("asset_unsupported", `${input.asset} is neither ETH, USDG nor a token launched on this service's Hood factory`)

      const gate = yield* ctx.gateInput(caller, input, "tee")
      const decided = yield* ctx.withSql(checkSpend(gate))
      if (decided._tag === "Refused") return yield* Effect.fail(decided.error)

      const to = getAddress(input.to)
      const source = yield* Effect.mapError(hood.source(from, to, token), down)
      const built = yield* Effect.mapError(hood.unsigned(from, hoodTransferCall({ to, token, amountRaw: input.amountRaw, toHasCode: source.toHasCode })), down)
      const neededWei = built.value + built.gas * built.maxFeePerGas
      if (source.weiRaw < neededWei || (source.tokenRaw !== null && source.tokenRaw < input.amountRaw)) {
        return yield* transferError("insufficient_balance", "The TEE wallet cannot cover the amount and the network fee (gas limit at the fee cap)", {
          details: {
            balanceWei: source.weiRaw.toString(),
            neededWei: neededWei.toString(),
            ...(source.tokenRaw !== null ? { balanceRaw: source.tokenRaw.toString(), neededRaw: input.amountRaw.toString() } : {})
          }
        })
      }
      if (input.dryRun) return { status: "ready", ...common.planOf(input, from, destination, payer), replay: false, createsAccount: false } satisfies TransferView
      // Another request built these very bytes (same content, the wallet's same next nonce): one
      // transaction on chain would settle both transfers. Refused until that one lands or lapses.
      const messageHash = sha256Hex(built.bytes)
      const twin = yield* ctx.store.openWithMessage(caller.accountId, messageHash)
      if (twin !== undefined && twin !== input.clientTransferId) {
        return yield* transferError(
          "idempotency_conflict",
          `Transfer ${twin.slice(0, 128)} is open with this very transaction (same content, the wallet's same next nonce): submit or confirm that one, or build again once it lands or lapses`,
          { retryable: true, details: { reason: "prior_build_identical", clientTransferId: twin } }
        )
      }

      return yield* ctx.heldAround(
        caller,
        input,
        gate,
        common.record(caller, input, requestHash, payer, destination, {
          from,
          mint: token,
          bytes: built.bytes,
          transaction: hexOf(built.bytes),
          messageHash,
          lastValidBlockHeight: BigInt(built.nonce)
        })
      )
    })

  /** Hood: the signed transaction's unsigned form must be exactly the built one, and its signer the TEE wallet. */
  const verify = (row: TransferRow, signed: Uint8Array) =>
    Effect.gen(function* () {
      const parts = yield* signedEvmParts(hexOf(signed))
      if (parts === undefined) {
        return yield* transferError("wrong_transaction", "signedTransaction does not decode as a signed Hood transaction; nothing was sent")
      }
      if (sha256Hex(Buffer.from(parts.unsigned.slice(2), "hex")) !== row.messageHash || parts.signer !== getAddress(row.from)) {
        return yield* transferError("wrong_transaction", "signedTransaction is not the built transaction with the TEE wallet's valid signature; nothing was sent")
      }
      return { signature: parts.hash as string, wire: hexOf(signed) as string }
    })

  return { build, verify }
}
