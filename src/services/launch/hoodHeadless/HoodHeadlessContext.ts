/**
 * What the parts of `HoodHeadlessLaunch` share: its configuration and figures, the ledger, the
 * wallet services, the layer's scope (the dev-buy watchers live in it) and the node's client.
 * Built once by `HoodHeadlessLaunch.make`.
 */
import type { Arrivals } from "../../chains/ChainArrivals.js"
import type { Scope } from "effect"
import type { PublicClient } from "viem"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"
import type { WalletServiceShape } from "../../wallets/WalletService.js"
import type { HoodLaunchConfig } from "../HoodHeadlessLaunch.js"
import type { LaunchLedgerShape } from "../LaunchLedger.js"

/** The configuration's figures with their defaults filled in. */
export interface HoodHeadlessFigures {
  readonly buildTimeoutMs: number
  readonly confirmTimeoutMs: number
  readonly devBuyWaitMs: number
  readonly pollMs: number
  readonly watchMaxMs: number
  readonly watchersMax: number
  readonly statusesMax: number
  readonly devBuySlippageBps: bigint
}

export interface HoodHeadlessContext {
  readonly config: HoodLaunchConfig
  readonly o: HoodHeadlessFigures
  readonly ledger: LaunchLedgerShape
  readonly provider: WalletProviderShape
  readonly wallets: WalletServiceShape
  readonly scope: Scope.Scope
  readonly pc: PublicClient | undefined
  /** The transactions the ingest stream delivered (`ChainArrivals`): a receipt is read the moment its transaction arrives; absent: the poll alone. */
  readonly arrivals?: Arrivals | undefined
}
