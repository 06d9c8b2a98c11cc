/**
 * Request decoding for the staking routes (spec document 2, 2.4 and 8): the build bodies of
 * `stake`, `unstake` and `finish` into `StakeBuildInput`, the submit and confirm bodies, or
 * `VALIDATION_FAILED` naming the field. Members not named here are ignored.
 */
import { validationFailed } from "../../src/domain/ApiError.js"
import type { StakeAction } from "../../src/services/staking/StakingChain.js"
import type { StakeBuildInput } from "../../src/services/staking/StakingService.js"
import { type Decoded, isObject } from "./KeyDecoders.js"

export const CLIENT_STAKE_ID_CHARS_MAX = 128
export const LINKED_WALLET_ID_CHARS_MAX = 128
/** A signed staking transaction is at most 1,232 bytes: 1,644 base64 characters. */
export const SIGNED_TRANSACTION_BASE64_CHARS_MAX = 1_644
const AMOUNT_PATTERN = /^[1-9][0-9]*$/
const U64_MAX = (1n << 64n) - 1n
const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/

const clientStakeIdOf = (v: unknown): string | undefined =>
  typeof v === "string" && v.length >= 1 && v.length <= CLIENT_STAKE_ID_CHARS_MAX ? v : undefined

export const decodeStakeBuildBody = (action: StakeAction, body: unknown): Decoded<StakeBuildInput> => {
  if (!isObject(body)) return validationFailed("body", "body must be a JSON object")
  const clientStakeId = clientStakeIdOf(body.clientStakeId)
  if (clientStakeId === undefined) return validationFailed("clientStakeId", `clientStakeId must be a string of 1 to ${CLIENT_STAKE_ID_CHARS_MAX} chars`)
  if (body.payer !== "main" && body.payer !== "linked") return validationFailed("payer", "payer must be main or linked")
  let linkedWalletId: string | undefined
  if (body.payer === "linked") {
    if (typeof body.linkedWalletId !== "string" || body.linkedWalletId.length === 0 || body.linkedWalletId.length > LINKED_WALLET_ID_CHARS_MAX) {
      return validationFailed("linkedWalletId", `payer linked requires linkedWalletId (1 to ${LINKED_WALLET_ID_CHARS_MAX} chars)`)
    }
    linkedWalletId = body.linkedWalletId
  } else if (body.linkedWalletId !== undefined) {
    return validationFailed("linkedWalletId", "linkedWalletId is only for payer linked")
  }
  if (body.dryRun !== undefined && typeof body.dryRun !== "boolean") return validationFailed("dryRun", "dryRun must be a boolean")
  const base = { action, payer: body.payer, clientStakeId, dryRun: body.dryRun === true, ...(linkedWalletId !== undefined ? { linkedWalletId } : {}) } as const
  if (action === "finish") {
    if (typeof body.withdrawal !== "string" || body.withdrawal.length < 32 || body.withdrawal.length > 44) {
      return validationFailed("withdrawal", "withdrawal must be the address of a program withdrawal owned by the wallet")
    }
    return { ...base, withdrawal: body.withdrawal }
  }
  if (typeof body.amountRaw !== "string" || !AMOUNT_PATTERN.test(body.amountRaw) || BigInt(body.amountRaw) > U64_MAX) {
    return validationFailed("amountRaw", `amountRaw must match ^[1-9][0-9]*$ (${action === "stake" ? "platform-token" : "staked-receipt"} base units, at most 2^64-1)`)
  }
  return { ...base, amountRaw: BigInt(body.amountRaw) }
}

export const decodeStakeSubmitBody = (body: unknown): Decoded<{ clientStakeId: string; signedTransaction: Uint8Array }> => {
  if (!isObject(body)) return validationFailed("body", "body must be a JSON object")
  const clientStakeId = clientStakeIdOf(body.clientStakeId)
  if (clientStakeId === undefined) return validationFailed("clientStakeId", `clientStakeId must be a string of 1 to ${CLIENT_STAKE_ID_CHARS_MAX} chars`)
  const tx = body.signedTransaction
  if (typeof tx !== "string" || tx.length === 0 || tx.length > SIGNED_TRANSACTION_BASE64_CHARS_MAX || !BASE64_PATTERN.test(tx)) {
    return validationFailed("signedTransaction", `signedTransaction must be a base64 signed v0 transaction (at most ${SIGNED_TRANSACTION_BASE64_CHARS_MAX} chars)`)
  }
  return { clientStakeId, signedTransaction: new Uint8Array(Buffer.from(tx, "base64")) }
}

export const decodeStakeConfirmBody = (body: unknown): Decoded<{ clientStakeId: string; signature: string }> => {
  if (!isObject(body)) return validationFailed("body", "body must be a JSON object")
  const clientStakeId = clientStakeIdOf(body.clientStakeId)
  if (clientStakeId === undefined) return validationFailed("clientStakeId", `clientStakeId must be a string of 1 to ${CLIENT_STAKE_ID_CHARS_MAX} chars`)
  if (typeof body.signature !== "string" || !/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(body.signature)) {
    return validationFailed("signature", "signature must be a base58 transaction signature")
  }
  return { clientStakeId, signature: body.signature }
}
