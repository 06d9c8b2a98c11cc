/**
 * Instruction builders for svc-stake (account order: `program/staking/Instructions.ts`). Every
 * address is derived from the owner, the withdrawal, the reward id or the mint; token accounts
 * default to the owner's ATAs. A stake needs the owner's receipt ATA to exist and a claim needs
 * the reward owner's ATA: `stakeInstructions` / `claimRewardInstructions` put the idempotent ATA
 * create in front.
 */
import type { Address, Instruction } from "@solana/kit"
import { findAssociatedTokenAddressSync } from "../program/Pda.js"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS, SVC_STAKE_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../program/ProgramIds.js"
import {
  encodeClaimReward,
  encodeConfigure,
  encodeDistributeReward,
  encodeFinish,
  encodeStake,
  encodeUnstake,
  findRewardSync,
  findRewardVaultSync,
  findStakePoolSync,
  findStakerSync,
  findStakeVaultSync,
  type PoolParams
} from "../program/staking/Instructions.js"
import { addressOf, type AnyAccountMeta, readonly, type SignerInput, signerMeta, writable } from "./Accounts.js"
import { getCreateAssociatedTokenInstruction } from "./SplInstructions.js"

const ata = (owner: Address, mint: Address): Address => findAssociatedTokenAddressSync(owner, mint).address

export const stakePoolAddress = (): Address => findStakePoolSync().address
export const stakeVaultAddress = (): Address => findStakeVaultSync(stakePoolAddress()).address

const ix = (accounts: ReadonlyArray<AnyAccountMeta>, data: Uint8Array): Instruction => ({ programAddress: SVC_STAKE_PROGRAM_ID, accounts, data })

/** Creates the owner's receipt ATA when missing (the owner pays), then stakes `amountRaw`. */
export const stakeInstructions = (i: { owner: SignerInput; amountRaw: bigint }): Instruction[] => {
  const owner = addressOf(i.owner)
  return [
    getCreateAssociatedTokenInstruction({ payer: i.owner, ata: ata(owner, STAKED_SVC_MINT_ADDRESS), owner, mint: STAKED_SVC_MINT_ADDRESS }),
    ix(
      [
        signerMeta(i.owner, true),
        writable(stakePoolAddress()),
        writable(STAKED_SVC_MINT_ADDRESS),
        writable(ata(owner, SVC_MINT_ADDRESS)),
        writable(ata(owner, STAKED_SVC_MINT_ADDRESS)),
        writable(stakeVaultAddress()),
        readonly(TOKEN_PROGRAM_ID)
      ],
      encodeStake(i.amountRaw)
    )
  ]
}

export const getUnstakeInstruction = (i: { owner: SignerInput; withdrawal: SignerInput; amountRaw: bigint }): Instruction => {
  const owner = addressOf(i.owner)
  return ix(
    [
      signerMeta(i.owner, true),
      writable(stakePoolAddress()),
      writable(STAKED_SVC_MINT_ADDRESS),
      writable(ata(owner, STAKED_SVC_MINT_ADDRESS)),
      writable(findStakerSync(owner).address),
      signerMeta(i.withdrawal, true),
      readonly(SYSTEM_PROGRAM_ID),
      readonly(TOKEN_PROGRAM_ID)
    ],
    encodeUnstake(i.amountRaw)
  )
}

/** Creates the owner's platform-token ATA when missing, then finishes `withdrawal`. */
export const finishInstructions = (i: { owner: SignerInput; withdrawal: Address }): Instruction[] => {
  const owner = addressOf(i.owner)
  return [
    getCreateAssociatedTokenInstruction({ payer: i.owner, ata: ata(owner, SVC_MINT_ADDRESS), owner, mint: SVC_MINT_ADDRESS }),
    ix(
      [
        signerMeta(i.owner, true),
        writable(stakePoolAddress()),
        writable(findStakerSync(owner).address),
        writable(i.withdrawal),
        writable(stakeVaultAddress()),
        writable(ata(owner, SVC_MINT_ADDRESS)),
        readonly(TOKEN_PROGRAM_ID)
      ],
      encodeFinish()
    )
  ]
}

export const getConfigureStakePoolInstruction = (i: { authority: SignerInput } & PoolParams): Instruction =>
  ix([signerMeta(i.authority, false), writable(stakePoolAddress())], encodeConfigure(i))

/** Distributes reward `rewardId` (the pool's `nextRewardId`) from the authority's ATA of `mint`. */
export const getDistributeRewardInstruction = (i: {
  authority: SignerInput
  rewardId: bigint
  owner: Address
  mint: Address
  amountRaw: bigint
}): Instruction =>
  ix(
    [
      signerMeta(i.authority, true),
      writable(stakePoolAddress()),
      writable(findRewardSync(i.rewardId).address),
      readonly(i.mint),
      writable(findRewardVaultSync(i.mint).address),
      writable(ata(addressOf(i.authority), i.mint)),
      readonly(SYSTEM_PROGRAM_ID),
      readonly(TOKEN_PROGRAM_ID)
    ],
    encodeDistributeReward(i.owner, i.amountRaw)
  )

/** Creates the owner's ATA of the reward's mint when missing (the payer pays), then claims. */
export const claimRewardInstructions = (i: { payer: SignerInput; rewardId: bigint; owner: Address; mint: Address }): Instruction[] => [
  getCreateAssociatedTokenInstruction({ payer: i.payer, ata: ata(i.owner, i.mint), owner: i.owner, mint: i.mint }),
  ix(
    [
      signerMeta(i.payer, true),
      readonly(stakePoolAddress()),
      writable(findRewardSync(i.rewardId).address),
      writable(findRewardVaultSync(i.mint).address),
      writable(ata(i.owner, i.mint)),
      readonly(TOKEN_PROGRAM_ID)
    ],
    encodeClaimReward()
  )
]
