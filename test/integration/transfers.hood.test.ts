/**
 * The agent transfer rail on Hood (spec document 2: 2.1, "Transaction-limit rules", section 6
 * `transfer.executed`), main (embedded EVM) payer, over the real wallet provider and tables
 * (PGlite), the one attempt runner and the Hood localnet (Hardhat/EDR) over JSON-RPC: ETH, USDG
 * and a token launched on the factory. Balances are read from the chain and compared to the unit
 * (the source pays the amount plus its receipt's gas exactly); the same id replays and never
 * resends; 50 concurrent requests under one id make one transfer; every refusal records nothing
 * and moves nothing; at the end, every destination holds exactly what the confirmed rows say; a
 * transfer a dead process left `sending` is settled from the chain by another pass (sent: confirmed
 * once; never sent: its nonce released, failed, nothing moved) and never sent by it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Ref } from "effect"
import { type Address, getAddress, type Hash, type Hex, zeroAddress } from "viem"
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mapFailure } from "../../api/ErrorTable.js"
import { curveTokenAbi } from "../../src/chain/hood/abi.generated.js"
import { buy, createCurve, type HoodClients, saltOf, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, hoodTestClient, publicClientOf, setEthBalance, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { type ErrorCode, ErrorCodes } from "../../src/domain/ErrorCodes.js"
import { AccountEvents, type RecordedEvent, layerTest as recordingEvents } from "../../src/services/accounts/AccountEvents.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { reservationState } from "../../src/services/spend/SpendStore.js"
import { HOOD_TRANSFER_GAS, hoodTransferCall, makeHoodTransfers } from "../../src/services/transfers/HoodTransfers.js"
import { makeTransferService, requestHashOf, type TransferCaller, type TransferInput, type TransferServiceShape } from "../../src/services/transfers/TransferService.js"
import { MAIN_PAYER, makeTransferStore, transferReservationId, type TransferRow } from "../../src/services/transfers/TransferStore.js"
import * as WithdrawalAddresses from "../../src/services/transfers/WithdrawalAddresses.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { eventually } from "../support/eventually.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"

const ETH = 10n ** 18n
const ACCOUNT = "acct-a"
const caller: TransferCaller = { accountId: ACCOUNT, keyId: "kid-h1", keyPrefix: "h1hhhhhh", embeddedWallet: "allowed" }
const limited: TransferCaller = { ...caller, keyId: "kid-h5", keyPrefix: "h5hhhhhh" }

let h: WalletHarness
let net: StartedHoodLocalnet
let transfers: TransferServiceShape
let addresses: WithdrawalAddresses.WithdrawalAddressesShape
let events: Ref.Ref<ReadonlyArray<RecordedEvent>>
let main: Address
let tee: { id: string; address: Address }
let trader: HoodClients
let token: Address
let usdg: Address

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
const sqlRun = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, h.sql))
const pc = () => publicClientOf(net)
const eth = (a: Address) => pc().getBalance({ address: a })
const tokens = (t: Address, a: Address) => tokenBalance(pc(), t, a)
const rows = (id?: string) =>
  h.query<{ client_transfer_id: string; state: string; signature: string; asset: string; mint: string | null; amount_raw: string; to_address: string }>((sql) =>
    id === undefined
      ? sql`SELECT client_transfer_id, state, signature, asset, mint, amount_raw, to_address FROM transfers WHERE chain = 'hood'`
      : sql`SELECT client_transfer_id, state, signature, asset, mint, amount_raw, to_address FROM transfers WHERE client_transfer_id = ${id}`
  )
const executed = async () => (await Effect.runPromise(Ref.get(events))).filter((e) => e.event === "transfer.executed")
const body = (clientTransferId: string, o: Partial<TransferInput> = {}): TransferInput => ({
  clientTransferId,
  chain: "hood",
  asset: "eth",
  amountRaw: ETH / 10n,
  to: tee.address,
  dryRun: false,
  ...o
})
const confirmed = async (input: TransferInput, as: TransferCaller = caller) => {
  const r = await run(transfers.build(as, input))
  if (r._tag === "Left") throw new Error(`${input.clientTransferId}: ${JSON.stringify(r.left)}`)
  expect(r.right.status).toBe("confirmed")
  return r.right
}
const refusalOf = async (input: TransferInput, as: TransferCaller = caller) => {
  const r = await Effect.runPromise(Effect.either(mapFailure(transfers.build(as, input))))
  if (r._tag === "Right") throw new Error(`expected a refusal, got ${JSON.stringify(r.right)}`)
  return { status: r.left.status ?? ErrorCodes[r.left.code as ErrorCode].status, code: r.left.code, reason: (r.left.extra as { reason?: string } | undefined)?.reason, field: r.left.field }
}
/** What a landed transaction cost its sender in gas (wei), and the gas it used. */
const gasOf = async (hash: string) => {
  const r = await pc().getTransactionReceipt({ hash: hash as Hash })
  return { weiRaw: r.gasUsed * r.effectiveGasPrice, gasUsed: r.gasUsed, status: r.status }
}
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address
const storeKey = (id: string, prefix: string, txLimitUsd: number | null) =>
  sqlRun(
    insertKey(
      { id, prefix, accountId: ACCOUNT, hash: `hash-${id}`, environment: "production", scopes: ["transfer:write"], label: null, rateLimitPerMin: 60, dailyLaunchCap: 10, launchChains: ["hood"], embeddedWallet: "allowed", expiresAtMs: null, txLimit: txLimitUsd === null ? null : { usdMicros: txLimitUsd * 1_000_000, reset: "daily" }, mintedByDeviceId: null, provisionedBy: null },
      Date.now()
    )
  )

