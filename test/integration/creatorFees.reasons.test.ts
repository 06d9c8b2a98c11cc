/**
 * Creator-fee refusals through the creator-fee service and the error table (spec document 2, 2.5
 * and 4.3 rules 2, 3 and 6), over the real wallet provider and service (PGlite) and the Solana
 * localnet over its RPC, with curves created on it by the account's embedded wallet (signed by the
 * provider), by a TEE wallet of the account (signed at the sign relay) and by a stranger. The fee
 * list says, per token: claimable; `wallet_not_signable` (the recipient is another wallet of the
 * account); `not_recipient` (none of its wallets); `unreadable: true` (no fee vault to read);
 * `embedded_wallet_not_permitted` (the key denies the embedded wallet); `delegation_off` (revoked);
 * `insufficient_gas` (the wallet cannot pay the fee, a first token account's rent and its reserve).
 * Each reason the list gives, a claim refuses with 409 `FEE_NOT_CLAIMABLE` and that reason, and
 * sends nothing; a claim held by another process (its lease in the database), or a process at its
 * bound of claims in flight, answers `below_dust`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  type Address,
  address,
  generateKeyPairSigner,
  getBase64Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type TransactionPartialSigner
} from "@solana/kit"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mapFailure } from "../../api/ErrorTable.js"
import { getBuyInstruction, getCreateCurveInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { getCreateAssociatedTokenInstruction, getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { findAssociatedTokenAddressSync } from "../../src/chain/solana/program/Pda.js"
import { buildTransactionMessage, signTransactionMessage } from "../../src/chain/solana/client/Transactions.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { expectOk, send } from "../../src/chain/solana/localnet/testkit.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { type CreatorFeesShape, type FeeCaller, make as makeCreatorFees } from "../../src/services/fees/CreatorFees.js"
import type { FeeError } from "../../src/services/fees/FeeError.js"
import { makeFeeClaimLocks } from "../../src/services/fees/FeeClaimLocks.js"
import { PAYER_RESERVE_LAMPORTS, SIGNATURE_FEE_LAMPORTS } from "../../src/services/fees/SolanaCreatorFees.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"
import { clockAt } from "../support/clock.js"

const SOL = 1_000_000_000n
const ACCOUNT = "acct-a"
const keyA1 = principals["key-a1"] as Principal
const allowed: FeeCaller = { accountId: ACCOUNT, embeddedWallet: "allowed", principal: keyA1 }

let harness: WalletHarness
let ledger: Ledger
let fees: CreatorFeesShape
let scope: Scope.CloseableScope
let ticker: NodeJS.Timeout
let embedded: Address
let rpcUrl: string
const mints = { embedded: "", tee: "", stranger: "", missing: "" }

const b64 = getBase64Encoder()
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

/** The embedded wallet as a kit signer: each transaction signed by the wallet provider (delegation and policy apply). */
const embeddedSigner = (owner: Address): TransactionPartialSigner => ({
  address: owner,
  signTransactions: (txs) =>
    Promise.all(
      txs.map(async (tx) => {
        const signed = await run(harness.provider.signWithEmbedded(ACCOUNT, "solana", new Uint8Array(getTransactionEncoder().encode(tx))))
        const decoded = getTransactionDecoder().decode(new Uint8Array(b64.encode(signed.signedTransaction)))
        return { [owner]: decoded.signatures[owner]! } as never
      })
    )
})

/** A TEE wallet of the account as a kit signer: a sign claim staked out, then signed at the relay. */
const teeSigner = (walletId: string, owner: Address): TransactionPartialSigner => ({
  address: owner,
  signTransactions: (txs) =>
    Promise.all(
      txs.map(async (tx) => {
        const wire = new Uint8Array(getTransactionEncoder().encode(tx))
        const { claimId } = await run(harness.service.recordBuilt({ accountId: ACCOUNT, walletId, keyId: "kid-a1", chain: "solana", transaction: wire, purpose: "launch" }))
        const signed = await run(harness.service.signClaimed(keyA1, walletId, { claimId, transaction: wire }))
        const decoded = getTransactionDecoder().decode(new Uint8Array(b64.encode(signed.signedTransaction)))
        return { [owner]: decoded.signatures[owner]! } as never
      })
    )
})

/** Creates a SOL curve with `creator` as its fee recipient and buys 2 SOL of it (the creator's fee share accrues). */
const curveOf = async (creator: TransactionPartialSigner & { address: Address }) => {
  const mint = await generateKeyPairSigner()
  const ix = await getCreateCurveInstruction({
    creator,
    mint,
    quoteMint: WSOL_MINT_ADDRESS,
    supplyRaw: 1_000_000_000_000_000n,
    virtualQuoteRaw: 30n * SOL,
    thresholdRaw: 85n * SOL,
    stakerAllocationBps: 50,
    mode: "open",
    creatorFeeBps: 0,
    name: "Fee Reason",
    symbol: "FR",
    uri: "https://example.com/fr.json"
  })
  const signed = await signTransactionMessage(buildTransactionMessage({ feePayer: creator, lifetime: ledger.latestBlockhash(), instructions: [ix] }))
  expectOk(ledger, ledger.submit(signed.wireBytes))
  const trader = await generateKeyPairSigner()
  ledger.requestAirdrop(trader.address, 5n * SOL)
  const ata = findAssociatedTokenAddressSync(trader.address, mint.address).address
  expectOk(ledger, await send(ledger, trader, [getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint: mint.address }), await getBuyInstruction({ trader, mint: mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: 2n * SOL, minAmountOutRaw: 0n })]))
  return mint.address
}

