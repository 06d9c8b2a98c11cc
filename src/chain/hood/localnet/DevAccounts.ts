/**
 * The Hood localnet's development accounts: Hardhat's 20 default accounts (mnemonic "test test
 * test test test test test test test test test junk", path m/44'/60'/0'/0/i). The keys are
 * written out rather than derived (BIP-39 derivation costs ~25 ms a key); they are public dev
 * keys, published by Hardhat and here on purpose, and never hold anything outside a localnet.
 * A test pins account #0 to 0xf39F…2266, whose first deployment lands at USDG_ADDRESS.
 *
 * Roles: #0 deployer and owner of every contract (and of USDG), #1 the keeper (the only address
 * allowed to migrate or cancel), #2 the platform treasury (fee splitter), #3 the staker vault
 * (receives a graduated curve's staker allocation), #4..#19 traders. Outside them, the ETH/USD
 * feed's reporter (`ETH_USD_REPORTER_KEY`).
 */
import { type Hex, type LocalAccount } from "viem"
import { privateKeyToAccount } from "viem/accounts"

export const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk"

export const DEV_PRIVATE_KEYS: ReadonlyArray<Hex> = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
  "0xf214f2b2cd398c806f84e317254e0f0b801d0643303237d97a22a48e01628897",
  "0x701b615bbdfb9de65240bc28bd21bbc0d996645a3dd57e7b12bc2bdf6f192c82",
  "0xa267530f49f8280200edf313ee7af6b827f2a8bce2897751d06a843f644967b1",
  "0x47c99abed3324a2707c28affff1267e45918ec8c3f20b8aa892e8b065d2942dd",
  "0xc526ee95bf44d8fc405a158bb884d9d1238d99f0612e9f33d006bb0789009aaa",
  "0x8166f546bab6da521a8369cab06c5d2b9e46670292d85c875ee9ec20e84ffb61",
  "0xea6c44ac03bff858b476bba40716402b03e41b8e97e276d1baec7c37d42484a0",
  "0x689af8efa8c651a91ad287602527f3af2fe9f6501a7ac4b061667b5a93e037fd",
  "0xde9be858da4a475276426320d5e9262ecfc3ba460bfac56360bfa6c4c28b4ee0",
  "0xdf57089febbacf7ba0bc227dafbffa9fc08a93fdc68e1e42411a14efcf23656e"
]

export const DEV_ACCOUNT_COUNT = DEV_PRIVATE_KEYS.length
export const DEPLOYER_INDEX = 0
export const KEEPER_INDEX = 1
export const TREASURY_INDEX = 2
export const STAKER_VAULT_INDEX = 3
export const FIRST_TRADER_INDEX = 4

/**
 * The ETH/USD feed's reporter: its own key (sha256 of "curvestream/hood-localnet/eth-usd-reporter"),
 * outside the 20 dev accounts, so its posts never race another sender's nonce. Funded at deploy.
 */
export const ETH_USD_REPORTER_KEY: Hex = "0xa2e9f7bd892f8c89d75cb3ffe277af5c9057c3efdacfc11d0190b0339c9bb614"

/** Genesis balance of every dev account: 1,000,000 ETH. */
export const DEV_ACCOUNT_BALANCE_WEI = 1_000_000n * 10n ** 18n
/** USDG minted to every dev account at deploy: 10,000,000 USDG (6 decimals). */
export const DEV_ACCOUNT_USDG_RAW = 10_000_000n * 10n ** 6n

export interface DevAccount {
  readonly index: number
  readonly address: `0x${string}`
  readonly privateKey: Hex
  /** A viem local account (signs in process). */
  readonly account: LocalAccount
}

export const devAccount = (index: number): DevAccount => {
  const privateKey = DEV_PRIVATE_KEYS[index]
  if (privateKey === undefined) throw new RangeError(`dev account index 0..${DEV_ACCOUNT_COUNT - 1}`)
  const account = privateKeyToAccount(privateKey)
  return { index, address: account.address, privateKey, account }
}

export const devAccounts = (): ReadonlyArray<DevAccount> => DEV_PRIVATE_KEYS.map((_, i) => devAccount(i))
