/** What the trade service's parts share: the store, the chain, the signer, the runner and its figures. Built once by `TradeService.make`. */
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect } from "effect"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"
import type { HoodTradeChain } from "../HoodTradeChain.js"
import type { SolanaTradeChain } from "../SolanaTradeChain.js"
import type { TradeRunner } from "../TradeAttempt.js"
import type { TradeError } from "../TradeError.js"
import type { TradeCaller, TradeSpend } from "../TradeInputs.js"
import type { TradeStore } from "../TradeStore.js"

/**
 * The shared spend gate (per-asset caps, `txLimit`, the USD window): admits a priced trade's spend
 * before it is signed, or refuses it. Applied at exactly one call site (`TradeSubmit.priced`).
 */
export interface TradeSpendGate {
  readonly admit: (caller: TradeCaller, spend: TradeSpend) => Effect.Effect<void, TradeError | SqlError>
}

export interface TradeContext {
  readonly store: TradeStore
  readonly solana: SolanaTradeChain
  /** The Hood port; undefined: this server refuses Hood trades (`chain_unsupported`). */
  readonly hood: HoodTradeChain | undefined
  readonly provider: WalletProviderShape
  readonly trades: TradeRunner
  /** Receives the platform fee (the svc-curve config's treasury). */
  readonly treasury: string
  readonly spendGate: TradeSpendGate | undefined
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
  readonly nowMs: () => number
}
