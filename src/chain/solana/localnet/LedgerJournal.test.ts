import { generateKeyPairSigner } from "@solana/kit"
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { devSigner } from "../client/DevSigners.js"
import { getTransferSolInstruction } from "../client/SplInstructions.js"
import { USDC_MINT_ADDRESS } from "../program/ProgramIds.js"
import { Ledger, type LedgerOptions, type LedgerRecord } from "./Ledger.js"
import { LEDGER_JOURNAL_FILE, openStoredLedger } from "./LedgerStore.js"
import { expectOk, signInstructions } from "./testkit.js"

const SOL = 1_000_000_000n

/** A clock the test moves: block times come from it. */
const clock = () => {
  let ms = 1_700_000_000_000
  return { now: () => ms, tick: (d: number) => (ms += d) }
}

/** Everything a client or the ingester can read of a ledger, for comparing two of them. */
const observable = (ledger: Ledger, addresses: ReadonlyArray<string>) => ({
  slot: ledger.slot,
  latest: ledger.latestBlockhash(),
  blocks: Array.from({ length: Number(ledger.slot) + 1 }, (_, i) => ledger.getBlock(BigInt(i))),
  accounts: addresses.map((a) => ledger.getAccount(a as never)),
  updates: ledger.updatesSince(0n)
})

/** Transfers, a faucet airdrop and mint, a bundle, a full slot closing itself, slots closed on the clock. */
const drive = async (ledger: Ledger, c: ReturnType<typeof clock>) => {
  const a = await devSigner(0)
  const b = await devSigner(1)
  const to = await generateKeyPairSigner()
  const sigs: string[] = []
  sigs.push(expectOk(ledger, ledger.requestAirdrop(to.address, 3n * SOL)).signature)
  sigs.push(expectOk(ledger, ledger.mintTestTokens(USDC_MINT_ADDRESS, to.address, 5_000_000n)).signature)
  c.tick(400)
  ledger.advanceSlot()
  for (let i = 0; i < 7; i++) {
    const tx = await signInstructions(ledger, i % 2 === 0 ? a : b, [getTransferSolInstruction({ from: i % 2 === 0 ? a : b, to: to.address, lamports: SOL + BigInt(i) })])
    sigs.push(expectOk(ledger, ledger.submit(tx.wireBytes)).signature)
  }
  c.tick(1_300)
  ledger.advanceSlot()
  const tip = ledger.tipAccounts[0]!
  const bundle = [
    (await signInstructions(ledger, a, [getTransferSolInstruction({ from: a, to: to.address, lamports: 2n * SOL })])).wireBytes,
    (await signInstructions(ledger, b, [getTransferSolInstruction({ from: b, to: tip, lamports: 10_000n })])).wireBytes
  ]
  const landed = ledger.submitBundle(bundle)
  if (landed._tag !== "Landed") throw new Error(landed.detail)
  sigs.push(...landed.signatures)
  for (let i = 0; i < 3; i++) {
    c.tick(400)
    ledger.advanceSlot()
  }
  return { sigs, addresses: [a.address, b.address, to.address, tip, ledger.faucet] }
}

