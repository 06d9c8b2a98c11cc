/**
 * The partition claims `OrderTriggers` holds (`assigned`, less `revoked`) and the fence of a
 * market's trigger writes they give. Not partitioned and never handed a partition, there are none:
 * every market is held here and its writes are not fenced (one process consumes everything). A
 * first claim ends that for good: from then on only the markets of claimed partitions are held.
 */
import type { PartitionClaim } from "../../../../actors/runtime/ShardedRuntime.js"
import type { TriggerFence } from "../OrderStore.js"

export const makeTriggerClaims = (partitioned: boolean) => {
  // Undefined while not partitioned and never handed a partition: every market is held, writes are not fenced.
  let claims: Map<number, PartitionClaim> | undefined = partitioned ? new Map() : undefined
  let partitionOf: ((key: string) => number) | undefined
  return {
    /** The fence of a market's writes: null when not fenced, undefined when its partition is not held here. */
    fenceOf: (marketKey: string): TriggerFence | null | undefined => {
      if (claims === undefined) return null
      const claim = partitionOf === undefined ? undefined : claims.get(partitionOf(marketKey))
      return claim === undefined ? undefined : { owner: claim.owner, partition: claim.partition, epoch: claim.epoch }
    },
    /**
     * Holds a partition handed over. Answers the markets no longer held when this is the first
     * claim of a process that held every market until now (the caller drops their books), else
     * undefined.
     */
    claim: (claim: PartitionClaim): ((key: string) => boolean) | undefined => {
      partitionOf = claim.partitionOf
      if (claims !== undefined) {
        claims.set(claim.partition, claim)
        return undefined
      }
      const only = new Map([[claim.partition, claim]])
      claims = only
      return (key) => !only.has(claim.partitionOf(key))
    },
    /** A partition taken from this process: its markets' writes are fenced out from now. */
    revoke: (partition: number): void => {
      claims?.delete(partition)
    }
  }
}
