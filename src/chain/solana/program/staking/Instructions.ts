/**
 * svc-stake's instructions: a 1-byte discriminator then little-endian fixed-width arguments, and
 * each instruction's account list, in order, with its signer/writable roles (the program, the
 * client builders and docs/solana-program.md follow these lists). Also the program's PDAs.
 * `decodeSvcStakeInstruction` returns undefined for anything else, never throws.
 */
import type { Address } from "@solana/kit"
import { addressToBytes, ByteReader, ByteWriter, tryDecode, utf8Bytes } from "../internal/bytes.js"
import type { AccountSlot } from "../Instructions.js"
import { findProgramAddressSync, type FoundPda, type Seed } from "../Pda.js"
import { SVC_STAKE_PROGRAM_ID } from "../ProgramIds.js"

export const SvcStakeInstructionTag = {
  Stake: 0,
  Unstake: 1,
  Finish: 2,
  Configure: 3,
  DistributeReward: 4,
  ClaimReward: 5
} as const

export interface PoolParams {
  readonly withdrawalTimelockSeconds: bigint
  readonly maxActiveWithdrawals: number
  readonly paused: boolean
}

export type SvcStakeInstructionData =
  | { readonly kind: "stake"; readonly amountRaw: bigint }
  | { readonly kind: "unstake"; readonly amountRaw: bigint }
  | { readonly kind: "finish" }
  | ({ readonly kind: "configure" } & PoolParams)
  | { readonly kind: "distribute_reward"; readonly owner: Address; readonly amountRaw: bigint }
  | { readonly kind: "claim_reward" }

const amount = (tag: number, amountRaw: bigint) => new ByteWriter(9).u8(tag).u64(amountRaw).done()

export const encodeStake = (amountRaw: bigint): Uint8Array => amount(SvcStakeInstructionTag.Stake, amountRaw)
export const encodeUnstake = (amountRaw: bigint): Uint8Array => amount(SvcStakeInstructionTag.Unstake, amountRaw)
export const encodeFinish = (): Uint8Array => Uint8Array.of(SvcStakeInstructionTag.Finish)
export const encodeConfigure = (p: PoolParams): Uint8Array =>
  new ByteWriter(11).u8(SvcStakeInstructionTag.Configure).u64(p.withdrawalTimelockSeconds).u8(p.maxActiveWithdrawals).bool(p.paused).done()
export const encodeDistributeReward = (owner: Address, amountRaw: bigint): Uint8Array =>
  new ByteWriter(41).u8(SvcStakeInstructionTag.DistributeReward).address(owner).u64(amountRaw).done()
export const encodeClaimReward = (): Uint8Array => Uint8Array.of(SvcStakeInstructionTag.ClaimReward)

export const decodeSvcStakeInstruction = (data: Uint8Array): SvcStakeInstructionData | undefined =>
  tryDecode((): SvcStakeInstructionData | undefined => {
    const r = new ByteReader(data)
    let out: SvcStakeInstructionData
    switch (r.u8()) {
      case SvcStakeInstructionTag.Stake:
        out = { kind: "stake", amountRaw: r.u64() }
        break
      case SvcStakeInstructionTag.Unstake:
        out = { kind: "unstake", amountRaw: r.u64() }
        break
      case SvcStakeInstructionTag.Finish:
        out = { kind: "finish" }
        break
      case SvcStakeInstructionTag.Configure: {
        const withdrawalTimelockSeconds = r.u64()
        const maxActiveWithdrawals = r.u8()
        const paused = r.u8()
        if (paused > 1) return undefined
        out = { kind: "configure", withdrawalTimelockSeconds, maxActiveWithdrawals, paused: paused === 1 }
        break
      }
      case SvcStakeInstructionTag.DistributeReward:
        out = { kind: "distribute_reward", owner: r.address(), amountRaw: r.u64() }
        break
      case SvcStakeInstructionTag.ClaimReward:
        out = { kind: "claim_reward" }
        break
      default:
        return undefined
    }
    r.end()
    return out
  })

// --- Account lists ---------------------------------------------------------------------------

const slot = <const N extends string>(name: N, signer: boolean, writable: boolean, doc: string): AccountSlot<N> => ({ name, signer, writable, doc })

