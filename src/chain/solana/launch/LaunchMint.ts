/**
 * The mint keypair of a headless launch attempt, derived, never random: its 32-byte ed25519 seed
 * is HMAC-SHA256 under the server's mint secret over (account, clientLaunchId, attempt). So the
 * mint address of a ledger row's attempt can be recomputed after a crash and looked up on chain
 * (did the curve land?), and two sends of one attempt can never create two curves: both create
 * the same mint account, and the System program refuses the second (`AccountAlreadyInUse`).
 * A new attempt (after a definitive failure) gets a new address, so a stray deposit to an old
 * address cannot block the retry. Without the secret nobody can sign as a future mint.
 */
import { createHmac } from "node:crypto"
import { createKeyPairSignerFromPrivateKeyBytes, type KeyPairSigner } from "@solana/kit"

/** The smallest mint secret accepted (bytes). */
export const LAUNCH_MINT_SECRET_BYTES_MIN = 32

export interface LaunchAttemptId {
  readonly accountId: string
  readonly clientLaunchId: string
  readonly attempt: number
}

const DOMAIN = "curvestream/solana-launch-mint/v1"

/** The attempt's 32-byte seed; fields are length-prefixed so no two attempts share an input. */
export const launchMintSeed = (secret: Uint8Array, id: LaunchAttemptId): Uint8Array => {
  if (secret.byteLength < LAUNCH_MINT_SECRET_BYTES_MIN) throw new RangeError(`the launch mint secret needs at least ${LAUNCH_MINT_SECRET_BYTES_MIN} bytes`)
  if (!Number.isSafeInteger(id.attempt) || id.attempt < 0) throw new RangeError("attempt must be a whole number ≥ 0")
  const h = createHmac("sha256", secret)
  for (const part of [DOMAIN, id.accountId, id.clientLaunchId, String(id.attempt)]) {
    const bytes = Buffer.from(part, "utf8")
    const length = Buffer.alloc(4)
    length.writeUInt32LE(bytes.byteLength)
    h.update(length).update(bytes)
  }
  return new Uint8Array(h.digest())
}

export const launchMintSigner = (secret: Uint8Array, id: LaunchAttemptId): Promise<KeyPairSigner> =>
  createKeyPairSignerFromPrivateKeyBytes(launchMintSeed(secret, id))
