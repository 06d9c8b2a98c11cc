/**
 * The embedded mode's market simulation: creators launch curves through the svc-curve program and
 * traders buy and sell them with real signed transactions over the localnet's JSON-RPC, so a
 * newcomer sees the feeds move. Seeded: the same seed makes the same decisions (what lands still
 * depends on slot timing). Some curves attract momentum and graduate; the migration keeper, not
 * the simulation, moves them to the graduated venue.
 *
 * Bounded: at most `maxActiveCurves` curves are traded at once (the oldest stops being picked),
 * one transaction is in flight at a time, and a failed send is logged at debug level and skipped.
 */
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit"
import { Duration, Effect, Random } from "effect"
import { findCurveAddresses, getBuyInstruction, getCreateCurveInstruction, getSellInstruction } from "../chain/solana/client/CurveInstructions.js"
import { decodeCurve } from "../chain/solana/program/accounts/Curve.js"
import { devSigner } from "../chain/solana/client/DevSigners.js"
import { findAssociatedTokenAddress, getCreateAssociatedTokenInstruction } from "../chain/solana/client/SplInstructions.js"
import { WSOL_MINT_ADDRESS } from "../chain/solana/program/ProgramIds.js"
import type { RpcSender } from "../chain/solana/RpcSender.js"
import { DEFAULT_STAKER_ALLOCATION_BPS, findEconomics } from "../domain/Economics.js"

export interface SimulationOptions {
  readonly seed: number
  /** Mean time between launches. */
  readonly launchEveryMs: number
  /** Mean time between trades. */
  readonly tradeEveryMs: number
  readonly maxActiveCurves: number
  /** Dev accounts used as creators and traders (indexes into the localnet's dev keys). */
  readonly accounts: number
}

export const DefaultSimulationOptions: SimulationOptions = {
  seed: 42,
  launchEveryMs: 15_000,
  tradeEveryMs: 400,
  maxActiveCurves: 12,
  accounts: 10
}

const NAMES = ["Moon", "Pepe", "Cat", "Doge", "Frog", "Rocket", "Based", "Giga", "Turbo", "Mochi", "Neko", "Orca", "Sol", "Wagmi", "Laser", "Chad"]
const SUFFIXES = ["Coin", "Inu", "AI", "Cash", "Club", "Labs", "Wif Hat", "Punk", "Bros", "Verse"]

interface SimCurve {
  readonly mint: Address
  readonly name: string
  /** Relative chance of being picked for a trade; a few curves run hot and graduate. */
  hype: number
  buys: number
  done: boolean
}

const LAMPORTS_PER_SOL = 1_000_000_000n

