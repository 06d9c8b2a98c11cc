/**
 * What staking tests do to a Solana localnet from outside the engine, as its faucet (the pool's
 * authority and the reward distributor; a published dev key): fund a wallet with SOL and the
 * platform token, reconfigure svc-stake's pool, distribute a reward, and read token balances.
 * Real signed transactions over JSON-RPC, confirmed before returning.
 */
import { type Address, address, createSolanaRpc, type Instruction, lamports, signature as asSignature } from "@solana/kit"
import { faucetSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction, getMintToInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { getConfigureStakePoolInstruction, getDistributeRewardInstruction, stakePoolAddress } from "../../src/chain/solana/client/StakeInstructions.js"
import { buildAndSignTransaction } from "../../src/chain/solana/client/Transactions.js"
import { decodeSplTokenAccount } from "../../src/chain/solana/program/accounts/SplTokenAccount.js"
import { findAssociatedTokenAddressSync } from "../../src/chain/solana/program/Pda.js"
import { decodeStakePool } from "../../src/chain/solana/program/staking/Accounts.js"
import type { PoolParams } from "../../src/chain/solana/program/staking/Instructions.js"
import { eventually } from "./eventually.js"

const ata = (owner: Address, mint: Address) => findAssociatedTokenAddressSync(owner, mint).address

export const stakingChain = (rpcUrl: string) => {
  const rpc = createSolanaRpc(rpcUrl)
  // One signer instance for every transaction (kit refuses two instances of one address).
  const faucetOnce = faucetSigner()
  const faucet = () => faucetOnce

  const sendAsFaucet = async (instructions: ReadonlyArray<Instruction>): Promise<string> => {
    const signer = await faucet()
    const { value } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
    const signed = await buildAndSignTransaction({ feePayer: signer, lifetime: value, instructions })
    await rpc.sendTransaction(signed.base64 as never, { encoding: "base64", preflightCommitment: "confirmed" }).send()
    await eventually(
      async () => {
        const s = (await rpc.getSignatureStatuses([asSignature(signed.signature)]).send()).value[0]
        if (s?.err != null) throw new Error(`faucet transaction failed: ${JSON.stringify(s.err)}`)
        return s?.confirmationStatus === "confirmed" || s?.confirmationStatus === "finalized" ? true : undefined
      },
      { what: "a faucet transaction to confirm", deadlineMs: 20_000, intervalMs: 50 }
    )
    return signed.signature
  }

  const mintTo = async (mint: Address, owner: Address, amountRaw: bigint) => {
    const signer = await faucet()
    return [
      getCreateAssociatedTokenInstruction({ payer: signer, ata: ata(owner, mint), owner, mint }),
      getMintToInstruction({ mint, destination: ata(owner, mint), authority: signer, amount: amountRaw })
    ]
  }

  const tokenBalance = async (owner: string, mint: Address): Promise<bigint> => {
    const a = (await rpc.getAccountInfo(ata(address(owner), mint), { encoding: "base64", commitment: "confirmed" }).send()).value
    return a === null ? 0n : (decodeSplTokenAccount(Buffer.from(a.data[0], "base64"))?.amount ?? 0n)
  }

  const pool = async () => {
    const a = (await rpc.getAccountInfo(stakePoolAddress(), { encoding: "base64", commitment: "confirmed" }).send()).value
    return decodeStakePool(Buffer.from(a!.data[0], "base64"))!
  }

  return {
    rpc,
    tokenBalance,
    pool,
    /** Airdrops SOL and mints `mint` units to `owner`. */
    fund: async (owner: string, sol: bigint, mint: Address, amountRaw: bigint) => {
      const sig = await rpc.requestAirdrop(address(owner), lamports(sol)).send()
      await eventually(async () => ((await rpc.getSignatureStatuses([sig]).send()).value[0] === null ? undefined : true), {
        what: "the airdrop",
        intervalMs: 50
      })
      if (amountRaw > 0n) await sendAsFaucet(await mintTo(mint, address(owner), amountRaw))
    },
    configurePool: async (params: PoolParams) => sendAsFaucet([getConfigureStakePoolInstruction({ authority: await faucet(), ...params })]),
    /** Records a reward of `amountRaw` `mint` for `owner`; its id. */
    distributeReward: async (owner: string, mint: Address, amountRaw: bigint): Promise<bigint> => {
      const signer = await faucet()
      const rewardId = (await pool()).nextRewardId
      await sendAsFaucet([
        ...(await mintTo(mint, signer.address, amountRaw)),
        getDistributeRewardInstruction({ authority: signer, rewardId, owner: address(owner), mint, amountRaw })
      ])
      return rewardId
    }
  }
}
