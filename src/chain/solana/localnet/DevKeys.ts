/**
 * The localnet's deterministic keys. Each is a 32-byte ed25519 seed = sha256("curvestream/localnet/"
 * + label), so every run, every process and every test derives the same addresses: dev traders
 * `dev/0..n`, the keeper (the only address allowed to migrate), the faucet (funds airdrops and is
 * the mint authority of the localnet USDC and SVC mints), the protocol treasury, and the bundle tip
 * accounts (`tip/0..7`; only their addresses matter). Keys never leave the localnet: they are dev
 * keys, published here on purpose. Signing with a seed here is synchronous (node:crypto), for the
 * ledger's own faucet transactions; clients build kit signers from the same seeds
 * (`client/DevSigners.ts`).
 */
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from "node:crypto"
import type { Address } from "@solana/kit"
import { addressFromBytes } from "../program/internal/bytes.js"

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

export const DEV_KEY_COUNT = 10
export const TIP_ACCOUNT_COUNT = 8

export const localnetSeed = (label: string): Uint8Array =>
  new Uint8Array(createHash("sha256").update(`curvestream/localnet/${label}`).digest())

export const privateKeyFromSeed = (seed: Uint8Array): KeyObject =>
  createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" })

export const publicKeyBytesFromSeed = (seed: Uint8Array): Uint8Array => {
  const spki = createPublicKey(privateKeyFromSeed(seed)).export({ format: "der", type: "spki" })
  return new Uint8Array(spki.subarray(spki.length - 32))
}

export const addressFromSeed = (seed: Uint8Array): Address => addressFromBytes(publicKeyBytesFromSeed(seed))

/** Ed25519 signature of `message` by the key of `seed` (64 bytes). */
export const signWithSeed = (seed: Uint8Array, message: Uint8Array): Uint8Array =>
  new Uint8Array(sign(null, message, privateKeyFromSeed(seed)))

export const devKeySeed = (index: number): Uint8Array => {
  if (!Number.isInteger(index) || index < 0 || index >= DEV_KEY_COUNT) throw new RangeError(`dev key index 0..${DEV_KEY_COUNT - 1}`)
  return localnetSeed(`dev/${index}`)
}
export const KEEPER_SEED = localnetSeed("keeper")
export const FAUCET_SEED = localnetSeed("faucet")
export const TREASURY_SEED = localnetSeed("treasury")

export const KEEPER_ADDRESS: Address = addressFromSeed(KEEPER_SEED)
export const FAUCET_ADDRESS: Address = addressFromSeed(FAUCET_SEED)
export const TREASURY_ADDRESS: Address = addressFromSeed(TREASURY_SEED)
export const DEV_ADDRESSES: ReadonlyArray<Address> = Array.from({ length: DEV_KEY_COUNT }, (_, i) => addressFromSeed(devKeySeed(i)))
export const DEFAULT_TIP_ACCOUNTS: ReadonlyArray<Address> = Array.from({ length: TIP_ACCOUNT_COUNT }, (_, i) =>
  addressFromSeed(localnetSeed(`tip/${i}`))
)

/** The localnet's Pyth publisher: the only signer its Pyth receiver accepts a price post from. */
export const PYTH_PUBLISHER_SEED = localnetSeed("pyth-publisher")
export const PYTH_PUBLISHER_ADDRESS: Address = addressFromSeed(PYTH_PUBLISHER_SEED)
