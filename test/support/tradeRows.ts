/**
 * Rows the trade-rail store tests write straight through the stores: an agent key (`insertKey`'s
 * input, a production `swap:write` key with no limits unless overridden) and a trade row (a Solana
 * curve buy of 0.001 SOL, 0.25 % fee, `sending` unless overridden), and a Max account with that key
 * and one active webhook endpoint (`seedSwapAccount`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { insertKey, type NewKey } from "../../src/services/keys/KeyRepository.js"
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

/** A Max account (`referralCode`) with its `swap:write` key (`swapKey`) and an active webhook endpoint `hookId` for `event`. */
export const seedSwapAccount = (a: {
  readonly accountId: string
  readonly referralCode: string
  readonly keyId: string
  readonly keyPrefix: string
  readonly hookId: string
  readonly event: string
}): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      [
        sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${a.accountId}, 'max', ${a.referralCode})`,
        sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
          VALUES (${a.hookId}, ${a.accountId}, 'https://example.com/hook', ${JSON.stringify([a.event])}::jsonb, 'x', 'x', 'active', now())`,
        insertKey(swapKey({ id: a.keyId, prefix: a.keyPrefix, accountId: a.accountId }), Date.now())
      ],
      { discard: true }
    )
  )

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
