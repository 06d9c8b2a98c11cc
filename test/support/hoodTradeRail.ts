/**
 * The Hood trade rail's test bed, shared by the linked-payer and TEE-payer integration tests: the
 * real wallet service (PGlite, sign claims), the Hood localnet (Hardhat/EDR) over JSON-RPC, one
 * account (Max, a webhook endpoint subscribed to `trade.executed`) with one stored production key
 * (`swap:write`, embedded wallet denied), an ETH-quoted v3 curve, and `TradeService` over them; and
 * the reads and signing helpers both tests assert with (rows, `trade.executed` count, the spend
 * hold, the curve's quote now, a build's unsigned transaction, a viem signature).
 *
 * `open` (in `beforeAll`) starts everything; `close` (in `afterAll`) stops the localnet and the harness.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { type Address, type Hex, parseTransaction, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { toApiError } from "../../api/ErrorTable.js"
import { createCurve, readCurve, saltOf } from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, publicClientOf, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { PriceSource, type PriceSourceShape } from "../../src/services/prices/PriceSource.js"
import { reservationState } from "../../src/services/spend/SpendStore.js"
import { type TradeCaller, type TradeRequest, type TradeServiceShape, make as makeTrades } from "../../src/services/trade/TradeService.js"
import { tradeReservationId } from "../../src/services/trade/TradeStore.js"
import { isApproval, type TradeBuiltView } from "../../src/services/trade/TradeViews.js"
import { quoteVenue } from "../../src/services/trade/VenueQuote.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import { principals, startWalletHarness, type WalletHarness } from "./walletHarness.js"

export const ETH = 10n ** 18n
/** The harness's agent key `key-a1` (account `acct-a`), stored with this prefix. */
export const ACCOUNT = "acct-a"
export const KEY_PREFIX = "a1aaaaaa"

export interface HoodTradeRailOptions {
  /** Names the account's referral code, webhook endpoint, key hash and curve (unique per test file). */
  readonly label: string
  readonly prices: PriceSourceShape
}