const launched = (mint: string, n: number) =>
  run(
    harness.sql`INSERT INTO launched_tokens (chain, mint, account_id, key_id, client_launch_id, path, visibility, attributed_at)
      VALUES ('solana', ${mint}, ${ACCOUNT}, 'kid-a1', ${`reasons-${n}`}, 'self', 'production', now())`
  )

beforeAll(async () => {
  harness = await startWalletHarness()
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(await run(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true }), scope)), SolanaLocalnet)
  ledger = net.ledger
  rpcUrl = net.rpcUrl
  ticker = setInterval(() => ledger.advanceSlot(), 20)
  fees = await run(
    makeCreatorFees({ solanaRpcUrl: net.rpcUrl, pollIntervalMs: 20, confirmTimeoutMs: 10_000 }).pipe(
      Effect.withClock(clockAt(() => harness.clock.ms)),
      Effect.provideService(WalletService, harness.service),
      Effect.provideService(WalletProvider, harness.provider),
      Effect.provideService(SqlClient.SqlClient, harness.sql)
    )
  )
  embedded = address((await run(harness.provider.ensureEmbeddedWallet(ACCOUNT, "solana"))).address)
  await run(harness.provider.setDelegation(ACCOUNT, "solana", "active"))
  ledger.requestAirdrop(embedded, 2n * SOL)
  const tee = await run(harness.service.createTee(principals["sess-a"] as Principal, { chain: "solana", keyPrefix: "a1aaaaaa", label: "fee-tee" }))
  ledger.requestAirdrop(address(tee.address), 2n * SOL)
  const stranger = await generateKeyPairSigner()
  ledger.requestAirdrop(stranger.address, 2n * SOL)

  mints.embedded = await curveOf(embeddedSigner(embedded))
  mints.tee = await curveOf(teeSigner(tee.id, address(tee.address)))
  mints.stranger = await curveOf(stranger)
  mints.missing = (await generateKeyPairSigner()).address
  for (const [i, m] of Object.values(mints).entries()) await launched(m, i)
}, 90_000)

afterAll(async () => {
  clearInterval(ticker)
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await harness?.close()
})

const entries = async (caller: FeeCaller = allowed) => {
  const page = await run(fees.list(caller, { limit: 50, cursor: undefined }))
  return new Map((page.tokens as unknown as ReadonlyArray<Record<string, unknown>>).map((t) => [t.mint as string, t]))
}

/** A claim as the route answers it (the error table, or the success envelope): its status, code and reason, or "ok" with the body. */
const claimed = async (mint: string, caller: FeeCaller = allowed, dryRun = false) => {
  const r = await run(Effect.either(mapFailure(fees.claim(caller, mint, dryRun) as unknown as Effect.Effect<Record<string, unknown>, FeeError>)))
  return r._tag === "Right" ? { ok: { success: true, ...r.right } } : { status: r.left.httpStatus, code: r.left.code, reason: (r.left.extra as { reason?: string } | undefined)?.reason }
}

const refusedWith = (reason: string) => ({ status: 409, code: "FEE_NOT_CLAIMABLE", reason })

