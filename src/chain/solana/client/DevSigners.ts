/**
 * kit signers for the localnet's deterministic keys (localnet/DevKeys.ts): dev traders, the
 * keeper and the faucet (mint authority of the localnet USDC and SVC). Dev keys only.
 */
import { createKeyPairSignerFromPrivateKeyBytes, type KeyPairSigner } from "@solana/kit"
import { devKeySeed, FAUCET_SEED, KEEPER_SEED, PYTH_PUBLISHER_SEED } from "../localnet/DevKeys.js"

export const devSigner = (index: number): Promise<KeyPairSigner> => createKeyPairSignerFromPrivateKeyBytes(devKeySeed(index))
export const keeperSigner = (): Promise<KeyPairSigner> => createKeyPairSignerFromPrivateKeyBytes(KEEPER_SEED)
export const faucetSigner = (): Promise<KeyPairSigner> => createKeyPairSignerFromPrivateKeyBytes(FAUCET_SEED)
export const pythPublisherSigner = (): Promise<KeyPairSigner> => createKeyPairSignerFromPrivateKeyBytes(PYTH_PUBLISHER_SEED)
