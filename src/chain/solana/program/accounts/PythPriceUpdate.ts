/**
 * Pyth's `PriceUpdateV2` account (the pull oracle's price account, which also backs Pyth's push
 * feeds on mainnet), from its published layout in `pyth-solana-receiver-sdk`: an Anchor account
 * of at most 134 bytes, Borsh-encoded after the 8-byte discriminator sha256("account:PriceUpdateV2")[0..8]:
 *
 *   write_authority Pubkey · verification_level (u8 0 = Partial + u8 num_signatures | u8 1 = Full)
 *   · price_message { feed_id [u8;32] · price i64 · conf u64 · exponent i32 · publish_time i64
 *   · prev_publish_time i64 · ema_price i64 · ema_conf u64 } · posted_slot u64
 *
 * The price is `price · 10^exponent` USD; `conf` is in the same units. Decoded here rather than
 * with `@pythnetwork/pyth-solana-receiver` (docs/decisions.md "Oracle prices"): that package brings
 * `@coral-xyz/anchor` and web3.js v1 into a kit stack. `decodePriceUpdate` never throws.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { type Address, address } from "@solana/kit"
import { addressFromBytes, addressToBytes } from "../internal/bytes.js"

/** The Pyth Solana Receiver program: it owns every `PriceUpdateV2` account (mainnet id). */
export const PYTH_RECEIVER_PROGRAM_ID: Address = address("rec5EKMGg6MxZYaMdyBfgwp4d5rB9T1VQH5pJv5LtFJ")
/** The SOL/USD push feed's account on mainnet (shard 0); the localnet creates it at genesis. */
export const PYTH_SOL_USD_ACCOUNT: Address = address("7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE")
/** Pyth's SOL/USD price feed id. */
export const PYTH_SOL_USD_FEED_ID: Uint8Array = Uint8Array.from(Buffer.from("ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d", "hex"))

export const PRICE_UPDATE_V2_DISCRIMINATOR: Uint8Array = sha256(new TextEncoder().encode("account:PriceUpdateV2")).slice(0, 8)
/** The account's allocated size (`PriceUpdateV2::LEN`); a `Full` update leaves its last byte unused. */
export const PRICE_UPDATE_V2_SIZE = 8 + 32 + 2 + 32 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 8

export type VerificationLevel = { readonly kind: "full" } | { readonly kind: "partial"; readonly numSignatures: number }

export interface PriceUpdate {
  readonly writeAuthority: Address
  readonly verificationLevel: VerificationLevel
  readonly feedId: Uint8Array
  readonly price: bigint
  readonly conf: bigint
  readonly exponent: number
  readonly publishTimeSec: bigint
  readonly prevPublishTimeSec: bigint
  readonly emaPrice: bigint
  readonly emaConf: bigint
  readonly postedSlot: bigint
}

export const encodePriceUpdate = (p: PriceUpdate): Uint8Array => {
  const out = new Uint8Array(PRICE_UPDATE_V2_SIZE)
  const view = new DataView(out.buffer)
  out.set(PRICE_UPDATE_V2_DISCRIMINATOR, 0)
  out.set(addressToBytes(p.writeAuthority), 8)
  let at = 40
  if (p.verificationLevel.kind === "full") out[at++] = 1
  else {
    out[at++] = 0
    out[at++] = p.verificationLevel.numSignatures
  }
  if (p.feedId.length !== 32) throw new RangeError("feed id must be 32 bytes")
  out.set(p.feedId, at)
  at += 32
  view.setBigInt64(at, p.price, true)
  view.setBigUint64(at + 8, p.conf, true)
  view.setInt32(at + 16, p.exponent, true)
  view.setBigInt64(at + 20, p.publishTimeSec, true)
  view.setBigInt64(at + 28, p.prevPublishTimeSec, true)
  view.setBigInt64(at + 36, p.emaPrice, true)
  view.setBigUint64(at + 44, p.emaConf, true)
  view.setBigUint64(at + 52, p.postedSlot, true)
  return out
}

/** The account's fields, or undefined for data that is not a `PriceUpdateV2` (wrong discriminator, short, bad enum tag). */
export const decodePriceUpdate = (data: Uint8Array): PriceUpdate | undefined => {
  if (data.length < PRICE_UPDATE_V2_SIZE - 1) return undefined
  for (let i = 0; i < 8; i++) if (data[i] !== PRICE_UPDATE_V2_DISCRIMINATOR[i]) return undefined
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  let at = 40
  const tag = data[at++]
  let verificationLevel: VerificationLevel
  if (tag === 1) verificationLevel = { kind: "full" }
  else if (tag === 0) verificationLevel = { kind: "partial", numSignatures: data[at++]! }
  else return undefined
  if (at + 32 + 60 > data.length) return undefined
  const feedId = data.slice(at, at + 32)
  at += 32
  return {
    writeAuthority: addressFromBytes(data.subarray(8, 40)),
    verificationLevel,
    feedId,
    price: view.getBigInt64(at, true),
    conf: view.getBigUint64(at + 8, true),
    exponent: view.getInt32(at + 16, true),
    publishTimeSec: view.getBigInt64(at + 20, true),
    prevPublishTimeSec: view.getBigInt64(at + 28, true),
    emaPrice: view.getBigInt64(at + 36, true),
    emaConf: view.getBigUint64(at + 44, true),
    postedSlot: view.getBigUint64(at + 52, true)
  }
}

/**
 * The localnet receiver's one instruction, `localnet_post_price` (not Pyth's: mainnet posts a
 * Wormhole-verified update, which a localnet cannot produce): the configured publisher signs a new
 * price, confidence and exponent; the program stamps the slot's clock time as `publish_time`.
 * Data: the 8-byte discriminator sha256("global:localnet_post_price")[0..8] · price i64 · conf u64 · exponent i32.
 * Accounts: publisher (signer, writable: pays the fee) · the price update account (writable).
 */
export const LOCALNET_POST_PRICE_DISCRIMINATOR: Uint8Array = sha256(new TextEncoder().encode("global:localnet_post_price")).slice(0, 8)
export const LOCALNET_POST_PRICE_SIZE = 8 + 8 + 8 + 4

export interface PostPrice {
  readonly price: bigint
  readonly conf: bigint
  readonly exponent: number
}

export const encodePostPrice = (p: PostPrice): Uint8Array => {
  const out = new Uint8Array(LOCALNET_POST_PRICE_SIZE)
  const view = new DataView(out.buffer)
  out.set(LOCALNET_POST_PRICE_DISCRIMINATOR, 0)
  view.setBigInt64(8, p.price, true)
  view.setBigUint64(16, p.conf, true)
  view.setInt32(24, p.exponent, true)
  return out
}

export const decodePostPrice = (data: Uint8Array): PostPrice | undefined => {
  if (data.length !== LOCALNET_POST_PRICE_SIZE) return undefined
  for (let i = 0; i < 8; i++) if (data[i] !== LOCALNET_POST_PRICE_DISCRIMINATOR[i]) return undefined
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  return { price: view.getBigInt64(8, true), conf: view.getBigUint64(16, true), exponent: view.getInt32(24, true) }
}
