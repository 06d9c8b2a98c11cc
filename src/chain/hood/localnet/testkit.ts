/**
 * Driving the Hood localnet from tests and the simulation: clients for a dev account, blocks by
 * hand, snapshots, and reorgs.
 *
 * Reorgs (for the ingester's tests): Hardhat keeps one chain, but `evm_revert` drops every block
 * after a snapshot, and the blocks mined next take the same heights with different contents or
 * timestamps, so a follower that saw the old blocks sees their hashes change:
 *
 *   const id = await snapshot(tc)          // at head N
 *   ...send transactions / mine(tc, 3)     // blocks N+1..N+3, the follower ingests them
 *   await reorg(tc, id, 4)                 // back to N, then 4 empty blocks N+1..N+4 with new hashes
 *   (or after revertTo(tc, id): send other transactions, which land at N+1.. with other logs)
 *
 * A snapshot is consumed by its revert (Hardhat semantics): take a new one to go back again.
 * `reorg` moves the next timestamp forward so even an empty replacement block hashes differently
 * from the one it replaces.
 */
import {
  type Address,
  createTestClient,
  type Hex,
  http,
  publicActions,
  type PublicClient,
  type TestClient,
  walletActions
} from "viem"
import { Effect, Exit, Scope } from "effect"
import { hoodPublicClient, type HoodClients, hoodWallet } from "../client/HoodClient.js"
import type { DevAccount } from "./DevAccounts.js"
import { type HoodLocalnetOptions, type HoodLocalnetShape, make } from "./LocalnetService.js"

export interface StartedHoodLocalnet extends HoodLocalnetShape {
  /** Closes the localnet's scope: stops mining and the server. Idempotent. */
  close(): Promise<void>
}

/** The localnet outside an Effect program (tests' beforeAll, scripts): the layer's scope, owned by the caller. */
export const startHoodLocalnet = async (options: HoodLocalnetOptions = {}): Promise<StartedHoodLocalnet> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const shape = await Effect.runPromise(make(options).pipe(Scope.extend(scope)))
    let closed = false
    return {
      ...shape,
      close: async () => {
        if (closed) return
        closed = true
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }
  } catch (e) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw e
  }
}

export type HoodTestClient = TestClient<"hardhat">

export const hoodTestClient = (localnet: Pick<HoodLocalnetShape, "chain" | "rpcUrl">): HoodTestClient =>
  createTestClient({ mode: "hardhat", chain: localnet.chain, transport: http(localnet.rpcUrl, { retryCount: 0 }) })
    .extend(publicActions)
    .extend(walletActions) as unknown as HoodTestClient

export const publicClientOf = (localnet: Pick<HoodLocalnetShape, "chain" | "rpcUrl">): PublicClient =>
  hoodPublicClient(localnet.chain, localnet.rpcUrl)

/** Public + wallet clients acting as `account` (a dev account or its index). */
export const clientsFor = (localnet: HoodLocalnetShape, account: DevAccount | number): HoodClients => {
  const a = typeof account === "number" ? localnet.accounts[account] : account
  if (a === undefined) throw new RangeError(`no dev account ${String(account)}`)
  return { publicClient: publicClientOf(localnet), wallet: hoodWallet(localnet.chain, a.account, localnet.rpcUrl) }
}

export const snapshot = (tc: HoodTestClient): Promise<Hex> => tc.snapshot()

/** Back to the snapshot (consumes it). Throws when the node does not know the snapshot. */
export const revertTo = async (tc: HoodTestClient, id: Hex): Promise<void> => {
  const ok = await tc.request({ method: "evm_revert", params: [id] } as never)
  if (ok !== true) throw new Error(`evm_revert: unknown or consumed snapshot ${id}`)
}

export const mine = (tc: HoodTestClient, blocks = 1): Promise<void> => tc.mine({ blocks })

export const setIntervalMining = (tc: HoodTestClient, intervalMs: number): Promise<void> => tc.setIntervalMining({ interval: intervalMs })

export const setAutomine = (tc: HoodTestClient, on: boolean): Promise<void> => tc.setAutomine(on)

export const setEthBalance = (tc: HoodTestClient, address: Address, wei: bigint): Promise<void> => tc.setBalance({ address, value: wei })

/**
 * Revert to `snapshotId` and mine `blocks` empty blocks whose timestamps start `skewSeconds`
 * after the original head's, so every replaced height gets a new hash.
 */
export const reorg = async (tc: HoodTestClient, snapshotId: Hex, blocks: number, skewSeconds = 7): Promise<void> => {
  await revertTo(tc, snapshotId)
  const head = await (tc as unknown as PublicClient).getBlock()
  await tc.setNextBlockTimestamp({ timestamp: head.timestamp + BigInt(skewSeconds) })
  if (blocks > 0) await tc.mine({ blocks })
}
