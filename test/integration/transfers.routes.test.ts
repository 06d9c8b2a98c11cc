/**
 * `POST /api/v1/agent/transfer/build` over the engine's wiring (Stack + accountStackApi, uWS,
 * PGlite, real key auth, the webhook outbox) and the Solana localnet: only a Withdraw key
 * (`transfer:write`) reaches the rail; the embedded wallet's permission is the key's; a transfer
 * to an own wallet moves the exact amount and writes `transfer.executed` to the real outbox in the
 * same transaction; refusals answer their codes over HTTP and record nothing. The TEE payer: built
 * over HTTP, signed through the sign relay's route, refused SCOPE_MISSING at submit once an access
 * change took the key's transfer scopes, sent once after they are back.
 */
import { address, getBase58Decoder } from "@solana/kit"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { transferRailRoutes } from "../../api/routes/TransferRoutes.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { AccountEvents } from "../../src/services/accounts/AccountEvents.js"
import { LevelScopes } from "../../src/services/keys/Scopes.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { SOLANA_FEE_LAMPORTS } from "../../src/services/transfers/SolanaTransfers.js"
import { makeTransferService } from "../../src/services/transfers/TransferService.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { call } from "../support/accountsHarness.js"
import { type StackHarness, startStackHarness } from "../support/stackHarness.js"

let h: StackHarness
let ledger: Ledger
let scope: Scope.CloseableScope
let ticker: NodeJS.Timeout
const SOL = 1_000_000_000n

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true }), scope)), SolanaLocalnet)
  ledger = net.ledger
  ticker = setInterval(() => ledger.advanceSlot(), 20)
  h = await startStackHarness({
    // Every answer is checked against the mounted routes' OpenAPI document.
    contract: true,
    extraRoutes: async (context, agentAuth) => {
      const transfers = await Effect.runPromise(
        makeTransferService({
          solanaRpcUrl: net.rpcUrl,
          provider: Context.get(context, WalletProvider),
          events: Context.get(context, AccountEvents),
          wallets: Context.get(context, WalletService),
          prices: fixedPriceSource({ sol: "100", eth: "3000", usdc: "1", usdg: "1", svc: "0.01" }),
          pollIntervalMs: 20,
          confirmTimeoutMs: 15_000
        }).pipe(Effect.provideService(SqlClient.SqlClient, Context.get(context, SqlClient.SqlClient)))
      )
      return transferRailRoutes({ agentAuth, transfers })
    }
  })
}, 120_000)

