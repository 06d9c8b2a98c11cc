/**
 * Rows the trade-rail store tests write straight through the stores: an agent key (`insertKey`'s
 * input, a production `swap:write` key with no limits unless overridden) and a trade row (a Solana
 * curve buy of 0.001 SOL, 0.25 % fee, `sending` unless overridden).
 */
import type { NewKey } from "../../src/services/keys/KeyRepository.js"
import type { TradeRow } from "../../src/services/trade/TradeStore.js"

/** A production `swap:write` key of `accountId`: 60 requests a minute, no txLimit, the embedded wallet allowed. */
export const swapKey = (k: Pick<NewKey, "id" | "prefix" | "accountId"> & Partial<NewKey>): NewKey => ({
  hash: `hash-${k.id}`,
  environment: "production",
  scopes: ["swap:write"],
  label: null,
  rateLimitPerMin: 60,
  dailyLaunchCap: 10,
  launchChains: ["solana"],
  embeddedWallet: "allowed",
  expiresAtMs: null,
  txLimit: null,
  mintedByDeviceId: null,
  provisionedBy: null,
  ...k
})

/** A trade row of `accountId`: a Solana curve buy paid by the embedded wallet, `sending`, its signature `sig-<id>`. */
export const tradeRow = (accountId: string, clientTradeId: string, o: Partial<TradeRow> = {}): TradeRow => ({
  accountId,
  clientTradeId,
  chain: "solana",
  mint: "Mint111111111111111111111111111111111111111",
  side: "buy",
  venue: "curve",
  quoteMint: "So11111111111111111111111111111111111111112",
  quoteAsset: "SOL",
  payer: "main",
  wallet: "Wallet1111111111111111111111111111111111111",
  keyId: null,
  bodyHash: "a".repeat(64),
  state: "sending",
  amountInRaw: 1_000_000n,
  expectedOutRaw: 42n,
  minAmountOutRaw: 40n,
  amountOutRaw: null,
  feeBps: 25,
  feeRaw: 2_500n,
  signature: `sig-${clientTradeId}`,
  lastValidBlockHeight: 100n,
  errorCode: null,
  error: null,
  createdAtMs: 0,
  spendUsdMicros: null,
  ...o
})