export const runSimulation = (sender: RpcSender, options: SimulationOptions = DefaultSimulationOptions) =>
  Effect.gen(function* () {
    const traders: KeyPairSigner[] = []
    for (let i = 0; i < options.accounts; i++) traders.push(yield* Effect.promise(() => devSigner(i)))
    const sol = findEconomics("solana", "sol")!.tiers.find((t) => t.tier === "open")!
    const curves: SimCurve[] = []
    let nextLaunchAt = 0
    let elapsedMs = 0

    const send = (label: string, payer: KeyPairSigner, run: () => Promise<string>) =>
      Effect.tryPromise(run).pipe(
        Effect.tap((signature) => Effect.logDebug(`sim ${label}`).pipe(Effect.annotateLogs({ signature, payer: payer.address }))),
        Effect.catchAll((e) => Effect.logDebug(`sim ${label} refused`, String(e)).pipe(Effect.as(undefined)))
      )

    const launch = Effect.gen(function* () {
      const creator = traders[yield* Random.nextIntBetween(0, traders.length)]!
      const name = `${NAMES[yield* Random.nextIntBetween(0, NAMES.length)]} ${SUFFIXES[yield* Random.nextIntBetween(0, SUFFIXES.length)]}`
      const symbol = name.replace(/[^A-Z]/g, "").slice(0, 5) + String(yield* Random.nextIntBetween(1, 99))
      const mint = yield* Effect.promise(() => generateKeyPairSigner())
      const hot = (yield* Random.nextIntBetween(0, 4)) === 0
      const signature = yield* send(`launch ${symbol}`, creator, async () => {
        const ix = await getCreateCurveInstruction({
          creator,
          mint,
          quoteMint: WSOL_MINT_ADDRESS,
          virtualQuoteRaw: sol.virtualQuoteRaw,
          thresholdRaw: sol.thresholdRaw,
          supplyRaw: findEconomics("solana", "sol")!.tokenSupplyRaw,
          stakerAllocationBps: Number(DEFAULT_STAKER_ALLOCATION_BPS),
          mode: "open",
          creatorFeeBps: 0,
          name,
          symbol,
          uri: `https://example.invalid/${symbol.toLowerCase()}.json`
        })
        return sender.send(creator, [ix])
      })
      if (signature === undefined) return
      curves.push({ mint: mint.address, name, hype: hot ? 8 : 1, buys: 0, done: false })
      if (curves.length > options.maxActiveCurves) curves.shift()
    })

    const pick = Effect.gen(function* () {
      const live = curves.filter((c) => !c.done)
      const total = live.reduce((s, c) => s + c.hype, 0)
      if (total === 0) return undefined
      let r = (yield* Random.next) * total
      for (const c of live) {
        r -= c.hype
        if (r <= 0) return c
      }
      return live[live.length - 1]
    })

    const trade = Effect.gen(function* () {
      const curve = yield* pick
      if (curve === undefined) return
      const trader = traders[yield* Random.nextIntBetween(0, traders.length)]!
      const buying = curve.buys < 3 || (yield* Random.next) < 0.7
      if (buying) {
        // Log-normal-ish sizes: mostly 0.05–1 SOL, sometimes several SOL; hot curves buy bigger.
        const u = yield* Random.next
        const sizeMilliSol = BigInt(Math.round(50 * Math.exp(u * 4) * curve.hype))
        const amountInRaw = (sizeMilliSol * LAMPORTS_PER_SOL) / 1000n
        const ok = yield* send(`buy ${curve.name}`, trader, async () => {
          const ata = await findAssociatedTokenAddress(trader.address, curve.mint)
          return sender.send(trader, [
            getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint: curve.mint, idempotent: true }),
            await getBuyInstruction({ trader, mint: curve.mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw, minAmountOutRaw: 0n })
          ])
        })
        if (ok !== undefined) curve.buys++
        else curve.done = yield* isComplete(curve)
      } else {
        const fraction = 0.2 + (yield* Random.next) * 0.6
        yield* send(`sell ${curve.name}`, trader, async () => {
          const ata = await findAssociatedTokenAddress(trader.address, curve.mint)
          const balance = await sender.rpc.getTokenAccountBalance(ata).send().then((r) => BigInt(r.value.amount), () => 0n)
          const amountInRaw = (balance * BigInt(Math.round(fraction * 1000))) / 1000n
          if (amountInRaw === 0n) throw new Error("nothing to sell")
          return sender.send(trader, [
            await getSellInstruction({ trader, mint: curve.mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw, minAmountOutRaw: 0n })
          ])
        })
      }
    })

    /** After a refused buy: read the curve; once it is no longer trading, stop picking it. */
    const isComplete = (curve: SimCurve) =>
      Effect.tryPromise(async () => {
        const { curve: address } = await findCurveAddresses(curve.mint)
        const info = await sender.rpc.getAccountInfo(address, { encoding: "base64" }).send()
        const data = info.value === null ? undefined : decodeCurve(Buffer.from(info.value.data[0], "base64"))
        return data !== undefined && data.lifecycle !== "trading"
      }).pipe(Effect.orElseSucceed(() => false))

    yield* Effect.logInfo("market simulation running").pipe(Effect.annotateLogs({ seed: options.seed }))
    for (;;) {
      if (elapsedMs >= nextLaunchAt) {
        yield* launch
        nextLaunchAt = elapsedMs + Math.round(options.launchEveryMs * (0.5 + (yield* Random.next)))
      }
      yield* trade
      const waitMs = Math.round(options.tradeEveryMs * (0.5 + (yield* Random.next)))
      elapsedMs += waitMs
      yield* Effect.sleep(Duration.millis(waitMs))
    }
  }).pipe(Effect.withRandom(Random.make(options.seed)))
