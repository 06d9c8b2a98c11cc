/**
 * A starting world for the differential tests (`test/conformance/solanaFidelity*.test.ts`): a twin
 * (`SvmTwin`) whose genesis adds deterministic wallets and a 6-decimal mint, plus the instruction
 * builders the engine uses, so a fast-check seed replays the same transactions byte for byte.
 */
import { createHash } from "node:crypto"
import { type Address, createKeyPairSignerFromPrivateKeyBytes, type KeyPairSigner } from "@solana/kit"
import { encodeSplMint, SPL_MINT_SIZE } from "../../src/chain/solana/program/accounts/SplMint.js"
import { encodeSplTokenAccount, SPL_TOKEN_ACCOUNT_SIZE } from "../../src/chain/solana/program/accounts/SplTokenAccount.js"
import { findAssociatedTokenAddressSync } from "../../src/chain/solana/program/Pda.js"
import { SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../src/chain/solana/program/ProgramIds.js"
import { type GenesisAccount, LAMPORTS_PER_SOL, minimumBalanceForRentExemption } from "../../src/chain/solana/localnet/Ledger.js"
import { SvmTwin } from "./svmTwin.js"

export const WALLET_COUNT = 4
export const FRESH_COUNT = 6
export const MINT_DECIMALS = 6
export const WALLET_LAMPORTS = 100n * LAMPORTS_PER_SOL
/** What each of wallets[0..HOLDER_COUNT) holds of `mint` at genesis, in its associated token account. */
export const HOLDER_COUNT = 3
export const HOLDER_TOKENS = 1_000_000_000_000n

const seedOf = (label: string): Uint8Array => new Uint8Array(createHash("sha256").update(`curvestream/fidelity/${label}`).digest())

const signersOf = (prefix: string, count: number): Promise<KeyPairSigner[]> =>
  Promise.all(Array.from({ length: count }, (_, i) => createKeyPairSignerFromPrivateKeyBytes(seedOf(`${prefix}/${i}`))))

export interface World {
  readonly twin: SvmTwin
  /** Funded system wallets; wallets[0] is the mint authority. */
  readonly wallets: ReadonlyArray<KeyPairSigner>
  /** Signers with no account yet (create-account targets, new owners). */
  readonly fresh: ReadonlyArray<KeyPairSigner>
  /** A 6-decimal mint, authority wallets[0]; the first HOLDER_COUNT wallets hold HOLDER_TOKENS each. */
  readonly mint: Address
}

let cached: { wallets: KeyPairSigner[]; fresh: KeyPairSigner[]; mint: KeyPairSigner } | undefined

const keys = async () => {
  cached ??= { wallets: await signersOf("wallet", WALLET_COUNT), fresh: await signersOf("fresh", FRESH_COUNT), mint: (await signersOf("mint", 1))[0]! }
  return cached
}

export const createWorld = async (): Promise<World> => {
  const { wallets, fresh, mint } = await keys()
  const twin = new SvmTwin({
    genesisAccounts: [
      ...wallets.map((w) => walletGenesis(w.address, WALLET_LAMPORTS)),
      {
        address: mint.address,
        account: {
          lamports: minimumBalanceForRentExemption(SPL_MINT_SIZE),
          owner: TOKEN_PROGRAM_ID,
          data: encodeSplMint({
            mintAuthority: wallets[0]!.address,
            supply: HOLDER_TOKENS * BigInt(HOLDER_COUNT),
            decimals: MINT_DECIMALS,
            freezeAuthority: null
          }),
          executable: false
        }
      },
      ...wallets.slice(0, HOLDER_COUNT).map((w) => associatedTokenGenesis(w.address, mint.address, HOLDER_TOKENS))
    ]
  })
  return { twin, wallets, fresh, mint: mint.address }
}

export const ata = (owner: Address, mint: Address): Address => findAssociatedTokenAddressSync(owner, mint).address

/** A system wallet holding `lamports`, as a genesis account. */
export const walletGenesis = (address: Address, lamports: bigint): GenesisAccount => ({
  address,
  account: { lamports, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false }
})

/** `owner`'s associated token account of `mint` holding `amount`, rent-exempt, as a genesis account. */
export const associatedTokenGenesis = (owner: Address, mint: Address, amount: bigint): GenesisAccount => ({
  address: ata(owner, mint),
  account: {
    lamports: minimumBalanceForRentExemption(SPL_TOKEN_ACCOUNT_SIZE),
    owner: TOKEN_PROGRAM_ID,
    data: encodeSplTokenAccount({
      mint,
      owner,
      amount,
      delegate: null,
      state: "initialized",
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null
    }),
    executable: false
  }
})
