/**
 * Atomic launch bundles (issue 12, "Measure"): the build's latency for a 4-leg ladder (target
 * p50/p99 under 10 ms: agents must sign and submit within the blockhash's life), and build →
 * landed on the Solana localnet.
 *
 * Build: what `/launch/atomic/build` computes between its reads and its write, in process: the
 * pricing ladder (4 legs, `PricingLadder.ts`), the spend gate and holds (`SpendGate.ts`), the
 * attempt's mint key (`launchMintSigner`), the launch transaction with the tip and the four buy
 * legs assembled, compiled and serialized (`AtomicBundle.ts`), one blockhash for all. Not
 * included (no route exists yet on this branch): key auth, body decoding, the image fetch and the
 * database transaction.
 *
 * Build → landed: a localnet (`SolanaLocalnet.layer`, 400 ms slots) over its sockets: fetch the
 * blockhash over RPC, build as above, sign each leg as its client would (decode the wire, sign,
 * re-encode; the creator and four buyers are funded dev keys), `sendBundle` to the block engine,
 * then poll `getInflightBundleStatuses` until `Landed` (every 5 ms) and `getSignatureStatuses`
 * until the last buy is `confirmed` (the slot closed).
 *
 * Run: `npx tsx bench/atomicBundle.ts` (`BENCH_BUILDS`, default 2000; `BENCH_BUNDLES`, default 30).
 * Prints a markdown section; writes nothing.
 */
import {
  createNoopSigner,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
  signature as asSignature
} from "@solana/kit"
import { ManagedRuntime } from "effect"
import { devSigner } from "../src/chain/solana/client/DevSigners.js"
import type { BlockhashLifetime } from "../src/chain/solana/client/Transactions.js"
import { assembleAtomicBundle } from "../src/chain/solana/launch/AtomicBundle.js"
import { launchMintSigner } from "../src/chain/solana/launch/LaunchMint.js"
import { isLaunchPlan, planLaunch } from "../src/chain/solana/launch/LaunchTransaction.js"
import { DEFAULT_TIP_ACCOUNTS } from "../src/chain/solana/localnet/DevKeys.js"
import { SolanaLocalnet } from "../src/chain/solana/localnet/LocalnetService.js"
import { WSOL_MINT_ADDRESS } from "../src/chain/solana/program/ProgramIds.js"
import { gateBundle, holdsOf } from "../src/services/launch/atomic/SpendGate.js"
import { priceLadder } from "../src/services/launch/atomic/PricingLadder.js"
import { atomicTerms, clientSign } from "../test/support/atomicBundles.js"

const SOL = 1_000_000_000n
const BUILDS = Number(process.env["BENCH_BUILDS"] ?? 2000)
const BUNDLES = Number(process.env["BENCH_BUNDLES"] ?? 30)
const terms = atomicTerms
const secret = new Uint8Array(32).fill(7)

const pct = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
const ms = (v: number) => v.toFixed(2)

interface Parties {
  readonly creator: KeyPairSigner
  readonly buyers: ReadonlyArray<KeyPairSigner>
  readonly treasury: KeyPairSigner
  readonly tip: string
}

/** One build: ladder, gate, holds, mint key, assembled and serialized bundle. */
const build = async (p: Parties, n: number, lifetime: BlockhashLifetime) => {
  const plan = planLaunch(terms, 0n, { bps: 25n, treasury: p.treasury.address })
  if (!isLaunchPlan(plan)) throw new Error("plan")
  const amounts = [SOL / 2n + BigInt(n % 97), SOL, 2n * SOL, SOL / 3n]
  const ladder = priceLadder({ curveParams: plan.curveParams, amountsRaw: amounts, platformFeeBps: 25n, referred: n % 2 === 0 })
  if (ladder._tag !== "Priced") throw new Error("unpriced")
  const legs = ladder.legs.map((l, i) => ({ position: i, payerKind: i === 0 ? ("main" as const) : ("linked" as const), wallet: p.buyers[i]!.address, amountRaw: l.amountInRaw, feeRaw: l.platformFeeRaw }))
  const usd = (raw: bigint) => raw / 10n
  const gate = gateBundle({ keyPrefix: "benchkey", asset: "sol", spendLimits: [{ asset: "sol", maxPerTxRaw: String(10n * SOL) }], txLimit: { usdMicros: 10 ** 12, reset: "daily" }, legs, usedUsdMicros: 0, usdMicrosOf: usd, nowMs: 0 })
  if (gate._tag !== "Allowed") throw new Error("gated")
  holdsOf(legs, usd)
  const mint = await launchMintSigner(secret, { accountId: "bench", clientLaunchId: `b-${n}`, attempt: 1 })
  const bundle = await assembleAtomicBundle({
    launch: {
      payer: createNoopSigner(p.creator.address),
      mint,
      quoteMint: WSOL_MINT_ADDRESS,
      terms,
      name: "Bench Atomic",
      symbol: "BATM",
      metadataUri: "https://example.com/bench.json",
      devBuyRaw: 0n,
      platformFee: { bps: 25n, treasury: p.treasury.address },
      lifetime,
      bundleTip: { account: p.tip as never, lamports: 100_000n }
    },
    launchPlan: plan,
    legs: ladder.legs.map((l, i) => ({ buyer: createNoopSigner(p.buyers[i]!.address), amountInRaw: l.amountInRaw, minAmountOutRaw: l.minAmountOutRaw, platformFeeRaw: l.platformFeeRaw })),
    treasury: p.treasury.address,
    lifetime
  })
  return { bundle, ladder, mint }
}

