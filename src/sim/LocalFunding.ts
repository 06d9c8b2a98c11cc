/**
 * Embedded mode only: the local account can launch on either chain at once (issue "headless
 * launches", item 7). Its embedded Solana wallet holds SOL, USDC and SVC on the localnet, its
 * embedded EVM wallet holds ETH and USDG on the Hood localnet, and the account has a linked EVM
 * wallet (rule 8: a Hood launch needs one). Topped up at every start to at least the amounts
 * below, never beyond; nothing is funded on a configured cluster or node (the link is made anyway).
 * With the simulation running, the account also stakes once (`stakeLocalAccount`), so simulated
 * Hood graduations give it Hood staking rewards.
 */
import { Effect } from "effect"
import { address } from "@solana/kit"
import { erc20Abi, type Address, getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { DEPLOYER_INDEX, DEV_PRIVATE_KEYS } from "../chain/hood/localnet/DevAccounts.js"
import { hoodPublicClient, hoodWallet } from "../chain/hood/client/HoodClient.js"
import { SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../chain/solana/program/ProgramIds.js"
import { WalletProvider } from "../services/wallets/WalletProvider.js"
import { WalletService } from "../services/wallets/WalletService.js"
import type { Principal } from "../services/wallets/Principal.js"
import { StakingService } from "../services/staking/StakingService.js"

export const LocalFunding = {
  lamports: 100n * 10n ** 9n,
  usdcRaw: 10_000n * 10n ** 6n,
  svcRaw: 10_000_000n * 10n ** 6n,
  wei: 100n * 10n ** 18n,
  usdgRaw: 100_000n * 10n ** 6n
} as const

/** The local account's embedded Solana wallet, when it has one. */
export const localSolanaWallet = (accountId: string) =>
  Effect.gen(function* () {
    const provider = yield* WalletProvider
    const wallets = yield* provider.embeddedWallets(accountId)
    const sol = wallets.find((w) => w.chain === "solana")
    return sol === undefined ? undefined : address(sol.address)
  })

export const fundLocalAccount = (accountId: string) =>
  Effect.gen(function* () {
    const solana = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const provider = yield* WalletProvider
    const wallets = yield* provider.embeddedWallets(accountId)
    const faucet = solana.localFaucet
    const owner = yield* localSolanaWallet(accountId)
    if (faucet !== undefined && owner !== undefined) {
      // On the localnet's thread (the faucet's mints have no RPC method).
      yield* faucet.topUp(owner, LocalFunding.lamports, [
        [USDC_MINT_ADDRESS, LocalFunding.usdcRaw],
        [SVC_MINT_ADDRESS, LocalFunding.svcRaw]
      ])
    }
    const evm = wallets.find((w) => w.chain === "evm")
    if (hood.embedded && evm !== undefined) {
      const wallet = getAddress(evm.address)
      const pc = hoodPublicClient(hood.chain, hood.rpcUrl)
      // The localnet journals every block it mines and refuses state edits (hardhat_*): fund by
      // transfers, from the deployer (idle after deploying; the simulation's traders keep their nonces).
      const from = hoodWallet(hood.chain, privateKeyToAccount(DEV_PRIVATE_KEYS[DEPLOYER_INDEX]!), hood.rpcUrl)
      const wei = yield* Effect.promise(() => pc.getBalance({ address: wallet }))
      if (wei < LocalFunding.wei) {
        const hash = yield* Effect.promise(() => from.sendTransaction({ to: wallet, value: LocalFunding.wei - wei, chain: hood.chain, account: from.account! }))
        yield* Effect.promise(() => pc.waitForTransactionReceipt({ hash }))
      }
      const usdg = hood.addresses.usdg
      if (usdg !== undefined) {
        const held = yield* Effect.promise(() => pc.readContract({ address: usdg, abi: erc20Abi, functionName: "balanceOf", args: [wallet] }))
        if (held < LocalFunding.usdgRaw) {
          const hash = yield* Effect.promise(() =>
            from.writeContract({ address: usdg, abi: erc20Abi, functionName: "transfer", args: [wallet, LocalFunding.usdgRaw - held], chain: hood.chain, account: from.account! })
          )
          yield* Effect.promise(() => pc.waitForTransactionReceipt({ hash }))
        }
      }
    }
    // Rule 8 needs a linked EVM wallet whichever Hood node the engine follows.
    yield* linkEvmWallet(accountId)
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("funding the local account's wallets failed; launches may be refused for balance", cause))
  )

/** The local account's owner, as its session would be. */
const ownerOf = (accountId: string): Principal => ({
  accountId,
  plan: "max",
  credential: "session",
  keyId: null,
  keyPrefix: null,
  scopes: [],
  environment: null,
  embeddedWallet: null,
  devicePrefix: null
})

/** What the local account stakes when the simulation runs: 100,000 platform tokens (it holds 10,000,000). */
export const LOCAL_STAKE_RAW = 100_000n * 10n ** 6n

/**
 * Embedded mode with the simulation: the local account stakes `LOCAL_STAKE_RAW` once, from its
 * embedded Solana wallet through the staking service (a real svc-stake stake, under one fixed
 * `clientStakeId`, so it happens at most once whatever restarts do), so the simulated Hood tokens
 * that graduate give it Hood staking rewards to see. Skipped when the wallet already holds staked
 * receipt.
 */
export const stakeLocalAccount = (accountId: string) =>
  Effect.gen(function* () {
    const staking = yield* StakingService
    const owner = yield* localSolanaWallet(accountId)
    if (owner === undefined || (yield* staking.chain.wallet(owner)).receiptRaw > 0n) return
    yield* staking.build(
      { accountId, keyId: null, embeddedWallet: null, principal: ownerOf(accountId), keyPaused: false },
      { action: "stake", payer: "main", clientStakeId: "local-account-stake", dryRun: false, amountRaw: LOCAL_STAKE_RAW }
    )
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("the local account's stake failed; it earns no Hood staking rewards", cause)))

/** Rule 8: a linked EVM wallet on the local account (a fresh key, ownership proven by its signature). */
const linkEvmWallet = (accountId: string) =>
  Effect.gen(function* () {
    const service = yield* WalletService
    const owner = ownerOf(accountId)
    const listed = yield* service.list(owner)
    if (listed.wallets.some((w) => w.chain === "evm")) return
    const key = privateKeyToAccount(generatePrivateKey())
    const signature = yield* Effect.promise(() => key.signMessage({ message: service.linkChallenge(owner, "evm", key.address) }))
    yield* service.link(owner, { chain: "evm", address: key.address as Address, signature })
  })
