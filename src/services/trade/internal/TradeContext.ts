/** What the trade service's parts share: the store, the chain, the signer, the runner and its figures. Built once by `TradeService.make`. */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Clock } from "effect"
import type { PriceSourceShape } from "../../prices/PriceSource.js"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"
import type { WalletServiceShape } from "../../wallets/WalletService.js"
import type { HoodTradeChain } from "../HoodTradeChain.js"
import type { SolanaTradeChain } from "../SolanaTradeChain.js"
import type { TradeRunner } from "../TradeAttempt.js"
import type { TradeStore } from "../TradeStore.js"
import type { EmbeddedAddresses } from "./PricingReads.js"

export interface TradeContext {
  readonly sql: SqlClient.SqlClient
  readonly store: TradeStore
  readonly solana: SolanaTradeChain
  /** The Hood port; undefined: this server refuses Hood trades (`chain_unsupported`). */
  readonly hood: HoodTradeChain | undefined
  readonly provider: WalletProviderShape
  /** The wallet rules and sign claims (linked and TEE payers); undefined: this process has no wallet service, those payers are refused. */
  readonly wallets: WalletServiceShape | undefined
  /** The accounts' embedded Solana addresses, read once (`PricingReads.ts`). */
  readonly embedded: EmbeddedAddresses
  readonly trades: TradeRunner
  /** Receives the platform fee (the svc-curve config's treasury). */
  readonly treasury: string
  /** Values a trade's spend in USD for the spend gate (`src/services/spend`). */
  readonly prices: PriceSourceShape
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
  /** Time: the Effect `Clock` the service is built under (row times, sign-claim views, the address cache). */
  readonly clock: Clock.Clock
}