export const hoodTradeRail = (options: HoodTradeRailOptions) => {
  let harness: WalletHarness | undefined
  let net: StartedHoodLocalnet | undefined
  let trades: TradeServiceShape | undefined
  let curve: { token: Address; curve: Address } | undefined
  const started = <A>(a: A | undefined, what: string): A => {
    if (a === undefined) throw new Error(`hoodTradeRail: ${what} is not started (call open in beforeAll)`)
    return a
  }

  const principal = principals["key-a1"] as Principal
  const caller: TradeCaller = { accountId: ACCOUNT, keyId: principal.keyId, keyPrefix: KEY_PREFIX, embeddedWallet: "denied", planFeeBps: 25n, referred: false, principal }

  const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
  const sqlRun = <A>(e: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, started(harness, "harness").sql) as Effect.Effect<A>)
  const pc = () => publicClientOf(started(net, "localnet"))
  const nonceOf = (a: Address) => pc().getTransactionCount({ address: a, blockTag: "latest" })
  const rowsOf = (clientTradeId: string) =>
    sqlRun(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ state: string; signature: string }>`SELECT state, signature FROM agent_trades WHERE client_trade_id = ${clientTradeId}`))
  const executedEvents = (clientTradeId: string) =>
    sqlRun(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = ${ACCOUNT} AND event = 'trade.executed' AND data->>'clientTradeId' = ${clientTradeId}`
      )
    ).then((r) => r[0]?.n ?? 0)
  const holdOf = (clientTradeId: string) => sqlRun(reservationState(tradeReservationId({ accountId: ACCOUNT, clientTradeId })))

  /** A request on the rail's curve from `payer` (its wallet id), slippage 0. */
  const requestFrom =
    (payer: { readonly payer: TradeRequest["payer"]; readonly linkedWalletId: string }) =>
    (clientTradeId: string, side: "buy" | "sell", amountInRaw: bigint, more: Partial<TradeRequest> = {}): TradeRequest => ({
      clientTradeId,
      chain: "hood",
      mint: started(curve, "curve").token,
      side,
      amountInRaw,
      slippageBps: 0,
      ...payer,
      ...more
    })

  /** The curve's quote now (what an unmoved market executes to the raw unit). */
  const quoteNow = async (side: "buy" | "sell", amount: bigint) => {
    const c = started(curve, "curve")
    const s = await readCurve(pc(), c.curve)
    const q = quoteVenue({ _tag: "Curve", params: s.params, state: s.state, creatorShareBps: 3000n }, side, amount)
    if (q._tag !== "Filled") throw new Error(`quote refused: ${JSON.stringify(q, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`)
    return q
  }

  const built = async (r: TradeRequest): Promise<TradeBuiltView> => {
    const out = await run(started(trades, "trade service").build(caller, r))
    if (out._tag === "Left") throw new Error(`${r.clientTradeId}: ${JSON.stringify(out.left)}`)
    if (isApproval(out.right)) throw new Error(`${r.clientTradeId}: answered a token approval, not the trade`)
    return out.right
  }

  /** The build's unsigned transaction, parsed. */
  const unsignedOf = (b: TradeBuiltView) => parseTransaction(`0x${Buffer.from(b.transaction, "base64").toString("hex")}` as Hex)
  /** Signed locally with viem by `privateKey`. */
  const signedBy = async (privateKey: Hex, tx: ReturnType<typeof unsignedOf>): Promise<Hex> =>
    privateKeyToAccount(privateKey).signTransaction(tx as Parameters<ReturnType<typeof privateKeyToAccount>["signTransaction"]>[0])
  const bytesOf = (hex: Hex) => new Uint8Array(Buffer.from(hex.slice(2), "hex"))
  const refusal = (r: Awaited<ReturnType<typeof run<unknown, unknown>>>) => (r._tag === "Left" ? toApiError(r.left as Parameters<typeof toApiError>[0]) : undefined)

  const open = async () => {
    harness = await startWalletHarness()
    net = await startHoodLocalnet()
    const { label } = options
    await sqlRun(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.zipRight(
          sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', ${label.toUpperCase()}) ON CONFLICT DO NOTHING`,
          sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
              VALUES (${`wh-${label}`}, ${ACCOUNT}, 'https://example.com/hook', '["trade.executed"]'::jsonb, 'x', 'x', 'active', now())`
        )
      )
    )
    await sqlRun(
      insertKey(
        {
          id: principal.keyId ?? "",
          prefix: KEY_PREFIX,
          accountId: ACCOUNT,
          hash: `hash-${label}`,
          environment: "production",
          scopes: ["swap:write"],
          label: null,
          rateLimitPerMin: 60,
          dailyLaunchCap: 10,
          launchChains: ["hood"],
          embeddedWallet: "denied",
          expiresAtMs: null,
          txLimit: null,
          mintedByDeviceId: null,
          provisionedBy: null
        },
        Date.now()
      )
    )
    const name = `${label}-${Date.now()}`
    const created = await createCurve(clientsFor(net, net.roles.traders[0]!), net.addresses.factory, {
      name,
      symbol: "HT",
      quoteToken: zeroAddress,
      virtualQuoteRaw: 2n * ETH,
      thresholdRaw: 40n * ETH,
      dexVersion: "v3",
      salt: saltOf(name)
    })
    curve = { token: created.token, curve: created.curve }
    trades = await Effect.runPromise(
      makeTrades({
        solanaRpcUrl: "http://127.0.0.1:1",
        treasury: "11111111111111111111111111111111",
        hood: { chain: net.chain, rpcUrl: net.rpcUrl, factory: net.addresses.factory, swapRouter: net.addresses.swapRouter!, tradeRouter: net.addresses.tradeRouter!, weth9: net.addresses.weth9 },
        pollIntervalMs: 20,
        confirmTimeoutMs: 15_000
      }).pipe(
        Effect.provideService(WalletService, harness.service),
        Effect.provideService(WalletProvider, harness.provider),
        Effect.provideService(PriceSource, options.prices),
        Effect.provideService(SqlClient.SqlClient, harness.sql)
      )
    )
    return { harness, net, trades, curve }
  }

  const close = async () => {
    await net?.close()
    await harness?.close()
  }

  return { open, close, principal, caller, run, sqlRun, pc, nonceOf, rowsOf, executedEvents, holdOf, requestFrom, quoteNow, built, unsignedOf, signedBy, bytesOf, refusal }
}
