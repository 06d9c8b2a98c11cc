/**
 * The chain side of staking (svc-stake on Solana, `docs/solana-program.md`): reads of the pool and
 * of one wallet's position (balances, withdrawals, unclaimed rewards), the chain's clock, the
 * costs of an operation, building its transaction (v0, the payer's slot empty, the unstake's
 * withdrawal co-signature in place), sending signed bytes, and what became of a signature. No
 * SQL, no HTTP: `StakingService` decides. Every read failure is `chain_unavailable` (retryable),
 * never a zero.
 *
 * Figures: the staked amount is the owner's associated receipt account, read by the same reader
 * the tier snapshot uses (`solanaBalanceReader`), so positions and tier agree; pending-withdrawal
 * units are the unfinished withdrawals the staker account lists.
 */
import {
  type Address,
  address,
  createNoopSigner,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransactionMessageWithSigners,
  signature as asSignature
} from "@solana/kit"
import { Effect } from "effect"
import {
  claimRewardInstructions,
  finishInstructions,
  getUnstakeInstruction,
  stakeInstructions,
  stakePoolAddress
} from "../../chain/solana/client/StakeInstructions.js"
import { makeTransactionWatch } from "../../chain/solana/client/TransactionWatch.js"
import { buildAndSignTransaction, buildTransactionMessage } from "../../chain/solana/client/Transactions.js"
import { decodeSplTokenAccount, SPL_TOKEN_ACCOUNT_SIZE } from "../../chain/solana/program/accounts/SplTokenAccount.js"
import { findAssociatedTokenAddressSync } from "../../chain/solana/program/Pda.js"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS, SVC_STAKE_PROGRAM_ID } from "../../chain/solana/program/ProgramIds.js"
import {
  decodeReward,
  decodeStakePool,
  decodeStaker,
  decodeWithdrawal,
  type RewardAccount,
  type StakePoolAccount,
  STAKER_ACCOUNT_SIZE,
  WITHDRAWAL_ACCOUNT_SIZE
} from "../../chain/solana/program/staking/Accounts.js"
import { findRewardSync, findStakerSync } from "../../chain/solana/program/staking/Instructions.js"
import { rewardFiltersOf, unclaimedRewardsOf } from "../../chain/solana/program/staking/Rewards.js"
import { stakingError } from "./StakingError.js"

/** Solana's fee per signature and rent rule (the localnet's and mainnet's). */
export const LAMPORTS_PER_SIGNATURE = 5_000n
export const rentLamports = (dataLen: number): bigint => BigInt(128 + dataLen) * 6_960n

export type StakeAction = "stake" | "unstake" | "finish"

export interface WithdrawalView {
  readonly withdrawal: string
  readonly amountRaw: bigint
  readonly startTimeSec: bigint
  readonly endTimeSec: bigint
  /** 0: not finished. */
  readonly claimTimeSec: bigint
}

export interface WalletStake {
  readonly owner: string
  readonly lamports: bigint
  readonly platformRaw: bigint
  readonly receiptRaw: bigint
  readonly hasPlatformAccount: boolean
  readonly hasReceiptAccount: boolean
  readonly hasStaker: boolean
  readonly activeWithdrawals: number
  readonly withdrawals: ReadonlyArray<WithdrawalView>
  readonly rewards: ReadonlyArray<RewardAccount>
}

export interface BuildInput {
  readonly action: StakeAction
  readonly owner: string
  readonly amountRaw?: bigint
  readonly withdrawal?: string
}

export interface BuiltTransaction {
  /** Wire bytes: the owner's signature slot empty, the withdrawal's (unstake) filled. */
  readonly wire: Uint8Array
  readonly messageBytes: Uint8Array
  readonly recentBlockhash: string
  readonly lastValidBlockHeight: bigint
  readonly withdrawal: string | null
}

export type { Observed } from "../../chain/solana/client/TransactionWatch.js"

export interface StakingChainOptions {
  readonly rpcUrl: string
  readonly timeoutMs?: number
}

const base64 = getBase64Decoder()
const fromBase64 = getBase64Encoder()
const txEncoder = getTransactionEncoder()
const txDecoder = getTransactionDecoder()

const ata = (owner: Address, mint: Address) => findAssociatedTokenAddressSync(owner, mint).address

/** Lamports an operation needs beyond its fee: the accounts it creates. Pure. */
export const operationRentLamports = (action: StakeAction, w: Pick<WalletStake, "hasReceiptAccount" | "hasStaker" | "hasPlatformAccount">): bigint => {
  switch (action) {
    case "stake":
      return w.hasReceiptAccount ? 0n : rentLamports(SPL_TOKEN_ACCOUNT_SIZE)
    case "unstake":
      return (w.hasStaker ? 0n : rentLamports(STAKER_ACCOUNT_SIZE)) + rentLamports(WITHDRAWAL_ACCOUNT_SIZE)
    case "finish":
      return w.hasPlatformAccount ? 0n : rentLamports(SPL_TOKEN_ACCOUNT_SIZE)
  }
}

