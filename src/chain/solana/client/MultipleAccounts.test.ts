/**
 * The trade build's `getMultipleAccounts` decoded without kit's response path equals kit's own
 * parse of the same answers, to the unit: real localnet answers over HTTP (a launched curve, a
 * wallet, its token account, missing accounts, the faucet's 5e17 lamports past 2^53, every
 * `rentEpoch` u64::MAX), an agave-shaped answer, random answers (lamports over the whole u64
 * range, random data, null entries), and every failure (JSON-RPC errors, HTTP statuses, text that
 * is not JSON, other shapes) failing as kit's path fails.
 */
import { type Address, address, generateKeyPairSigner, getBase64Encoder, isSolanaError } from "@solana/kit"
import fc from "fast-check"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closeLoopback, listenLoopback } from "../../../../test/support/loopbackHttp.js"
import { createNodeSolanaRpc, parseRpcUrl, postSolanaJsonRpc } from "../../internal/JsonRpcHttp.js"
import { Ledger } from "../localnet/Ledger.js"
import type { RunningServer } from "../localnet/server/internal/httpJsonRpc.js"
import { stringifyJson } from "../localnet/server/internal/json.js"
import { startSolanaRpcServer } from "../localnet/server/SolanaRpcServer.js"
import { ataOf, expectOk, launchCurve, send } from "../localnet/testkit.js"
import { WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"
import { getBuyInstruction } from "./CurveInstructions.js"
import { devSigner } from "./DevSigners.js"
import { decodeMultipleAccountsFast, kitAccounts, makeMultipleAccountsReader, type RawAccount } from "./MultipleAccounts.js"
import { getCreateAssociatedTokenInstruction } from "./SplInstructions.js"

const SOL = 1_000_000_000n
const U64_MAX = (1n << 64n) - 1n
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

const fromBase64 = getBase64Encoder()

/** What the trade chain read before: kit's RPC, each account mapped as `SolanaTradeChain` mapped it. */
const kitRead = async (url: string, addresses: ReadonlyArray<Address>): Promise<ReadonlyArray<RawAccount | undefined>> => {
  const r = await createNodeSolanaRpc(url).getMultipleAccounts([...addresses], { encoding: "base64", commitment: "confirmed" }).send()
  return r.value.map((a) => (a === null ? undefined : { owner: a.owner as string, data: new Uint8Array(fromBase64.encode(a.data[0])), lamports: a.lamports }))
}

/** The answer's text, as the node sends it to the reader. */
const answerText = (url: string, addresses: ReadonlyArray<Address>) =>
  postSolanaJsonRpc(
    parseRpcUrl(url),
    JSON.stringify({ id: "1", jsonrpc: "2.0", method: "getMultipleAccounts", params: [addresses, { encoding: "base64", commitment: "confirmed" }] }),
    undefined
  )

/** Plain values (Uint8Array as an array of bytes) so `toEqual` compares the bytes, whatever the view. */
const plain = (accounts: ReadonlyArray<RawAccount | undefined>) =>
  accounts.map((a) => (a === undefined ? undefined : { owner: a.owner, lamports: a.lamports, data: [...a.data] }))

describe("getMultipleAccounts on the localnet", () => {
  const ledger = new Ledger()
  let rpc: RunningServer
  let curve: Address
  let pool: Address
  let wallet: Address
  let tokenAccount: Address

  beforeAll(async () => {
    rpc = await startSolanaRpcServer(ledger)
    const creator = await devSigner(0)
    const trader = await devSigner(4)
    const c = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    curve = c.addresses.curve
    pool = c.addresses.pool
    wallet = trader.address
    tokenAccount = ataOf(trader.address, c.mint.address)
    expectOk(ledger, await send(ledger, trader, [getCreateAssociatedTokenInstruction({ payer: trader, ata: tokenAccount, owner: trader.address, mint: c.mint.address })]))
    const buy = await getBuyInstruction({ trader, mint: c.mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: SOL / 10n, minAmountOutRaw: 1n })
    expectOk(ledger, await send(ledger, trader, [buy]))
    ledger.advanceSlots(3)
  })

  afterAll(async () => {
    await rpc?.close()
  })

  it("the build's four accounts (curve, pool not seeded, wallet, token account): decoded once, equal to kit's and to the ledger", async () => {
    const addresses = [curve, pool, wallet, tokenAccount]
    const text = await answerText(rpc.url, addresses)
    expect(text).toContain("18446744073709551615") // rentEpoch u64::MAX on every account
    const fast = decodeMultipleAccountsFast(text, addresses.length)
    expect(fast).toBeDefined()
    const read = await makeMultipleAccountsReader(rpc.url)(addresses, "confirmed")
    expect(plain(read)).toEqual(plain(await kitRead(rpc.url, addresses)))
    expect(plain(fast!)).toEqual(plain(read))
    expect(read[1]).toBeUndefined()
    for (const [i, a] of addresses.entries()) {
      const onLedger = ledger.getAccount(a)
      if (onLedger === undefined) continue
      expect(read[i]!.lamports).toBe(onLedger.lamports)
      expect([...read[i]!.data]).toEqual([...onLedger.data])
      expect(read[i]!.owner).toBe(onLedger.owner)
    }
    expect(read[0]!.data.length).toBeGreaterThan(100)
  })

  it("lamports past 2^53 (the faucet's 5e17): kit's own parse decides, to the unit", async () => {
    const nobody = (await generateKeyPairSigner()).address
    const addresses = [ledger.faucet, curve, nobody]
    const text = await answerText(rpc.url, addresses)
    expect(ledger.getBalance(ledger.faucet)).toBeGreaterThan(MAX_SAFE)
    expect(decodeMultipleAccountsFast(text, addresses.length)).toBeUndefined()
    const read = await makeMultipleAccountsReader(rpc.url)(addresses, "confirmed")
    expect(read[0]!.lamports).toBe(ledger.getBalance(ledger.faucet))
    expect(read[2]).toBeUndefined()
    expect(plain(read)).toEqual(plain(await kitRead(rpc.url, addresses)))
  })

  it("a node's refusal (over 100 accounts) fails with kit's error", async () => {
    const addresses = Array.from({ length: 101 }, () => curve)
    const [ours, kits] = await Promise.all([
      makeMultipleAccountsReader(rpc.url)(addresses, "confirmed").then(() => undefined, (e: unknown) => e),
      kitRead(rpc.url, addresses).then(() => undefined, (e: unknown) => e)
    ])
    expect(isSolanaError(ours)).toBe(true)
    expect(String(ours)).toBe(String(kits))
    expect((ours as { context: unknown }).context).toEqual((kits as { context: unknown }).context)
  })
})

describe("decodeMultipleAccountsFast against kit's parse", () => {
  const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
  console.log(`MultipleAccounts property: FC_SEED=${seed}`)

  const addressOf = (i: number) => address(["11111111111111111111111111111111", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "So11111111111111111111111111111111111111112"][i % 3]!)

  /** An answer as a node writes it (u64s as integer literals: the localnet's own JSON writer). */
  const answerOf = (value: ReadonlyArray<{ lamports: bigint; data: Uint8Array; owner: string } | null>, slot: bigint) =>
    stringifyJson({
      jsonrpc: "2.0",
      result: {
        context: { apiVersion: "2.1.21", slot },
        value: value.map((a) =>
          a === null ? null : { data: [Buffer.from(a.data).toString("base64"), "base64"], executable: false, lamports: a.lamports, owner: a.owner, rentEpoch: U64_MAX, space: a.data.length }
        )
      },
      id: "7"
    })

  it("an agave answer (context.apiVersion, rentEpoch u64::MAX, an empty data, a null account)", async () => {
    const text =
      '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":341197247},"value":[{"data":["","base64"],"executable":false,"lamports":88849814690250,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":0},null,{"data":["AQAAAAswVXqfxOkOM1h9osfsETZbgKXK7xQ5XoOozfIXPGGG//9jp7O24A0GAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","base64"],"executable":false,"lamports":1461600,"owner":"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA","rentEpoch":18446744073709551615,"space":82}]},"id":1}'
    const addresses = [addressOf(0), addressOf(1), addressOf(2)]
    const fast = decodeMultipleAccountsFast(text, 3)
    expect(fast).toBeDefined()
    expect(plain(fast!)).toEqual(plain(await kitAccounts(text, addresses, "confirmed")))
    expect(fast![0]!.lamports).toBe(88849814690250n)
    expect(fast![1]).toBeUndefined()
    expect(fast![2]!.data.length).toBe(82)
    // An SPL mint: supply 999999999999999999 (past 2^53) read from the bytes, decimals 6.
    expect(Buffer.from(fast![2]!.data).readBigUInt64LE(36)).toBe(999999999999999999n)
    expect(fast![2]!.data[44]).toBe(6)
  })

  it("random answers: equal to kit's parse, lamports over the whole u64 range (kit's parse past 2^53 − 1)", async () => {
    const account = fc.option(
      fc.record({
        lamports: fc.oneof(fc.bigInt({ min: 0n, max: MAX_SAFE }), fc.bigInt({ min: MAX_SAFE - 3n, max: MAX_SAFE + 3n }), fc.bigInt({ min: 0n, max: U64_MAX }), fc.constantFrom(0n, U64_MAX)),
        data: fc.uint8Array({ maxLength: 400 }),
        owner: fc.constantFrom("11111111111111111111111111111111", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
      }),
      { nil: null }
    )
    await fc.assert(
      fc.asyncProperty(fc.array(account, { maxLength: 6 }), fc.bigInt({ min: 0n, max: U64_MAX }), async (value, slot) => {
        const text = answerOf(value, slot)
        const addresses = value.map((_, i) => addressOf(i))
        const kit = await kitAccounts(text, addresses, "confirmed")
        const fast = decodeMultipleAccountsFast(text, value.length)
        const safe = value.every((a) => a === null || a.lamports <= MAX_SAFE)
        expect(fast !== undefined).toBe(safe)
        if (fast !== undefined) expect(plain(fast)).toEqual(plain(kit))
        expect(plain(kit)).toEqual(value.map((a) => (a === null ? undefined : { owner: a.owner, lamports: a.lamports, data: [...a.data] })))
      }),
      { seed, numRuns: 300 }
    )
  })

  it("number literals a node does not write (5e2, 500.0, 5.00e2, -0): the same bigint on both paths", async () => {
    const ok = answerOf([{ lamports: 500n, data: new Uint8Array([1, 2, 3]), owner: "11111111111111111111111111111111" }], 1n)
    for (const [literal, lamports] of [["5e2", 500n], ["5E2", 500n], ["500.0", 500n], ["5.00e2", 500n], ["-0", 0n], ["0.0", 0n]] as const) {
      const text = ok.replace('"lamports":500', `"lamports":${literal}`)
      expect(text, literal).toContain(`"lamports":${literal}`)
      const fast = decodeMultipleAccountsFast(text, 1)
      expect(fast, literal).toBeDefined()
      expect(fast![0]!.lamports, literal).toBe(lamports)
      expect(plain(fast!), literal).toEqual(plain(await kitAccounts(text, [addressOf(0)], "confirmed")))
    }
  })

  it("anything but a plain success is kit's to decide", () => {
    const ok = answerOf([{ lamports: 5n, data: new Uint8Array([1, 2, 3]), owner: "11111111111111111111111111111111" }], 1n)
    expect(decodeMultipleAccountsFast(ok, 1)).toBeDefined()
    const cases = [
      "not json",
      '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":"1"}',
      '{"jsonrpc":"2.0","error":null,"result":{"context":{"slot":1},"value":[null]},"id":"1"}',
      '{"jsonrpc":"2.0","result":null,"id":"1"}',
      '{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":[]},"id":"1"}',
      ok.replace('"lamports":5', '"lamports":5.5'),
      ok.replace('"lamports":5', '"lamports":"5"'),
      ok.replace('"base64"]', '"base58"]'),
      ok.replace('"AQID"', '"AQ-D"'),
      ok.replace('"owner":"11111111111111111111111111111111"', '"owner":7'),
      "[]"
    ]
    for (const text of cases) expect(decodeMultipleAccountsFast(text, 1), text).toBeUndefined()
  })
})

describe("failures over HTTP, as kit's path fails", () => {
  let answer: { status: number; body: string } = { status: 200, body: "{}" }
  const received: string[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push(Buffer.concat(chunks).toString("utf8"))
      res.writeHead(answer.status, { "content-type": "application/json" })
      res.end(answer.body)
    })
  })
  let url = ""
  beforeAll(async () => {
    url = await listenLoopback(server)
  })
  afterAll(async () => {
    await closeLoopback(server)
  })

  const addresses = [address("11111111111111111111111111111111"), address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")]
  const settle = (p: Promise<unknown>) => p.then((v) => ({ ok: true as const, v }), (e: unknown) => ({ ok: false as const, e }))

  it("sends kit's request: the same method, params and commitment", async () => {
    answer = { status: 200, body: '{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":[null,null]},"id":"1"}' }
    received.length = 0
    await makeMultipleAccountsReader(url)(addresses, "confirmed")
    await kitRead(url, addresses)
    const [ours, kits] = received.map((b) => ({ ...(JSON.parse(b) as Record<string, unknown>), id: "" }))
    expect(ours).toEqual(kits)
    expect(received[0]).toBe(received[1]!.replace(/"id":"\d+"/, received[0]!.match(/"id":"\d+"/)![0]))
  })

  it.each([
    ["a JSON-RPC error", 200, '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid param: too many accounts"},"id":"1"}'],
    ["a server error with data", 200, '{"jsonrpc":"2.0","error":{"code":-32016,"message":"Minimum context slot has not been reached","data":{"contextSlot":18446744073709551615}},"id":"1"}'],
    ["an error that is null", 200, '{"jsonrpc":"2.0","error":null,"id":"1"}'],
    ["an HTTP 503", 503, "busy"],
    ["an HTTP 429 with a JSON body", 429, '{"jsonrpc":"2.0","error":{"code":429,"message":"Too many requests"},"id":"1"}'],
    ["text that is not JSON", 200, "<html>gateway</html>"],
    ["a truncated answer", 200, '{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":[nu']
  ])("%s: the same rejection", async (_what, status, body) => {
    answer = { status, body }
    const ours = await settle(makeMultipleAccountsReader(url)(addresses, "confirmed"))
    const kits = await settle(kitRead(url, addresses))
    expect(ours.ok).toBe(false)
    expect(kits.ok).toBe(false)
    if (ours.ok || kits.ok) return
    expect(String(ours.e)).toBe(String(kits.e))
    expect(Object.getPrototypeOf(ours.e)).toBe(Object.getPrototypeOf(kits.e))
    if (isSolanaError(ours.e)) expect(ours.e.context).toEqual((kits.e as typeof ours.e).context)
  })

  it("an answer of another shape: the same accounts as kit's path (a short value list, lamports past 2^53)", async () => {
    for (const body of [
      '{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":[null]},"id":"1"}',
      '{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":[{"data":["AQID","base64"],"executable":false,"lamports":18446744073709551615,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":3},null]},"id":"1"}'
    ]) {
      answer = { status: 200, body }
      expect(plain(await makeMultipleAccountsReader(url)(addresses, "confirmed"))).toEqual(plain(await kitRead(url, addresses)))
    }
  })
})
