/**
 * The localnet block engine's additions over a real socket: `revertible` buy legs (a member named
 * revertible may fail inside a landed bundle; the first never may) and the fault switch that
 * executes a bundle but loses its acknowledgement and every status of it, so only the chain can
 * tell (the atomic launch's `timeout` path). The switch method exists only when enabled.
 */
import { generateKeyPairSigner, getBase64Decoder, type Instruction, type KeyPairSigner } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { startBlockEngineServer } from "../../src/chain/solana/localnet/server/BlockEngineServer.js"
import type { RunningServer } from "../../src/chain/solana/localnet/server/internal/httpJsonRpc.js"
import { signInstructions } from "../../src/chain/solana/localnet/testkit.js"

const SOL = 1_000_000_000n
const b64 = getBase64Decoder()

const call = async (url: string, method: string, params: ReadonlyArray<unknown>) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } }
}

let ledger: Ledger
let engine: RunningServer
let plain: RunningServer

beforeAll(async () => {
  ledger = new Ledger()
  engine = await startBlockEngineServer(ledger, { faultSwitch: true })
  plain = await startBlockEngineServer(ledger)
})
afterAll(async () => {
  await engine?.close()
  await plain?.close()
})

const sign = async (payer: KeyPairSigner, instructions: Instruction[]) => b64.decode((await signInstructions(ledger, payer, instructions)).wireBytes)

describe("block engine: revertible legs and the fault switch", () => {
  it("lands a bundle whose revertible member fails, and reports it Landed", async () => {
    const a = await devSigner(0)
    const b = await devSigner(1)
    const to = (await generateKeyPairSigner()).address
    ledger.advanceSlot()
    const launch = await sign(a, [getTransferSolInstruction({ from: a, to: ledger.tipAccounts[0]!, lamports: 100_000n })])
    const failing = await sign(b, [getTransferSolInstruction({ from: b, to, lamports: 10n ** 18n })])
    const ok = await sign(a, [getTransferSolInstruction({ from: a, to, lamports: SOL })])
    const sent = await call(engine.url, "sendBundle", [[launch, failing, ok], { encoding: "base64", revertible: [1, 2] }])
    expect(sent.error).toBeUndefined()
    const status = (await call(engine.url, "getInflightBundleStatuses", [[sent.result]])).result as { value: Array<{ status: string }> }
    expect(status.value[0]!.status).toBe("Landed")
    const bundle = ledger.getBundle(sent.result as string)!
    expect(bundle.signatures.map((s) => ledger.getTransaction(s)!.err === null)).toEqual([true, false, true])
    expect(ledger.getBalance(to)).toBe(SOL)
    const zero = await call(engine.url, "sendBundle", [[launch, failing], { encoding: "base64", revertible: [0] }])
    expect(zero.error).toMatchObject({ code: -32602, message: expect.stringContaining("invalid_revertible") })
  })

  it("with hideOutcomes the bundle executes but its acknowledgement and statuses are lost; only the chain tells", async () => {
    const a = await devSigner(2)
    const to = (await generateKeyPairSigner()).address
    ledger.advanceSlot()
    expect((await call(plain.url, "localnet_setBundleFaults", [{ hideOutcomes: true }])).error).toMatchObject({ code: -32601 })
    expect((await call(engine.url, "localnet_setBundleFaults", [{ hideOutcomes: true }])).result).toEqual({ hideOutcomes: true })
    const signed = await signInstructions(ledger, a, [getTransferSolInstruction({ from: a, to, lamports: SOL }), getTransferSolInstruction({ from: a, to: ledger.tipAccounts[1]!, lamports: 10_000n })])
    const sent = await call(engine.url, "sendBundle", [[b64.decode(signed.wireBytes)], { encoding: "base64" }])
    expect(sent.error).toMatchObject({ code: -32603 })
    expect(ledger.getBalance(to)).toBe(SOL) // it landed
    const id = ledger.getTransaction(signed.signature)!.bundleId!
    expect(id).toMatch(/^[0-9a-f]{64}$/)
    expect((await call(engine.url, "getInflightBundleStatuses", [[id]])).result).toMatchObject({ value: [{ status: "Invalid" }] })
    expect((await call(engine.url, "getBundleStatuses", [[id]])).result).toMatchObject({ value: [null] })
    // Switching it off does not reveal what was hidden; new bundles are acknowledged again.
    await call(engine.url, "localnet_setBundleFaults", [{ hideOutcomes: false }])
    expect((await call(engine.url, "getInflightBundleStatuses", [[id]])).result).toMatchObject({ value: [{ status: "Invalid" }] })
    const next = await sign(a, [getTransferSolInstruction({ from: a, to: ledger.tipAccounts[1]!, lamports: 10_001n })])
    expect((await call(engine.url, "sendBundle", [[next], { encoding: "base64" }])).result).toMatch(/^[0-9a-f]{64}$/)
  })
})