export const StakeAccounts = [
  slot("owner", true, true, "the staker; signs the platform-token transfer"),
  slot("pool", false, true, "PDA [\"stake_pool\"]"),
  slot("receiptMint", false, true, "pool.receiptMint (authority = pool)"),
  slot("ownerPlatformAccount", false, true, "owner's token account of pool.platformMint"),
  slot("ownerReceiptAccount", false, true, "owner's token account of the receipt mint"),
  slot("vault", false, true, "pool.vault"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

export const UnstakeAccounts = [
  slot("owner", true, true, "burns its receipt; pays the staker and withdrawal rent"),
  slot("pool", false, true, "PDA [\"stake_pool\"]"),
  slot("receiptMint", false, true, "pool.receiptMint"),
  slot("ownerReceiptAccount", false, true, "owner's token account of the receipt mint"),
  slot("staker", false, true, "PDA [\"staker\", owner]; created on the first unstake"),
  slot("withdrawal", true, true, "a fresh keypair; becomes the withdrawal (co-signs)"),
  slot("systemProgram", false, false, "11111111111111111111111111111111"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

export const FinishAccounts = [
  slot("owner", true, true, "withdrawal.owner"),
  slot("pool", false, true, "PDA [\"stake_pool\"]"),
  slot("staker", false, true, "PDA [\"staker\", owner]"),
  slot("withdrawal", false, true, "an active withdrawal of owner whose wait has passed"),
  slot("vault", false, true, "pool.vault"),
  slot("ownerPlatformAccount", false, true, "owner's token account of pool.platformMint"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

export const ConfigureAccounts = [
  slot("authority", true, false, "pool.authority"),
  slot("pool", false, true, "PDA [\"stake_pool\"]")
] as const

export const DistributeRewardAccounts = [
  slot("authority", true, true, "pool.authority; pays the reward's rent and funds it"),
  slot("pool", false, true, "PDA [\"stake_pool\"]"),
  slot("reward", false, true, "PDA [\"reward\", pool.nextRewardId as u64 LE]"),
  slot("mint", false, false, "the reward's mint"),
  slot("rewardVault", false, true, "PDA [\"reward_vault\", mint]: token account, authority pool; created when missing"),
  slot("authorityTokenAccount", false, true, "authority's token account of mint (the source)"),
  slot("systemProgram", false, false, "11111111111111111111111111111111"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

export const ClaimRewardAccounts = [
  slot("payer", true, true, "anyone (the service's distributor): pays the fee; the reward goes to its owner only"),
  slot("pool", false, false, "PDA [\"stake_pool\"]"),
  slot("reward", false, true, "an unclaimed reward"),
  slot("rewardVault", false, true, "PDA [\"reward_vault\", reward.mint]"),
  slot("ownerTokenAccount", false, true, "a token account of reward.mint owned by reward.owner"),
  slot("tokenProgram", false, false, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
] as const

// --- PDAs ------------------------------------------------------------------------------------

const u64le = (v: bigint): Seed => new ByteWriter(8).u64(v).done()

export const StakeSeeds = {
  pool: (): Seed[] => [utf8Bytes("stake_pool")],
  vault: (pool: Address): Seed[] => [utf8Bytes("stake_vault"), addressToBytes(pool)],
  staker: (owner: Address): Seed[] => [utf8Bytes("staker"), addressToBytes(owner)],
  reward: (rewardId: bigint): Seed[] => [utf8Bytes("reward"), u64le(rewardId)],
  rewardVault: (mint: Address): Seed[] => [utf8Bytes("reward_vault"), addressToBytes(mint)]
} as const

const find = (seeds: Seed[]): FoundPda => findProgramAddressSync(seeds, SVC_STAKE_PROGRAM_ID)

export const findStakePoolSync = (): FoundPda => find(StakeSeeds.pool())
export const findStakeVaultSync = (pool: Address): FoundPda => find(StakeSeeds.vault(pool))
export const findStakerSync = (owner: Address): FoundPda => find(StakeSeeds.staker(owner))
export const findRewardSync = (rewardId: bigint): FoundPda => find(StakeSeeds.reward(rewardId))
export const findRewardVaultSync = (mint: Address): FoundPda => find(StakeSeeds.rewardVault(mint))