/** Fee of an operation's transaction: the owner's signature, plus the withdrawal's on unstake. Pure. */
export const operationFeeLamports = (action: StakeAction): bigint => LAMPORTS_PER_SIGNATURE * (action === "unstake" ? 2n : 1n)

/** What must stay in the fee payer after the operation (a system account's rent exemption). */
export const PAYER_RESERVE_LAMPORTS = rentLamports(0)

export const makeStakingChain = (options: StakingChainOptions) => {

  const watch = makeTransactionWatch(options.rpcUrl, (message) => stakingError("chain_unavailable", message), options.timeoutMs)
  const { rpc, read, send, observe } = watch

  const accounts = (addresses: ReadonlyArray<Address>) =>
    Effect.map(
      read("getMultipleAccounts", (signal) => rpc.getMultipleAccounts([...addresses], { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })),
      (r) => r.value.map((a) => (a === null ? undefined : { owner: a.owner, lamports: a.lamports, data: new Uint8Array(fromBase64.encode(a.data[0])) }))
    )

  const pool = Effect.flatMap(accounts([stakePoolAddress()]), ([a]) => {
    const p = a !== undefined && a.owner === SVC_STAKE_PROGRAM_ID ? decodeStakePool(a.data) : undefined
    return p === undefined ? Effect.fail(stakingError("chain_unavailable", "the staking pool is not readable")) : Effect.succeed<StakePoolAccount>(p)
  })

  /** The chain's clock: the block time of the newest confirmed slot (the program's clock). */
  const clockSec = Effect.gen(function* () {
    const slot = yield* read("getSlot", (signal) => rpc.getSlot({ commitment: "confirmed" }).send({ abortSignal: signal }))
    const time = yield* read("getBlockTime", (signal) => rpc.getBlockTime(slot).send({ abortSignal: signal }))
    return BigInt(time)
  })

  const tokenAmount = (a: { owner: string; data: Uint8Array } | undefined, mint: Address): bigint | undefined => {
    const t = a === undefined ? undefined : decodeSplTokenAccount(a.data)
    return t !== undefined && t.mint === mint ? t.amount : undefined
  }

  const wallet = (ownerText: string) =>
    Effect.gen(function* () {
      const owner = address(ownerText)
      const staker = findStakerSync(owner).address
      const [sys, platform, receipt, stakerAccount] = yield* accounts([owner, ata(owner, SVC_MINT_ADDRESS), ata(owner, STAKED_SVC_MINT_ADDRESS), staker])
      const s = stakerAccount !== undefined && stakerAccount.owner === SVC_STAKE_PROGRAM_ID ? decodeStaker(stakerAccount.data) : undefined
      const listed = s?.withdrawals ?? []
      const found = listed.length === 0 ? [] : yield* accounts(listed.map((w) => w.address))
      const withdrawals = listed.flatMap((entry, i) => {
        const a = found[i]
        const w = a !== undefined && a.owner === SVC_STAKE_PROGRAM_ID ? decodeWithdrawal(a.data) : undefined
        return w === undefined || w.owner !== owner
          ? []
          : [{ withdrawal: entry.address as string, amountRaw: w.amountRaw, startTimeSec: w.startTimeSec, endTimeSec: w.endTimeSec, claimTimeSec: w.claimTimeSec }]
      })
      const [programId, filters] = rewardFiltersOf(owner)
      const scanned = yield* read("getProgramAccounts", (signal) =>
        rpc
          .getProgramAccounts(programId, {
            encoding: "base64",
            commitment: "confirmed",
            filters: filters.map((f) =>
              "dataSize" in f
                ? { dataSize: BigInt(f.dataSize) }
                : { memcmp: { offset: BigInt(f.memcmp.offset), bytes: base64.decode(f.memcmp.bytes) as never, encoding: "base64" as const } }
            )
          })
          .send({ abortSignal: signal })
      )
      const rewards = unclaimedRewardsOf(() => scanned.map((r) => ({ account: { data: new Uint8Array(fromBase64.encode(r.account.data[0])) } })), owner)
      const platformRaw = tokenAmount(platform, SVC_MINT_ADDRESS)
      const receiptRaw = tokenAmount(receipt, STAKED_SVC_MINT_ADDRESS)
      return {
        owner: ownerText,
        lamports: sys?.lamports ?? 0n,
        platformRaw: platformRaw ?? 0n,
        receiptRaw: receiptRaw ?? 0n,
        hasPlatformAccount: platformRaw !== undefined,
        hasReceiptAccount: receiptRaw !== undefined,
        hasStaker: s !== undefined,
        activeWithdrawals: s?.activeWithdrawals ?? 0,
        withdrawals,
        rewards
      } satisfies WalletStake
    })

  const instructionsOf = (input: BuildInput, owner: Address, withdrawal: Awaited<ReturnType<typeof generateKeyPairSigner>> | undefined): Instruction[] => {
    const payer = createNoopSigner(owner)
    switch (input.action) {
      case "stake":
        return stakeInstructions({ owner: payer, amountRaw: input.amountRaw ?? 0n })
      case "unstake":
        return [getUnstakeInstruction({ owner: payer, withdrawal: withdrawal!, amountRaw: input.amountRaw ?? 0n })]
      case "finish":
        return finishInstructions({ owner: payer, withdrawal: address(input.withdrawal ?? "") })
    }
  }

  /** A v0 transaction for `owner` to sign: the blockhash now, the withdrawal keypair's signature (unstake) in place. */
  const build = (input: BuildInput) =>
    Effect.gen(function* () {
      const owner = address(input.owner)
      const latest = yield* read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal }))
      const withdrawal = input.action === "unstake" ? yield* Effect.promise(() => generateKeyPairSigner()) : undefined
      const message = buildTransactionMessage({
        feePayer: createNoopSigner(owner),
        lifetime: { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight },
        instructions: instructionsOf(input, owner, withdrawal)
      })
      const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(message))
      return {
        wire: new Uint8Array(txEncoder.encode(partial)),
        messageBytes: new Uint8Array(partial.messageBytes),
        recentBlockhash: latest.value.blockhash,
        lastValidBlockHeight: latest.value.lastValidBlockHeight,
        withdrawal: withdrawal?.address ?? null
      } satisfies BuiltTransaction
    })

  /** The message bytes of a landed transaction, or undefined when the chain has none confirmed. */
  const landedMessage = (signature: string) =>
    Effect.map(
      read("getTransaction", (signal) =>
        rpc.getTransaction(asSignature(signature), { encoding: "base64", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send({ abortSignal: signal })
      ),
      (tx) => {
        if (tx === null) return undefined
        const decoded = txDecoder.decode(fromBase64.encode(tx.transaction[0]))
        return { messageBytes: new Uint8Array(decoded.messageBytes), err: tx.meta?.err ?? null }
      }
    )

  /** Reward `rewardId` as the program holds it; undefined when there is none. */
  const reward = (rewardId: bigint) =>
    Effect.map(accounts([findRewardSync(rewardId).address]), ([a]) =>
      a !== undefined && a.owner === SVC_STAKE_PROGRAM_ID ? decodeReward(a.data) : undefined
    )

  /** A claim of `r` paid for by `payer` (the distributor), fully signed: the owner's ATA created when missing. */
  const claimTransaction = (payer: KeyPairSigner, r: RewardAccount) =>
    Effect.gen(function* () {
      const latest = yield* read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal }))
      const signed = yield* Effect.promise(() =>
        buildAndSignTransaction({
          feePayer: payer,
          lifetime: latest.value,
          instructions: claimRewardInstructions({ payer, rewardId: r.rewardId, owner: r.owner, mint: r.mint })
        })
      )
      return { signature: signed.signature, base64: signed.base64, lastValidBlockHeight: latest.value.lastValidBlockHeight }
    })

  return { pool, clockSec, wallet, build, send, observe, landedMessage, reward, claimTransaction }
}

export type StakingChain = ReturnType<typeof makeStakingChain>

/** A signed wire transaction's message and whether every required signature slot is filled. Undefined: not a transaction. Pure. */
export const signedParts = (wire: Uint8Array): { readonly messageBytes: Uint8Array; readonly signature: string; readonly complete: boolean } | undefined => {
  try {
    const tx = txDecoder.decode(wire)
    const sigs = Object.values(tx.signatures)
    const first = sigs[0]
    if (first === null || first === undefined) return { messageBytes: new Uint8Array(tx.messageBytes), signature: "", complete: false }
    return {
      messageBytes: new Uint8Array(tx.messageBytes),
      signature: getBase58(first),
      complete: sigs.every((s) => s !== null && s.some((b) => b !== 0))
    }
  } catch {
    return undefined
  }
}

const base58 = getBase58Decoder()
const getBase58 = (bytes: Uint8Array): string => base58.decode(bytes)
export const toBase64 = (bytes: Uint8Array): string => base64.decode(bytes)