describe("Ledger journal", () => {
  it("replays to the same ledger: slots, blockhashes, block times, records, accounts and retained updates", async () => {
    const c = clock()
    const records: LedgerRecord[] = []
    const options: LedgerOptions = { maxTransactionsPerSlot: 5, clockMs: c.now, genesisTimeSec: 1_600_000_000 }
    const ledger = new Ledger({ ...options, journal: { append: (r) => records.push(r), slotClosed: () => undefined } })
    const { sigs, addresses } = await drive(ledger, c)
    expect(records.filter((r) => r.op === "slot").length).toBeGreaterThan(5) // the full slot's close is among them

    const later = clock()
    later.tick(9_999_000) // replay must not read the clock
    const again = new Ledger({ ...options, clockMs: later.now })
    again.replay(records)
    expect(observable(again, addresses)).toEqual(observable(ledger, addresses))
    for (const s of sigs) expect(again.getTransaction(s)).toEqual(ledger.getTransaction(s))
    // The faucet goes on with fresh transactions (its nonce was restored).
    const to = await generateKeyPairSigner()
    expect(again.requestAirdrop(to.address, SOL)).toEqual(ledger.requestAirdrop(to.address, SOL))
  })

  it("writes a transaction before any subscriber sees it, and a slot close before its confirmed status", async () => {
    const records: LedgerRecord[] = []
    const synced: number[] = []
    const ledger = new Ledger({ journal: { append: (r) => records.push(r), slotClosed: () => synced.push(records.length) } })
    const seen: string[] = []
    ledger.subscribe((u) => {
      if (u.kind === "transaction") seen.push(`tx ${records.some((r) => r.op === "tx") ? "journaled" : "NOT journaled"}`)
      if (u.kind === "slot" && u.status === "confirmed") seen.push(`confirmed ${synced.includes(records.length) ? "synced" : "NOT synced"}`)
    })
    const to = await generateKeyPairSigner()
    ledger.requestAirdrop(to.address, SOL)
    ledger.advanceSlot()
    expect(seen).toEqual(["tx journaled", "confirmed synced"])
  })

  it("refuses a journal that does not replay", async () => {
    const records: LedgerRecord[] = []
    const ledger = new Ledger({ journal: { append: (r) => records.push(r), slotClosed: () => undefined } })
    const to = await generateKeyPairSigner()
    ledger.requestAirdrop(to.address, SOL)
    const tx = records[0]!
    expect(() => new Ledger().replay([tx, tx])).toThrow(/record 1 does not replay: transaction rejected/)
  })
})

describe("Ledger kept in a directory", () => {
  const dirs: string[] = []
  const tempDir = () => {
    const d = mkdtempSync(path.join(os.tmpdir(), "ledger-store-"))
    dirs.push(d)
    return d
  }
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })

  it("continues the same chain after a restart, dropping a torn last line", async () => {
    const dir = tempDir()
    const c = clock()
    const first = openStoredLedger(dir, { clockMs: c.now })
    expect(first.created).toBe(true)
    const { addresses } = await drive(first.ledger, c)
    const before = observable(first.ledger, addresses)
    first.close() // a crash leaves the file as it is: nothing is written at close

    const file = path.join(dir, LEDGER_JOURNAL_FILE)
    const size = statSync(file).size
    appendFileSync(file, '0badc0de {"op":"tx","wi') // a write torn by the crash
    const second = openStoredLedger(dir, { clockMs: c.now })
    expect(second.created).toBe(false)
    expect(second.tornBytes).toBeGreaterThan(0)
    expect(statSync(file).size).toBe(size)
    expect(observable(second.ledger, addresses)).toEqual(before)
    c.tick(400)
    second.ledger.advanceSlot()
    second.close()
    const third = openStoredLedger(dir, { clockMs: c.now })
    expect(third.ledger.slot).toBe(before.slot + 1n)
    expect(third.tornBytes).toBe(0)
    third.close()
  })

  it("gives every new chain its own genesis hash", () => {
    const a = openStoredLedger(tempDir())
    const b = openStoredLedger(tempDir())
    expect(a.ledger.getBlock(0n)?.blockhash).not.toEqual(b.ledger.getBlock(0n)?.blockhash)
    a.close()
    b.close()
  })

  it("starts a new chain when the file holds no whole record", () => {
    const dir = tempDir()
    const log = path.join(dir, LEDGER_JOURNAL_FILE)
    const first = openStoredLedger(dir)
    first.close()
    const header = readFileSync(log, "utf8").split("\n")[0]!
    // The header without its checksum: not a record.
    rmSync(log)
    appendFileSync(log, `${header.replace(/^\S+ /, "")}\n`) // no checksum: nothing valid is read …
    const second = openStoredLedger(dir) // … so the file counts as empty and a new chain starts
    expect(second.created).toBe(true)
    second.close()
  })
})
