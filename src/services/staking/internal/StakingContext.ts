/**
 * What the staking service's parts share: its stores, the chain, the wallet services, the
 * operations' attempt runner and its figures. Built once by `StakingService.make`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { KeyPairSigner } from "@solana/kit"
import type { Clock } from "effect"
import type { RowLeases } from "../../../db/RowLease.js"
import type { AccountWalletsShape } from "../../accounts/AccountWallets.js"
import type { BalanceReaderShape } from "../../accounts/BalanceReader.js"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"
import type { WalletServiceShape } from "../../wallets/WalletService.js"
import type { HoodRewards } from "../HoodRewards.js"
import type { StakingChain } from "../StakingChain.js"
import type { ClaimStore, StakingStore } from "../StakingStore.js"
import type { OperationRunner } from "./OperationAttempt.js"

export interface StakingContext {
  readonly sql: SqlClient.SqlClient
  readonly leases: RowLeases
  readonly store: StakingStore
  readonly claimStore: ClaimStore
  readonly chain: StakingChain
  readonly provider: WalletProviderShape
  readonly wallets: WalletServiceShape
  readonly balances: BalanceReaderShape
  readonly accountWallets: AccountWalletsShape
  readonly hoodRewards: HoodRewards
  readonly operations: OperationRunner
  readonly platformMint: string
  readonly receiptMint: string
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
  readonly buildLifetimeMs: number
  readonly distributor: KeyPairSigner | undefined
  /** Time: the Effect `Clock` the service is built under (a test builds it on TestClock or a fixed clock). */
  readonly clock: Clock.Clock
}