beforeAll(async () => {
  h = await startWalletHarness()
  net = await startHoodLocalnet()
  trader = clientsFor(net, net.roles.traders[0]!)
  usdg = getAddress(net.addresses.usdg)
  events = await Effect.runPromise(Ref.make<ReadonlyArray<RecordedEvent>>([]))
  const eventsPort = Context.get(await Effect.runPromise(Layer.build(recordingEvents(events)).pipe(Effect.scoped)), AccountEvents)
  await Effect.runPromise(h.sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'HOODXFER') ON CONFLICT (id) DO NOTHING`)
  const embedded = await Effect.runPromise(h.provider.ensureEmbeddedWallet(ACCOUNT, "evm"))
  await Effect.runPromise(h.provider.setDelegation(ACCOUNT, "evm", "active"))
  main = getAddress(embedded.address)
  await setEthBalance(hoodTestClient(net), main, 100n * ETH)
  const created = await Effect.runPromise(h.service.createTee(principals["sess-a"] as Principal, { chain: "evm", keyPrefix: "a1aaaaaa", label: "tee" }))
  tee = { id: created.id, address: getAddress(created.address) }
  // A token launched on the factory, bought by a trader and handed to the embedded wallet; USDG from the trader's dev balance.
  const label = `hood-transfer-${process.pid}`
  const c = await createCurve(trader, net.addresses.factory, { name: label, symbol: "HXT", quoteToken: zeroAddress, virtualQuoteRaw: 2n * ETH, thresholdRaw: 40n * ETH, dexVersion: "v3", salt: saltOf(label) })
  token = getAddress(c.token)
  await buy(trader, c.curve, { amountInRaw: ETH, quoteToken: zeroAddress })
  const give = async (t: Address, amount: bigint) => {
    const hash = await trader.wallet.writeContract({ address: t, abi: curveTokenAbi, functionName: "transfer", args: [main, amount], chain: null })
    await pc().waitForTransactionReceipt({ hash })
  }
  await give(token, (await tokens(token, trader.wallet.account.address)) / 2n)
  await give(usdg, 1_000n * 10n ** 6n)
  transfers = await Effect.runPromise(
    makeTransferService({
      solanaRpcUrl: "http://127.0.0.1:1",
      hood: { chain: net.chain, rpcUrl: net.rpcUrl, factory: net.addresses.factory, usdg, unsentGraceMs: 300 },
      provider: h.provider,
      events: eventsPort,
      prices: fixedPriceSource({ eth: "3000", usdg: "1" }),
      pollIntervalMs: 20,
      confirmTimeoutMs: 15_000
    }).pipe(Effect.provideService(SqlClient.SqlClient, h.sql))
  )
  await storeKey("kid-h1", "h1hhhhhh", null)
  await storeKey("kid-h5", "h5hhhhhh", 5)
  addresses = await Effect.runPromise(WithdrawalAddresses.make({}).pipe(Effect.provideService(SqlClient.SqlClient, h.sql), Effect.provideService(AccountEvents, eventsPort)))
}, 180_000)

afterAll(async () => {
  await net?.close()
  await h?.close()
})

describe("transfer rail, main payer on Hood", () => {
  it("ETH to an own wallet: the exact amount once, the source pays it plus its gas to the wei; one transfer.executed with the spec's payload; the replay sends nothing", async () => {
    const before = { main: await eth(main), tee: await eth(tee.address) }
    const view = await confirmed(body("h-eth"))
    expect(view).toMatchObject({ chain: "hood", from: main, to: tee.address, destinationClass: "own", destinationKind: "tee", walletId: tee.id, replay: false })
    const gas = await gasOf(view.signature!)
    expect(gas.status).toBe("success")
    expect(gas.gasUsed).toBe(HOOD_TRANSFER_GAS.eth)
    expect((await eth(tee.address)) - before.tee).toBe(ETH / 10n)
    expect(before.main - (await eth(main))).toBe(ETH / 10n + gas.weiRaw)
    expect((await executed()).filter((e) => e.data.signature === view.signature)).toEqual([
      {
        accountId: ACCOUNT,
        event: "transfer.executed",
        data: { chain: "hood", asset: "eth", amountRaw: (ETH / 10n).toString(), from: main, to: tee.address, destinationClass: "own", signature: view.signature, walletId: tee.id, destinationKind: "tee" }
      }
    ])
    // The same id, the destination in lower case (the same address): the transfer as it stands, nothing sent.
    const nonce = await pc().getTransactionCount({ address: main })
    const again = await run(transfers.build(caller, body("h-eth", { to: tee.address.toLowerCase() })))
    expect(again._tag === "Right" && again.right).toMatchObject({ status: "confirmed", signature: view.signature, replay: true })
    expect(await pc().getTransactionCount({ address: main })).toBe(nonce)
    expect((await eth(tee.address)) - before.tee).toBe(ETH / 10n)
    expect(await refusalOf(body("h-eth", { amountRaw: 2n }))).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT", field: "clientTransferId" })
  })

  it("USDG and a launched token to an approved withdrawal address: the exact units move, the source pays only gas, destinationClass approved; the dry run records nothing", async () => {
    const out = freshAddress()
    await Effect.runPromise(addresses.add(principals["sess-a"] as Principal, { chain: "evm", address: out }))
    for (const [asset, t, amount] of [
      ["usdg", usdg, 12_345_678n],
      [token, token, 987_654_321n]
    ] as const) {
      const id = `h-approved-${asset}`
      const dry = await run(transfers.build(caller, body(id, { asset, amountRaw: amount, to: out, dryRun: true })))
      expect(dry._tag === "Right" && dry.right).toMatchObject({ status: "ready", destinationClass: "approved", destinationKind: "withdrawal_address" })
      expect(await rows(id)).toHaveLength(0)
      const before = { src: await tokens(t, main), eth: await eth(main) }
      const view = await confirmed(body(id, { asset, amountRaw: amount, to: out }))
      expect(view).toMatchObject({ destinationClass: "approved", destinationKind: "withdrawal_address", to: out })
      expect(view).not.toHaveProperty("walletId")
      const gas = await gasOf(view.signature!)
      expect(gas.gasUsed < HOOD_TRANSFER_GAS.token).toBe(true)
      expect(await tokens(t, out)).toBe(amount)
      expect(before.src - (await tokens(t, main))).toBe(amount)
      expect(before.eth - (await eth(main))).toBe(gas.weiRaw)
      expect((await executed()).find((e) => e.data.signature === view.signature)?.data).toMatchObject({ chain: "hood", asset, amountRaw: amount.toString(), destinationClass: "approved", to: out })
    }
  })

  it("ETH to an approved address with code (WETH9's receive, which costs more than 21,000) lands under the contract limit", async () => {
    const weth9 = getAddress(net.addresses.weth9)
    await Effect.runPromise(addresses.add(principals["sess-a"] as Principal, { chain: "evm", address: weth9 }))
    const before = { weth9: await eth(weth9), main: await eth(main) }
    const view = await confirmed(body("h-contract", { to: weth9, amountRaw: 4_321n }))
    const gas = await gasOf(view.signature!)
    expect(gas.gasUsed > HOOD_TRANSFER_GAS.eth && gas.gasUsed < HOOD_TRANSFER_GAS.ethToContract).toBe(true)
    expect((await eth(weth9)) - before.weth9).toBe(4_321n)
    expect(before.main - (await eth(main))).toBe(4_321n + gas.weiRaw)
  })

  it("50 concurrent requests under one id make one transfer", async () => {
    const before = await eth(tee.address)
    const answers = await Promise.all(Array.from({ length: 50 }, () => run(transfers.build(caller, body("h-race", { amountRaw: 12_345n })))))
    const ok = answers.flatMap((a) => (a._tag === "Right" ? [a.right] : []))
    expect(ok).toHaveLength(50)
    expect(new Set(ok.map((a) => a.signature)).size).toBe(1)
    expect(ok.filter((a) => !a.replay)).toHaveLength(1)
    expect(await rows("h-race")).toHaveLength(1)
    expect((await eth(tee.address)) - before).toBe(12_345n)
    expect((await executed()).filter((e) => e.data.signature === ok[0]!.signature)).toHaveLength(1)
  }, 120_000)

  it("refusals record nothing and move nothing: not own and not approved, the source itself, a denied key, over the ETH or token balance, a token not launched here, over the txLimit, a revoked delegation", async () => {
    const before = { rows: (await rows()).length, events: (await executed()).length, main: await eth(main), nonce: await pc().getTransactionCount({ address: main }) }
    const stranger = freshAddress()
    expect(await refusalOf(body("hr1", { to: stranger }))).toMatchObject({ status: 400, code: "VALIDATION_FAILED", field: "to", reason: "destination_not_allowed" })
    expect(await refusalOf(body("hr1t", { to: stranger, asset: token, amountRaw: 1n }))).toMatchObject({ status: 400, reason: "destination_not_allowed" })
    expect(await eth(stranger)).toBe(0n)
    expect(await tokens(token, stranger)).toBe(0n)
    expect(await refusalOf(body("hr2", { to: main.toLowerCase() }))).toMatchObject({ status: 400, field: "to", reason: "same_wallet" })
    expect(await refusalOf(body("hr3"), { ...caller, embeddedWallet: "denied" })).toMatchObject({ status: 403, code: "EMBEDDED_WALLET_NOT_PERMITTED" })
    // All of the ETH leaves nothing for gas.
    expect(await refusalOf(body("hr4", { amountRaw: before.main }))).toMatchObject({ status: 402, code: "INSUFFICIENT_OWNER_BALANCE" })
    expect(await refusalOf(body("hr5", { asset: token, amountRaw: (await tokens(token, main)) + 1n }))).toMatchObject({ status: 402, code: "INSUFFICIENT_OWNER_BALANCE" })
    expect(await refusalOf(body("hr6", { asset: freshAddress() }))).toMatchObject({ status: 400, field: "asset", reason: "asset_unsupported" })
    // 0.1 ETH at $3000 is $300: over a $5 daily txLimit; a launched token has no USD price: it fails closed.
    expect(await refusalOf(body("hr7"), limited)).toMatchObject({ status: 403, code: "KEY_LIMIT_REACHED" })
    expect(await refusalOf(body("hr8", { asset: token, amountRaw: 1n }), limited)).toMatchObject({ status: 403, code: "KEY_LIMIT_REACHED", reason: "limit_unavailable" })
    await Effect.runPromise(h.provider.setDelegation(ACCOUNT, "evm", "revoked"))
    try {
      expect(await refusalOf(body("hr9"))).toMatchObject({ status: 403, code: "DELEGATION_REVOKED" })
    } finally {
      await Effect.runPromise(h.provider.setDelegation(ACCOUNT, "evm", "active"))
    }
    expect((await rows()).length).toBe(before.rows)
    expect((await executed()).length).toBe(before.events)
    expect(await eth(main)).toBe(before.main)
    expect(await pc().getTransactionCount({ address: main })).toBe(before.nonce)
    for (const id of ["hr1", "hr4", "hr7"]) expect(await sqlRun(reservationState(transferReservationId({ accountId: ACCOUNT, clientTransferId: id })))).toBeUndefined()
    // Under the txLimit it goes through: $3 of USDG.
    await confirmed(body("hr10", { asset: "usdg", amountRaw: 3_000_000n }), limited)
  })
})

describe("a process that died mid-transfer on Hood (recovery by another process's pass)", () => {
  /** A transfer signed and recorded `sending` as the dead process left it; `sent`: whether its bytes left before it died. */
  const crashed = async (clientTransferId: string, amountRaw: bigint, sent: boolean) => {
    const chain = makeHoodTransfers({ chain: net.chain, rpcUrl: net.rpcUrl, factory: net.addresses.factory, usdg })
    const built = await Effect.runPromise(chain.unsigned(main, hoodTransferCall({ to: tee.address, token: null, amountRaw, toHasCode: false })))
    const signed = await Effect.runPromise(h.provider.signWithEmbedded(ACCOUNT, "evm", built.bytes))
    const input = body(clientTransferId, { amountRaw })
    const row: TransferRow = {
      ...MAIN_PAYER,
      accountId: ACCOUNT,
      clientTransferId,
      keyId: caller.keyId,
      keyPrefix: caller.keyPrefix,
      requestHash: requestHashOf(input),
      chain: "hood",
      asset: "eth",
      mint: null,
      amountRaw,
      from: main,
      to: tee.address,
      destinationClass: "own",
      destinationKind: "tee",
      toWalletId: tee.id,
      state: "sending",
      signature: signed.signature,
      lastValidBlockHeight: BigInt(built.nonce),
      error: null,
      createdAtMs: Date.now()
    }
    const store = makeTransferStore(h.sql, { enqueue: () => Effect.void }, Clock.make())
    expect(await sqlRun(store.save(undefined, row))).toBe(true)
    if (sent) await Effect.runPromise(chain.port(() => Effect.die("no release expected")).send(signed.signedTransaction))
    return { input, signature: signed.signature }
  }
  const stateOfRow = async (id: string) => (await rows(id))[0]?.state

  it("sent before the crash: the pass settles it confirmed from the chain, once, and sends nothing itself", async () => {
    const before = await eth(tee.address)
    const { input, signature } = await crashed("h-crash-sent", 777n, true)
    const nonce = await pc().getTransactionCount({ address: main, blockTag: "pending" })
    expect(await Effect.runPromise(transfers.recover)).toBe(1)
    await eventually(async () => (await stateOfRow("h-crash-sent")) === "confirmed", { what: "the recovered transfer settles confirmed", deadlineMs: 30_000 })
    expect((await eth(tee.address)) - before).toBe(777n)
    expect(await pc().getTransactionCount({ address: main, blockTag: "pending" })).toBe(nonce)
    expect((await executed()).filter((e) => e.data.signature === signature)).toHaveLength(1)
    const replay = await run(transfers.build(caller, input))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ status: "confirmed", signature, replay: true })
  }, 60_000)

  it("never sent before the crash: the pass never sends it; its nonce is released by a zero-value transfer, it settles failed and the id is spent", async () => {
    const before = { tee: await eth(tee.address) }
    const { input, signature } = await crashed("h-crash-unsent", 888n, false)
    const meanwhile = await run(transfers.build(caller, input))
    expect(meanwhile._tag === "Right" && meanwhile.right).toMatchObject({ status: "sending", signature, replay: true })
    expect(await Effect.runPromise(transfers.recover)).toBe(1)
    await eventually(async () => (await stateOfRow("h-crash-unsent")) === "failed", { what: "the unsent transfer settles failed", deadlineMs: 45_000 })
    expect(await pc().getTransaction({ hash: signature as Hex }).catch(() => undefined)).toBeUndefined()
    expect(await eth(tee.address)).toBe(before.tee)
    expect((await executed()).filter((e) => e.data.signature === signature)).toHaveLength(0)
    expect(await refusalOf(input)).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT", reason: "failed" })
  }, 60_000)
})

describe("the records and the chain", () => {
  it("every destination holds exactly what the confirmed Hood rows sent it, to the unit", async () => {
    // WETH9 held ETH before this file's transfer to it: its exact delta is checked where it is sent.
    const confirmedRows = (await rows()).filter((r) => r.state === "confirmed" && r.to_address !== getAddress(net.addresses.weth9))
    expect(confirmedRows.length).toBeGreaterThan(5)
    const sums = new Map<string, bigint>()
    for (const r of confirmedRows) {
      const k = `${r.mint ?? "eth"}|${r.to_address}`
      sums.set(k, (sums.get(k) ?? 0n) + BigInt(r.amount_raw))
    }
    for (const [k, sum] of sums) {
      const [asset, to] = k.split("|") as [string, Address]
      // Every destination here started empty (the TEE wallet and fresh addresses).
      expect(asset === "eth" ? await eth(to) : await tokens(asset as Address, to)).toBe(sum)
    }
  })
})