describe("creator-fee refusals (4.3 rule 6) in the list and on claim", () => {
  it("the list: claimable, wallet_not_signable, not_recipient, and unreadable: true for a token with no fee vault", async () => {
    const list = await entries()
    expect(list.get(mints.embedded)).toMatchObject({ claimable: true, recipient: embedded, chain: "solana" })
    expect(list.get(mints.embedded)).not.toHaveProperty("reason")
    expect(list.get(mints.tee)).toMatchObject({ claimable: false, reason: "wallet_not_signable" })
    expect(list.get(mints.stranger)).toMatchObject({ claimable: false, reason: "not_recipient" })
    expect(list.get(mints.missing)).toEqual({ mint: mints.missing, chain: "solana", unreadable: true })
    expect(await claimed(mints.tee)).toEqual(refusedWith("wallet_not_signable"))
    expect(await claimed(mints.stranger)).toEqual(refusedWith("not_recipient"))
    expect(await claimed(mints.missing)).toMatchObject({ status: 503, code: "FEED_UNAVAILABLE" })
  }, 60_000)

  it("pages: tokens sorted by mint, continueCursor the page's last mint, isDone on the last page", async () => {
    const sorted = Object.values(mints).sort()
    const first = await run(fees.list(allowed, { limit: 3, cursor: undefined }))
    expect((first.tokens as ReadonlyArray<{ mint: string }>).map((t) => t.mint)).toEqual(sorted.slice(0, 3))
    expect([first.continueCursor, first.isDone]).toEqual([sorted[2], false])
    const second = await run(fees.list(allowed, { limit: 3, cursor: first.continueCursor as string }))
    expect((second.tokens as ReadonlyArray<{ mint: string }>).map((t) => t.mint)).toEqual(sorted.slice(3))
    expect([second.continueCursor, second.isDone]).toEqual([null, true])
    // A page exactly as long as what is left is the last one.
    const exact = await run(fees.list(allowed, { limit: 4, cursor: undefined }))
    expect([(exact.tokens as ReadonlyArray<unknown>).length, exact.continueCursor, exact.isDone]).toEqual([4, null, true])
  }, 60_000)

  it("embedded_wallet_not_permitted and delegation_off: listed, refused on claim, nothing sent", async () => {
    const denied: FeeCaller = { ...allowed, embeddedWallet: "denied" }
    expect((await entries(denied)).get(mints.embedded)).toMatchObject({ claimable: false, reason: "embedded_wallet_not_permitted" })
    expect(await claimed(mints.embedded, denied)).toEqual(refusedWith("embedded_wallet_not_permitted"))
    const lamports = ledger.getBalance(embedded)
    await run(harness.provider.setDelegation(ACCOUNT, "solana", "revoked"))
    try {
      expect((await entries()).get(mints.embedded)).toMatchObject({ claimable: false, reason: "delegation_off" })
      expect(await claimed(mints.embedded, allowed, true)).toMatchObject({ ok: { dryRun: true, claimable: false, reason: "delegation_off" } })
      expect(await claimed(mints.embedded)).toEqual(refusedWith("delegation_off"))
    } finally {
      await run(harness.provider.setDelegation(ACCOUNT, "solana", "active"))
    }
    expect(ledger.getBalance(embedded)).toBe(lamports)
  }, 60_000)

  it("below_dust while another process holds the token's claim lease; insufficient_gas when the wallet cannot pay; then the claim pays", async () => {
    // A process already running its most claims (here a bound of 0) starts no other: below_dust, the lease untouched.
    const full = await run(
      makeCreatorFees({ solanaRpcUrl: rpcUrl, claimsInFlightMax: 0 }).pipe(
        Effect.withClock(clockAt(() => harness.clock.ms)),
        Effect.provideService(WalletService, harness.service),
        Effect.provideService(WalletProvider, harness.provider),
        Effect.provideService(SqlClient.SqlClient, harness.sql)
      )
    )
    const lamportsBefore = ledger.getBalance(embedded)
    const refused = await run(Effect.either(full.claim(allowed, mints.embedded, false)))
    expect(refused._tag === "Left" && [refused.left.reason, refused.left.details]).toEqual(["not_claimable", { reason: "below_dust" }])
    expect(ledger.getBalance(embedded)).toBe(lamportsBefore)

    const locks = makeFeeClaimLocks(harness.sql)
    expect(await run(locks.held(mints.embedded, harness.clock.ms))).toBe(false)
    const holder = await run(locks.acquire(mints.embedded, harness.clock.ms))
    expect(holder).toBeTypeOf("string")
    expect((await entries()).get(mints.embedded)).toMatchObject({ claimable: false, reason: "below_dust" })
    expect(await claimed(mints.embedded)).toEqual(refusedWith("below_dust"))
    await run(locks.release(mints.embedded, holder!))

    // Empty the embedded wallet (the chain lets a payer drop below rent exemption only to zero).
    const sink = await generateKeyPairSigner()
    const keep = 0n
    const drain = ledger.getBalance(embedded) - 5_000n
    const wire = await signTransactionMessage(
      buildTransactionMessage({ feePayer: embeddedSigner(embedded), lifetime: ledger.latestBlockhash(), instructions: [getTransferSolInstruction({ from: embeddedSigner(embedded), to: sink.address, lamports: drain })] })
    )
    expectOk(ledger, ledger.submit(wire.wireBytes))
    ledger.advanceSlot()
    expect((await entries()).get(mints.embedded)).toMatchObject({ claimable: false, reason: "insufficient_gas" })
    expect(await claimed(mints.embedded)).toEqual(refusedWith("insufficient_gas"))
    expect(ledger.getBalance(embedded)).toBe(keep)
    // At the bound: a SOL claim needs its fee and the payer's reserve (no token account to open).
    const needed = SIGNATURE_FEE_LAMPORTS + PAYER_RESERVE_LAMPORTS
    ledger.requestAirdrop(embedded, needed - 1n)
    ledger.advanceSlot()
    expect((await entries()).get(mints.embedded)).toMatchObject({ claimable: false, reason: "insufficient_gas" })
    ledger.requestAirdrop(embedded, 1n)
    ledger.advanceSlot()
    expect((await entries()).get(mints.embedded)).toMatchObject({ claimable: true })
    ledger.requestAirdrop(embedded, SOL)
    ledger.advanceSlot()
    const paid = await claimed(mints.embedded)
    expect(paid).toMatchObject({ ok: { success: true, mint: mints.embedded, recipient: embedded, outcome: "complete" } })
    expect(await run(locks.held(mints.embedded, harness.clock.ms))).toBe(false) // the lease was given back
  }, 60_000)
})
