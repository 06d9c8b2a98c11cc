/**
 * The embedded Solana localnet's thread program (`LocalnetThread.ts`): the ledger, its journal and
 * its three servers (`LocalnetService.make`) on this worker thread. It reports the servers' URLs,
 * and serves the faucet's two calls (`Faucet.ts`): `topUp` and `distributeRewards`.
 */
import type { Address } from "@solana/kit"
import { Effect } from "effect"
import { runLocalnetThread } from "../../internal/LocalnetThreadMain.js"
import { distributeRound, type StakingRewardsRound, topUp } from "./Faucet.js"
import { make } from "./LocalnetService.js"
import type { SolanaLocalnetThreadInfo, SolanaLocalnetThreadOptions } from "./threadTypes.js"

runLocalnetThread((options: SolanaLocalnetThreadOptions) =>
  Effect.map(make(options), (localnet) => ({
    info: { rpcUrl: localnet.rpcUrl, grpcUrl: localnet.grpcUrl, blockEngineUrl: localnet.blockEngineUrl } satisfies SolanaLocalnetThreadInfo,
    ops: {
      // The ledger's own error is the failure (its message is the reply), not an UnknownException.
      topUp: (owner: Address, lamports: bigint, tokens: ReadonlyArray<readonly [Address, bigint]>) =>
        Effect.try({ try: () => topUp(localnet.ledger, owner, lamports, tokens), catch: (e) => e }),
      distributeRewards: (owners: ReadonlyArray<Address>, round: StakingRewardsRound) =>
        Effect.try({ try: () => distributeRound(localnet.ledger, owners, round), catch: (e) => e })
    }
  }))
)
