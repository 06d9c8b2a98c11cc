/**
 * Crash and restart: the chain runs in its own process (the standalone localnet), the engine is
 * killed with SIGKILL while trades stream in, more trades land while it is down, and a new engine
 * on the same data dir catches up. The market must end exactly where the chain is: every trade
 * counted once, none missed, reserves equal to the curve account's.
 */
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findCurveAddresses, getBuyInstruction, getCreateCurveInstruction, getSellInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { findAssociatedTokenAddress, getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { decodeCurve } from "../../src/chain/solana/program/accounts/Curve.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { makeRpcSender, type RpcSender } from "../../src/chain/solana/RpcSender.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { ingestionCaughtUp } from "../support/ingestion.js"
import { solanaEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"
import { publicReads } from "../support/typedReads.js"

let chain: Standalone<StandaloneSolana>
let localnet: StandaloneSolana
let sender: RpcSender
const engines: Engine[] = []

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100" })
  localnet = chain.info
  sender = makeRpcSender(localnet.rpcUrl, { blockhashTtlMs: 0 })
}, 60_000)

afterAll(async () => {
  for (const e of engines) {
    await e.stop("SIGKILL")
  }
  engines[0]?.cleanup()
  chain?.stop()
})

const env = () => solanaEnv(localnet)

const market = async (engine: Engine, mint: string) => {
  const res = await publicReads(() => engine.url).market("solana", mint)
  return res.status === 200 ? (res.body.market as Record<string, any>) : undefined
}

describe("crash and restart", () => {
  it("reproduces the chain's state after SIGKILL mid-stream", async () => {
    const sol = findEconomics("solana", "sol")!
    const open = sol.tiers.find((t) => t.tier === "open")!
    const creator = await devSigner(1)
    const traders: KeyPairSigner[] = await Promise.all([2, 3, 4].map((i) => devSigner(i)))
    const mint = await generateKeyPairSigner()
    await sender.send(creator, [
      await getCreateCurveInstruction({
        creator, mint, quoteMint: WSOL_MINT_ADDRESS, virtualQuoteRaw: open.virtualQuoteRaw, thresholdRaw: open.thresholdRaw,
        supplyRaw: sol.tokenSupplyRaw, stakerAllocationBps: 50, mode: "open", creatorFeeBps: 0, name: "Restart", symbol: "RST", uri: ""
      })
    ])

    let landed = 0
    let lastSignature = ""
    const trade = async (i: number) => {
      const trader = traders[i % traders.length]!
      const ata = await findAssociatedTokenAddress(trader.address, mint.address)
      if (i % 5 === 4) {
        const balance = BigInt((await sender.rpc.getTokenAccountBalance(ata, { commitment: "processed" }).send()).value.amount)
        lastSignature = await sender.send(trader, [await getSellInstruction({ trader, mint: mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: balance / 3n, minAmountOutRaw: 0n })])
      } else {
        lastSignature = await sender.send(trader, [
          getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint: mint.address, idempotent: true }),
          await getBuyInstruction({ trader, mint: mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: 100_000_000n + BigInt(i) * 7_777_777n, minAmountOutRaw: 0n })
        ])
      }
      landed++
      await new Promise((r) => setTimeout(r, 40))
    }

    const first = await startEngine({ args: ["--quiet"], env: env() })
    engines.push(first)
    for (let i = 0; i < 15; i++) await trade(i)
    // Kill while the engine is ingesting: trades are landing right now.
    const inFlight = (async () => {
      for (let i = 15; i < 25; i++) await trade(i)
    })()
    await new Promise((r) => setTimeout(r, 150))
    await first.stop("SIGKILL")
    await inFlight
    for (let i = 25; i < 40; i++) await trade(i) // while the engine is down

    const second = await startEngine({ args: ["--quiet"], env: env(), dataDir: first.dataDir })
    engines.push(second)
    await eventually(async () => ((await market(second, mint.address))?.tradesTotal ?? 0) >= landed, {
      what: `the restarted engine to count ${landed} trades`,
      deadlineMs: 30_000,
      intervalMs: 100,
      detail: () => second.output().slice(-3000)
    })
    // The receipt before judging: the ingester has published past the last trade's slot and the
    // actors hold no backlog, so anything redelivered (a duplicate) has been applied by now.
    const lastSlot = (await sender.rpc.getSignatureStatuses([lastSignature as never]).send()).value[0]?.slot ?? 0n
    await ingestionCaughtUp(second, ["solana"], { atLeast: { solana: BigInt(lastSlot) } })
    const record = await market(second, mint.address)

    const curveAccount = await sender.rpc.getAccountInfo((await findCurveAddresses(mint.address)).curve, { encoding: "base64", commitment: "confirmed" }).send()
    const curve = decodeCurve(Buffer.from(curveAccount.value!.data[0], "base64"))!
    expect(landed).toBe(40)
    expect(record?.tradesTotal).toBe(40)
    expect(Number(curve.buyCount + curve.sellCount)).toBe(40)
    expect(record?.migration.reserveRaw).toBe(curve.realQuoteRaw.toString())
    expect(record?.lifecycle).toBe("trading")
  }, 180_000)
})