afterAll(async () => {
  clearInterval(ticker)
  if (h !== undefined) await h.close()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const lamports = (a: string) => ledger.getAccount(address(a))?.lamports ?? 0n

describe("POST /api/v1/agent/transfer/build", () => {
  it("Withdraw key to an own wallet: exact amount once, transfer.executed in the outbox; Write key SCOPE_MISSING; denied embedded wallet refused", async () => {
    const a = await h.newAccount()
    await h.delegate(a.accountId, "solana")
    await h.subscribe(a.session, ["transfer.executed"])
    const main = (await Effect.runPromise(h.provider.embeddedWallets(a.accountId))).find((w) => w.chain === "solana")!.address
    ledger.requestAirdrop(address(main), 2n * SOL)
    const withdraw = await h.issue(a.session, { scopes: LevelScopes.readwritetransfer, embeddedWallet: "allowed" })
    const write = await h.issue(a.session, { scopes: LevelScopes.readwrite, embeddedWallet: "allowed" })
    const denied = await h.issue(a.session, { scopes: LevelScopes.readwritetransfer })
    const tee = await call(h.url, "POST", "/api/v1/agent/tee-wallets", { session: a.session, body: { chain: "solana", keyPrefix: withdraw.keyPrefix } })
    expect(tee.status, JSON.stringify(tee.body)).toBe(200)
    const to = tee.body.wallet.address as string
    const body = { clientTransferId: "http-1", chain: "solana", asset: "sol", amountRaw: "250000000", to }

    const scope = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: write.key, body })
    expect([scope.status, scope.body.error.code]).toEqual([403, "SCOPE_MISSING"])
    const embedded = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: denied.key, body })
    expect([embedded.status, embedded.body.error.code]).toEqual([403, "EMBEDDED_WALLET_NOT_PERMITTED"])
    const stranger = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))
    const notAllowed = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: withdraw.key, body: { ...body, clientTransferId: "http-0", to: stranger } })
    expect([notAllowed.status, notAllowed.body.error.code, notAllowed.body.error.field, notAllowed.body.error.reason]).toEqual([400, "VALIDATION_FAILED", "to", "destination_not_allowed"])
    const badAmount = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: withdraw.key, body: { ...body, amountRaw: "0" } })
    expect([badAmount.status, badAmount.body.error.field]).toEqual([400, "amountRaw"])
    expect(await h.query("SELECT 1 FROM transfers WHERE account_id = $1", a.accountId)).toHaveLength(0)

    const before = lamports(main)
    const ok = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: withdraw.key, body })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body).toMatchObject({ success: true, status: "confirmed", from: main, to, destinationClass: "own", destinationKind: "tee", amountRaw: "250000000", replay: false })
    expect(before - lamports(main)).toBe(250_000_000n + SOLANA_FEE_LAMPORTS)
    expect(lamports(to)).toBe(250_000_000n)
    const replay = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: withdraw.key, body })
    expect(replay.body).toMatchObject({ status: "confirmed", signature: ok.body.signature, replay: true })
    expect(lamports(to)).toBe(250_000_000n)
    const outbox = await h.query<{ event: string; data: Record<string, unknown> }>("SELECT event, data FROM webhook_deliveries WHERE account_id = $1", a.accountId)
    expect(outbox).toEqual([
      {
        event: "transfer.executed",
        data: { chain: "solana", asset: "sol", amountRaw: "250000000", from: main, to, destinationClass: "own", signature: ok.body.signature, walletId: tee.body.wallet.id, destinationKind: "tee" }
      }
    ])
  }, 60_000)

  it("payer tee: built over HTTP, signed by the relay, SCOPE_MISSING at submit once the key is narrowed to Write, confirmed once after it is widened again", async () => {
    const a = await h.newAccount()
    await h.delegate(a.accountId, "solana")
    const withdraw = await h.issue(a.session, { scopes: LevelScopes.readwritetransfer })
    const vault = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))
    const tee = await call(h.url, "POST", "/api/v1/agent/tee-wallets", { session: a.session, body: { chain: "solana", keyPrefix: withdraw.keyPrefix, vaultDestination: vault } })
    expect(tee.status, JSON.stringify(tee.body)).toBe(200)
    const teeId = tee.body.wallet.id as string
    ledger.requestAirdrop(address(tee.body.wallet.address), SOL)
    const body = { clientTransferId: "http-tee", chain: "solana", asset: "sol", amountRaw: "3000000", to: vault, payer: "tee", linkedWalletId: teeId }
    const noWallet = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: withdraw.key, body: { ...body, linkedWalletId: undefined } })
    expect([noWallet.status, noWallet.body.error.field]).toEqual([400, "linkedWalletId"])
    const b = await call(h.url, "POST", "/api/v1/agent/transfer/build", { apiKey: withdraw.key, body })
    expect(b.status, JSON.stringify(b.body)).toBe(200)
    expect(b.body).toMatchObject({ success: true, status: "built", payer: "tee", linkedWalletId: teeId, to: vault, destinationClass: "approved", destinationKind: "vault" })
    const signed = await call(h.url, "POST", `/api/v1/agent/wallets/${teeId}/sign`, { apiKey: withdraw.key, body: { claimId: b.body.signClaim.claimId, transaction: b.body.transaction } })
    expect(signed.status, JSON.stringify(signed.body)).toBe(200)
    const submitBody = { clientTransferId: "http-tee", signedTransaction: signed.body.signedTransaction }

    const access = (level: string, expectScopes: ReadonlyArray<string>) =>
      call(h.url, "PUT", `/api/v1/agent/keys/${withdraw.keyPrefix}/access`, { session: a.session, body: { access: level, expectScopes } })
    const narrowed = await access("readwrite", LevelScopes.readwritetransfer)
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200)
    const refused = await call(h.url, "POST", "/api/v1/agent/transfer/submit", { apiKey: withdraw.key, body: submitBody })
    expect([refused.status, refused.body.error.code]).toEqual([403, "SCOPE_MISSING"])
    expect(lamports(vault)).toBe(0n)
    expect(await h.query<{ state: string }>("SELECT state FROM transfers WHERE account_id = $1", a.accountId)).toEqual([{ state: "built" }])

    const widened = await access("readwritetransfer", LevelScopes.readwrite)
    expect(widened.status, JSON.stringify(widened.body)).toBe(200)
    const ok = await call(h.url, "POST", "/api/v1/agent/transfer/submit", { apiKey: withdraw.key, body: submitBody })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body).toMatchObject({ success: true, status: "confirmed", payer: "tee", signature: signed.body.signature, replay: false })
    expect(lamports(vault)).toBe(3_000_000n)
  }, 60_000)
})
