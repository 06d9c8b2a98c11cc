/**
 * `solanaRpc(url)` against a localnet RPC server of this process answers what kit's HTTP client
 * (`createSolanaRpc(url)`) answers for the same ledger: values, bigints and JSON-RPC errors; a
 * body over the server's bound goes over HTTP and is refused there as before; a URL served in
 * process is reached without a listener, and once the server stops (or the endpoint
 * unregisters) the URL is HTTP again.
 */
import { address, createSolanaRpc, generateKeyPairSigner, type Address } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Ledger } from "../localnet/Ledger.js"
import { startSolanaRpcServer } from "../localnet/server/SolanaRpcServer.js"
import type { RunningServer } from "../localnet/server/internal/httpJsonRpc.js"
import { servedInProcess, serveInProcess, solanaRpc } from "./InProcessRpc.js"

const settle = <A>(p: Promise<A>) => p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error: error as { message?: string; context?: unknown } }))

describe("solanaRpc (the embedded localnet reached in process)", () => {
  const ledger = new Ledger()
  let server: RunningServer
  let funded: Address
  let missing: Address

  beforeAll(async () => {
    server = await startSolanaRpcServer(ledger, { host: "127.0.0.1", port: 0, maxBodyBytes: 32_768 })
    funded = (await generateKeyPairSigner()).address
    missing = (await generateKeyPairSigner()).address
    const r = ledger.requestAirdrop(funded, 1_234_567n)
    if (r._tag !== "Landed") throw new Error(JSON.stringify(r))
    ledger.advanceSlot()
  })

  afterAll(async () => {
    await server.close()
  })

  it("answers what the HTTP client answers: accounts, bigints, the blockhash, and the node's errors", async () => {
    expect(servedInProcess(server.url)).toBe(true)
    const local = solanaRpc(server.url)
    const remote = createSolanaRpc(server.url)
    const accounts = (rpc: typeof local) => rpc.getMultipleAccounts([funded, missing], { encoding: "base64", commitment: "confirmed" }).send()
    const [a, b] = await Promise.all([accounts(local), accounts(remote)])
    expect(a).toEqual(b)
    expect(a.value[0]?.lamports).toBe(1_234_567n)
    expect(a.value[1]).toBeNull()
    expect(typeof a.context.slot).toBe("bigint")
    expect(await local.getLatestBlockhash({ commitment: "confirmed" }).send()).toEqual(await remote.getLatestBlockhash({ commitment: "confirmed" }).send())
    expect(await local.getBalance(funded).send()).toEqual(await remote.getBalance(funded).send())
    // A JSON-RPC error (a node's invalid-params refusal) is the same error on both paths.
    const tooMany = Array.from({ length: 257 }, () => "1111111111111111111111111111111111111111111111111111111111111111" as never)
    const [e1, e2] = await Promise.all([settle(local.getSignatureStatuses(tooMany).send()), settle(remote.getSignatureStatuses(tooMany).send())])
    expect(e1.ok).toBe(false)
    expect(e2.ok).toBe(false)
    if (!e1.ok && !e2.ok) {
      expect(e1.error.message).toBe(e2.error.message)
      expect(e1.error.context).toEqual(e2.error.context)
      expect(e1.error.context).toMatchObject({ __code: -32602 })
    }
  })

  it("a body over the server's bound goes over HTTP and is refused there (413) as before", async () => {
    const many = Array.from({ length: 1_000 }, () => missing) // ~45 KB of body
    const [e1, e2] = await Promise.all([
      settle(solanaRpc(server.url).getMultipleAccounts(many, { encoding: "base64" }).send()),
      settle(createSolanaRpc(server.url).getMultipleAccounts(many, { encoding: "base64" }).send())
    ])
    expect(e1.ok).toBe(false)
    expect(e2.ok).toBe(false)
    if (!e1.ok && !e2.ok) {
      expect(e1.error.context).toMatchObject({ statusCode: 413 })
      expect(e2.error.context).toMatchObject({ statusCode: 413 })
      expect(e1.error.message).toBe(e2.error.message)
    }
  })

  it("a URL served in process needs no listener; unregistered, it is HTTP again (nothing listens: the request fails)", async () => {
    const url = "http://127.0.0.1:9" // the discard port: nothing of this test listens there
    const answered: string[] = []
    const stop = serveInProcess(url, {
      maxBodyBytes: 4_096,
      handle: (body) => {
        const { id } = JSON.parse(body) as { id: unknown }
        answered.push(body)
        return JSON.stringify({ jsonrpc: "2.0", id, result: { context: { slot: 7 }, value: 42 } })
      }
    })
    const rpc = solanaRpc(url)
    const balance = await rpc.getBalance(address("11111111111111111111111111111111")).send()
    expect(balance).toEqual({ context: { slot: 7n }, value: 42n })
    expect(answered).toHaveLength(1)
    stop()
    expect(servedInProcess(url)).toBe(false)
    expect((await settle(rpc.getBalance(address("11111111111111111111111111111111")).send())).ok).toBe(false)
    expect(answered).toHaveLength(1)
  })

  it("a stopped server is no longer served in process", async () => {
    const other = await startSolanaRpcServer(ledger, { host: "127.0.0.1", port: 0 })
    expect(servedInProcess(other.url)).toBe(true)
    await other.close()
    expect(servedInProcess(other.url)).toBe(false)
    expect((await settle(solanaRpc(other.url).getBalance(funded).send())).ok).toBe(false)
  })
})
