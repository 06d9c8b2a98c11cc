/** Who calls the staking service and what a build asks for (decoded by the routes). */
import type { Principal } from "../wallets/Principal.js"
import type { StakeAction } from "./StakingChain.js"

export interface StakingCaller {
  readonly accountId: string
  readonly keyId: string | null
  readonly embeddedWallet: "allowed" | "denied" | null
  /** For the wallet service (linked payers, the wallet list). */
  readonly principal: Principal
  /** A paused key cannot claim staking rewards. */
  readonly keyPaused: boolean
}

export interface StakeBuildInput {
  readonly action: StakeAction
  readonly payer: "main" | "linked"
  readonly linkedWalletId?: string
  readonly clientStakeId: string
  readonly dryRun: boolean
  readonly amountRaw?: bigint
  readonly withdrawal?: string
}
