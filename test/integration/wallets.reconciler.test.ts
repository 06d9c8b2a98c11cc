/**
 * The sign relay's chain reader (`chainClaimReconciler`) against the real localnets: a landed
 * Solana transaction is confirmed, an unknown signature pending; a Hood transaction that succeeded
 * is confirmed, one mined reverted is failed, an unknown hash pending; an unreachable node is
 * `unavailable` (which rebind turns into REBIND_RECONCILE_INCOMPLETE).
 */
import { address, createSolanaRpc, getBase58Decoder, lamports } from "@solana/kit"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import { clientsFor, publicClientOf, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { hoodPublicClient } from "../../src/chain/hood/client/HoodClient.js"
import { chainClaimReconciler } from "../../src/services/wiring/ChainReconciler.js"
import { eventually } from "../support/eventually.js"

describe("chain claim reconciler", () => {
  const scope = Effect.runSync(Scope.make())
  let solana: SolanaLocalnetShape
  let hood: StartedHoodLocalnet
  beforeAll(async () => {
    const ctx = await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ ledger: { slotMs: 20 } }), scope))
    solana = ctx.unsafeMap.get(SolanaLocalnet.key) as SolanaLocalnetShape
    hood = await startHoodLocalnet()
  }, 120_000)
  afterAll(async () => {
    await hood?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("Solana: a landed transaction is confirmed; an unknown signature is pending", async () => {
    const reconciler = chainClaimReconciler({ solanaRpcUrl: solana.rpcUrl, hood: publicClientOf(hood) })
    const rpc = createSolanaRpc(solana.rpcUrl)
    const signature = await rpc.requestAirdrop(address("11111111111111111111111111111112"), lamports(1_000_000n)).send()
    const outcome = await eventually(async () => {
      const o = await Effect.runPromise(reconciler.outcome({ claimId: "c1", chain: "solana", signature }))
      return o === "confirmed" ? o : undefined
    }, { what: "the airdrop to be confirmed", deadlineMs: 20_000, intervalMs: 20 })
    expect(outcome).toBe("confirmed")
    const unknown = getBase58Decoder().decode(new Uint8Array(64).fill(7))
    expect(await Effect.runPromise(reconciler.outcome({ claimId: "c2", chain: "solana", signature: unknown }))).toBe("pending")
  }, 60_000)

  it("Hood: success is confirmed, a reverted receipt failed, an unknown hash pending", async () => {
    const reconciler = chainClaimReconciler({ solanaRpcUrl: solana.rpcUrl, hood: publicClientOf(hood) })
    const { wallet, publicClient } = clientsFor(hood, 5)
    const ok = await wallet.sendTransaction({ to: hood.accounts[6]!.address, value: 1n, chain: hood.chain, account: wallet.account! })
    await publicClient.waitForTransactionReceipt({ hash: ok })
    expect(await Effect.runPromise(reconciler.outcome({ claimId: "h1", chain: "evm", signature: ok }))).toBe("confirmed")
    // Calldata the factory has no function for, with an explicit gas limit: mined with status 0.
    const bad = await wallet.sendTransaction({ to: hood.addresses.factory, data: "0xdeadbeef", gas: 100_000n, chain: hood.chain, account: wallet.account! })
    const receipt = await publicClient.waitForTransactionReceipt({ hash: bad })
    expect(receipt.status).toBe("reverted")
    expect(await Effect.runPromise(reconciler.outcome({ claimId: "h2", chain: "evm", signature: bad }))).toBe("failed")
    const unknown = `0x${"ab".repeat(32)}` as const
    expect(await Effect.runPromise(reconciler.outcome({ claimId: "h3", chain: "evm", signature: unknown }))).toBe("pending")
  }, 60_000)

  it("an unreachable node is unavailable, within the read deadline", async () => {
    const reconciler = chainClaimReconciler({
      solanaRpcUrl: "http://127.0.0.1:1",
      hood: hoodPublicClient(hood.chain, "http://127.0.0.1:1"),
      timeoutMs: 2_000
    })
    const sig = getBase58Decoder().decode(new Uint8Array(64).fill(9))
    expect(await Effect.runPromise(Effect.either(reconciler.outcome({ claimId: "u1", chain: "solana", signature: sig })))).toMatchObject({ _tag: "Left", left: "unavailable" })
    expect(await Effect.runPromise(Effect.either(reconciler.outcome({ claimId: "u2", chain: "evm", signature: `0x${"cd".repeat(32)}` })))).toMatchObject({
      _tag: "Left",
      left: "unavailable"
    })
  }, 30_000)
})