const call = async (url: string, method: string, params: ReadonlyArray<unknown>) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
  return (await res.json()) as { result?: unknown; error?: { message: string } }
}

const main = async () => {
  // The build phase first, alone in the process (no localnet slot clock beside it).
  const parties: Parties = {
    creator: await devSigner(0),
    buyers: await Promise.all([1, 2, 3, 4].map((i) => devSigner(i))),
    treasury: await generateKeyPairSigner(),
    tip: DEFAULT_TIP_ACCOUNTS[0]!
  }
  const fixedLifetime = { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 1_000n }
  for (let i = 0; i < 100; i++) await build(parties, i, fixedLifetime) // warm-up
  const builds: number[] = []
  for (let i = 0; i < BUILDS; i++) {
    const t0 = performance.now()
    await build(parties, i, fixedLifetime)
    builds.push(performance.now() - t0)
  }
  builds.sort((a, b) => a - b)

  const runtime = ManagedRuntime.make(SolanaLocalnet.layer({}))
  try {
    const net = await runtime.runPromise(SolanaLocalnet)
    const onChain: Parties = { ...parties, tip: net.ledger.tipAccounts[0]! }
    const rpc = createSolanaRpc(net.rpcUrl)
    const landed: number[] = []
    const confirmed: number[] = []
    for (let i = 0; i < BUNDLES; i++) {
      const t0 = performance.now()
      const latest = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value
      const { bundle } = await build(onChain, 1_000_000 + i, { blockhash: latest.blockhash, lastValidBlockHeight: latest.lastValidBlockHeight })
      const signed = await Promise.all(bundle.legs.map((l, j) => clientSign(l.wireBase64, j === 0 ? onChain.creator : onChain.buyers[j - 1]!)))
      const sent = await call(net.blockEngineUrl, "sendBundle", [signed, { encoding: "base64", revertible: [1, 2, 3, 4] }])
      if (typeof sent.result !== "string") throw new Error(`sendBundle: ${sent.error?.message}`)
      for (;;) {
        const s = (await call(net.blockEngineUrl, "getInflightBundleStatuses", [[sent.result]])).result as { value: Array<{ status: string }> }
        if (s.value[0]!.status === "Landed") break
        if (s.value[0]!.status === "Failed") throw new Error("bundle failed")
        await new Promise((r) => setTimeout(r, 5))
      }
      landed.push(performance.now() - t0)
      const lastSig = net.ledger.getBundle(sent.result)!.signatures.at(-1)!
      for (;;) {
        const st = (await rpc.getSignatureStatuses([asSignature(lastSig)]).send()).value[0]
        if (st?.confirmationStatus === "confirmed" || st?.confirmationStatus === "finalized") break
        await new Promise((r) => setTimeout(r, 5))
      }
      confirmed.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, Math.random() * 400)) // do not phase-lock with the slot clock
    }
    landed.sort((a, b) => a - b)
    confirmed.sort((a, b) => a - b)
    console.log(`## Atomic bundles (issue 12)\n`)
    console.log(`| Measure | n | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|`)
    console.log(`| build, 4-leg ladder (in process) | ${builds.length} | ${ms(pct(builds, 50))} | ${ms(pct(builds, 99))} | ${ms(builds.at(-1)!)} |`)
    console.log(`| build → landed (engine reports Landed) | ${landed.length} | ${ms(pct(landed, 50))} | ${ms(pct(landed, 99))} | ${ms(landed.at(-1)!)} |`)
    console.log(`| build → last buy confirmed (slot closed, 400 ms slots) | ${confirmed.length} | ${ms(pct(confirmed, 50))} | ${ms(pct(confirmed, 99))} | ${ms(confirmed.at(-1)!)} |`)
  } finally {
    await runtime.dispose()
  }
}

void main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e)
    process.exit(1)
  }
)
