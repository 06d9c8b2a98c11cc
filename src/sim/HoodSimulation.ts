/**
 * The embedded mode's Hood market simulation, beside the Solana one (`MarketSimulation.ts`):
 * creators launch curves through the real `CurveFactory` (ETH and USDG quotes, `dex-evm-v3` and
 * `dex-evm-v4` launches) and traders (the localnet's dev accounts #4..#19) buy and sell them with
 * real signed transactions over the node's JSON-RPC (viem), so the Hood feeds move too.
 *
 * Seeded: every choice (who launches, what, which curve, who trades, buy or sell, how much) comes
 * from `Random.make(seed)`, and CREATE2 salts are derived from the seed, so on the same chain state
 * the same seed sends the same transactions (a test replays it after a snapshot revert).
 *
 * Market shape: a share of launches run "hot" (`hotShare`): they are picked more often, buy bigger
 * and, once past `pushAtProgressBps`, get a crossing buy larger than what the curve still takes, so
 * the curve completes with a capped-refund crossing (refund returned in the same transaction). The
 * engine's migration keeper, not the simulation, then seeds the Uniswap pool. Other curves drift
 * up slowly with small buys and sells of 20–80 % of a holder's balance.
 *
 * Bounded: at most `maxActiveCurves` curves are traded (a completed curve leaves the set at once;
 * past the bound the oldest stops being picked), one transaction is in flight at a time, and the
 * pace between actions is `tradeEveryMs` (±50 %). A refused or failed transaction is logged at
 * debug level and skipped, never fatal; a refused buy on a curve that is no longer trading (e.g.
 * someone else completed it) drops that curve. The effect runs until interrupted (or
 * `maxActions`, for tests).
 */
import { Cause, Duration, Effect, Random } from "effect"
import { type Address, type Chain, getAddress, type Hex, maxUint256, type PublicClient, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { bondingCurveAbi } from "../chain/hood/abi.generated.js"
import {
  approve,
  buy,
  createCurve,
  type HoodWallet,
  hoodPublicClient,
  hoodWallet,
  revertName,
  saltOf,
  sell,
  tokenBalance
} from "../chain/hood/client/HoodClient.js"
import type { DexVersion } from "../chain/hood/client/ConfigHash.js"
import type { HoodLocalnetShape } from "../chain/hood/localnet/LocalnetService.js"
import { BPS, ceilDiv } from "../domain/CurveMath.js"
import { DEFAULT_STAKER_ALLOCATION_BPS, findEconomics } from "../domain/Economics.js"
import { USDG_ADDRESS } from "../domain/QuotePairs.js"

export interface HoodSimulationOptions {
  readonly seed: number
  /** Mean time between launches (the first launch is immediate). */
  readonly launchEveryMs: number
  /** Mean pause between actions (one trade per action). */
  readonly tradeEveryMs: number
  /** At most this many curves are traded at once. */
  readonly maxActiveCurves: number
  /** Share of launches (0..1) that run hot and are pushed across the threshold. */
  readonly hotShare: number
  /** Share of launches (0..1) quoted in USDG; the rest in ETH. */
  readonly usdgShare: number
  /** Share of launches (0..1) recorded as `dex-evm-v4`; the rest `dex-evm-v3`. */
  readonly v4Share: number
  /** A hot curve gets its crossing buy once its progress reaches this (bps of the threshold). */
  readonly pushAtProgressBps: number
  /** Stop after this many actions (tests); undefined = run until interrupted. */
  readonly maxActions?: number
}

export const DefaultHoodSimulationOptions: HoodSimulationOptions = {
  seed: 42,
  launchEveryMs: 20_000,
  tradeEveryMs: 700,
  maxActiveCurves: 8,
  hotShare: 0.25,
  usdgShare: 0.35,
  v4Share: 0.35,
  pushAtProgressBps: 6_000
}

/** What the simulation sends with: a public client and one wallet per trading account. */
export interface HoodSimulationClients {
  readonly publicClient: PublicClient
  /** Creators and traders (dev accounts #4..#19 on the localnet). */
  readonly traders: ReadonlyArray<HoodWallet>
  readonly addresses: { readonly factory: Address; readonly usdg: Address }
}

/** Where the simulation runs: the shape `HoodEndpoints` gives in embedded mode (or built from a `HoodLocalnet`). */
export interface HoodSimulationTarget {
  readonly chain: Chain
  readonly rpcUrl: string
  /** The dev trader keys (#4..#19 on the localnet). */
  readonly traderKeys: ReadonlyArray<Hex>
  readonly addresses: { readonly factory: Address; readonly usdg?: Address }
}

/** Public client and one wallet per trader key over the node's JSON-RPC; USDG defaults to the localnet's. */
export const hoodSimulationClients = (target: HoodSimulationTarget): HoodSimulationClients => ({
  publicClient: hoodPublicClient(target.chain, target.rpcUrl),
  traders: target.traderKeys.map((key) => hoodWallet(target.chain, privateKeyToAccount(key), target.rpcUrl)),
  addresses: { factory: getAddress(target.addresses.factory), usdg: getAddress(target.addresses.usdg ?? USDG_ADDRESS) }
})

/** The target of a running `HoodLocalnet` (its traders #4..#19). */
export const hoodLocalnetTarget = (localnet: Pick<HoodLocalnetShape, "chain" | "rpcUrl" | "roles" | "addresses">): HoodSimulationTarget => ({
  chain: localnet.chain,
  rpcUrl: localnet.rpcUrl,
  traderKeys: localnet.roles.traders.map((t) => t.privateKey),
  addresses: localnet.addresses
})

const NAMES = ["Moon", "Pepe", "Cat", "Doge", "Frog", "Rocket", "Based", "Giga", "Turbo", "Mochi", "Neko", "Orca", "Hood", "Wagmi", "Laser", "Chad"]
const SUFFIXES = ["Coin", "Inu", "AI", "Cash", "Club", "Labs", "Wif Hat", "Punk", "Bros", "Verse"]

export interface HoodSimCurve {
  readonly curve: Address
  readonly token: Address
  readonly symbol: string
  readonly quoteToken: Address
  readonly thresholdRaw: bigint
  readonly feeBps: bigint
  readonly hot: boolean
  /** Quote raised so far (net of fees), from the latest Trade event the simulation saw. */
  realQuoteRaw: bigint
  buys: number
  /** Trader indexes that bought it (sellers are picked among them). */
  readonly holders: Set<number>
  done: boolean
}

/**
 * The traded set after a launch: completed curves leave, the new one joins, and past `max` the
 * oldest stop being traded. Every curve kept is one of the `max` most recent curves not completed.
 */
export const admitCurve = <C extends { readonly done: boolean }>(curves: ReadonlyArray<C>, added: C, max: number): Array<C> => {
  const next = [...curves.filter((c) => !c.done), added]
  while (next.length > Math.max(1, max)) next.shift()
  return next
}

/** Gross quote a buy must spend to take everything the curve still accepts (fee included). */
export const grossToComplete = (thresholdRaw: bigint, realQuoteRaw: bigint, feeBps: bigint): bigint => {
  const remaining = thresholdRaw > realQuoteRaw ? thresholdRaw - realQuoteRaw : 0n
  return ceilDiv(remaining * BPS, BPS - feeBps)
}

const describe = (e: unknown): string => {
  const name = revertName(e)
  if (name !== undefined) return name
  if (e instanceof Error) return (e as { shortMessage?: string }).shortMessage ?? e.message
  return String(e)
}

/** Parts per million of `raw`. */
const ppm = (raw: bigint, partsPerMillion: number): bigint => (raw * BigInt(Math.max(0, Math.round(partsPerMillion)))) / 1_000_000n

export const runHoodSimulation = (clients: HoodSimulationClients, options: HoodSimulationOptions = DefaultHoodSimulationOptions) =>
  Effect.gen(function* () {
    const { publicClient, traders } = clients
    if (traders.length === 0) return yield* Effect.logWarning("hood simulation not running: no trader accounts")
    const eth = findEconomics("hood", "eth")!.tiers.find((t) => t.tier === "open")!
    const usdg = findEconomics("hood", "usdg")!.tiers.find((t) => t.tier === "open")!
    const usdgAddress = getAddress(clients.addresses.usdg)
    const clientsOf = (i: number) => ({ publicClient, wallet: traders[i]! })
    /** `${trader}:${token}:${spender}` pairs already approved (max allowance). */
    const approved = new Set<string>()
    // The chain head at start goes into the salts: the same seed on a chain that already holds this
    // run's curves (same creators, same salts) would otherwise revert every launch.
    const startBlock = yield* Effect.tryPromise(() => publicClient.getBlockNumber()).pipe(Effect.orElseSucceed(() => 0n))
    let curves: Array<HoodSimCurve> = []
    let launches = 0
    let nextLaunchAt = 0
    let elapsedMs = 0

    /**
     * Runs one chain call; a refusal or failure is logged and becomes undefined. Uninterruptible:
     * a started call's promise cannot be cancelled (its transaction may still land), so
     * interrupting the simulation waits for it, and once the interrupt returns nothing more lands.
     */
    const attempt = <A>(label: string, run: () => Promise<A>) =>
      Effect.uninterruptible(Effect.tryPromise({ try: run, catch: (e) => e })).pipe(
        Effect.catchAll((e) => Effect.logDebug(`hood sim ${label} refused`).pipe(Effect.annotateLogs({ reason: describe(e) }), Effect.as(undefined)))
      )

    const ensureApproved = async (trader: number, token: Address, spender: Address) => {
      const key = `${trader}:${token}:${spender}`
      if (approved.has(key)) return
      await approve(clientsOf(trader), token, spender, maxUint256)
      approved.add(key)
    }

    const stillTrading = (c: HoodSimCurve) =>
      Effect.tryPromise(() => publicClient.readContract({ address: c.curve, abi: bondingCurveAbi, functionName: "phase" })).pipe(
        Effect.map((phase) => Number(phase) === 0),
        Effect.orElseSucceed(() => true)
      )

    const markDone = (c: HoodSimCurve, how: string) =>
      Effect.suspend(() => {
        c.done = true
        curves = curves.filter((x) => x !== c)
        return Effect.logDebug(`hood sim ${c.symbol} ${how}`).pipe(Effect.annotateLogs({ curve: c.curve }))
      })

    const launch = Effect.gen(function* () {
      const creator = yield* Random.nextIntBetween(0, traders.length)
      const base = NAMES[yield* Random.nextIntBetween(0, NAMES.length)]!
      const suffix = SUFFIXES[yield* Random.nextIntBetween(0, SUFFIXES.length)]!
      const name = `${base} ${suffix}`
      const symbol = (base.slice(0, 3) + suffix.replace(/[^A-Z]/g, "")).toUpperCase().slice(0, 6) + String(yield* Random.nextIntBetween(1, 100))
      const inUsdg = (yield* Random.next) < options.usdgShare
      const dexVersion: DexVersion = (yield* Random.next) < options.v4Share ? "v4" : "v3"
      const hot = (yield* Random.next) < options.hotShare
      const tier = inUsdg ? usdg : eth
      const quoteToken = inUsdg ? usdgAddress : zeroAddress
      const n = launches++
      const created = yield* attempt(`launch ${symbol}`, () =>
        createCurve(clientsOf(creator), clients.addresses.factory, {
          name,
          symbol,
          uri: `https://example.invalid/hood/${symbol.toLowerCase()}.json`,
          quoteToken,
          virtualQuoteRaw: tier.virtualQuoteRaw,
          thresholdRaw: tier.thresholdRaw,
          stakerAllocationBps: Number(DEFAULT_STAKER_ALLOCATION_BPS),
          dexVersion,
          salt: saltOf(`hood-sim:${options.seed}:${startBlock}:${n}`)
        })
      )
      if (created === undefined) return
      const curve: HoodSimCurve = {
        curve: created.curve,
        token: created.token,
        symbol,
        quoteToken,
        thresholdRaw: created.event.graduationThreshold,
        feeBps: BigInt(created.event.feeBps),
        hot,
        realQuoteRaw: 0n,
        buys: 0,
        holders: new Set(),
        done: false
      }
      curves = admitCurve(curves, curve, options.maxActiveCurves)
      yield* Effect.logDebug(`hood sim launched ${symbol}`).pipe(
        Effect.annotateLogs({ curve: created.curve, token: created.token, quote: inUsdg ? "usdg" : "eth", dexVersion, hot })
      )
    })

    /** A curve weighted by its hype (hot curves draw most of the flow). */
    const pick = Effect.gen(function* () {
      const weight = (c: HoodSimCurve) => (c.hot ? 6 : 1)
      const total = curves.reduce((s, c) => s + weight(c), 0)
      if (total === 0) return undefined
      let r = (yield* Random.next) * total
      for (const c of curves) {
        r -= weight(c)
        if (r <= 0) return c
      }
      return curves[curves.length - 1]
    })

    const buyOn = (c: HoodSimCurve) =>
      Effect.gen(function* () {
        const trader = yield* Random.nextIntBetween(0, traders.length)
        const u = yield* Random.next
        const toComplete = grossToComplete(c.thresholdRaw, c.realQuoteRaw, c.feeBps)
        const progress = c.thresholdRaw === 0n ? 0n : (c.realQuoteRaw * BPS) / c.thresholdRaw
        const push = c.hot && progress >= BigInt(options.pushAtProgressBps)
        // Sizes relative to the threshold: normal buys 0.05 %–3 % of it (mostly small), hot ones
        // 0.4 %–22 %; the push spends 10–60 % more than the curve takes, so the refund is real.
        const amountInRaw = push
          ? toComplete + ppm(toComplete, 100_000 + u * 500_000) + 1n
          : ppm(c.thresholdRaw, (c.hot ? 4_000 : 500) * Math.exp(u * 4))
        if (amountInRaw === 0n) return
        const label = `${push ? "push" : "buy"} ${c.symbol}`
        const result = yield* attempt(label, async () => {
          if (c.quoteToken !== zeroAddress) await ensureApproved(trader, c.quoteToken, c.curve)
          return buy(clientsOf(trader), c.curve, { amountInRaw, quoteToken: c.quoteToken })
        })
        if (result === undefined) {
          if (!(yield* stillTrading(c))) yield* markDone(c, "no longer trades")
          return
        }
        c.buys++
        c.holders.add(trader)
        c.realQuoteRaw = result.trade.realQuote
        if (result.trade.crossesGraduation || result.completed !== undefined) {
          yield* markDone(c, "completed").pipe(
            Effect.annotateLogs({ refund: result.trade.refund.toString(), quoteConsumed: result.trade.quoteConsumed.toString() })
          )
        }
      })

    const sellOn = (c: HoodSimCurve) =>
      Effect.gen(function* () {
        const holders = [...c.holders]
        const trader = holders[yield* Random.nextIntBetween(0, holders.length)]!
        const fractionPpm = 200_000 + (yield* Random.next) * 600_000
        const result = yield* attempt(`sell ${c.symbol}`, async () => {
          const balance = await tokenBalance(publicClient, c.token, traders[trader]!.account.address)
          const tokensIn = ppm(balance, fractionPpm)
          if (tokensIn === 0n) {
            c.holders.delete(trader)
            return undefined
          }
          await ensureApproved(trader, c.token, c.curve)
          return sell(clientsOf(trader), c.curve, tokensIn)
        })
        if (result === undefined) {
          if (!(yield* stillTrading(c))) yield* markDone(c, "no longer trades")
          return
        }
        c.realQuoteRaw = result.trade.realQuote
      })

    const trade = Effect.gen(function* () {
      const c = yield* pick
      if (c === undefined) return
      const selling = c.holders.size > 0 && c.buys >= 3 && (yield* Random.next) < (c.hot ? 0.15 : 0.4)
      yield* selling ? sellOn(c) : buyOn(c)
    })

    /** One step never ends the simulation: an unexpected failure or defect is logged and skipped. */
    const guarded = <A, E, R>(step: Effect.Effect<A, E, R>) =>
      step.pipe(
        Effect.asVoid,
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logWarning("hood sim step failed", Cause.pretty(cause))
        )
      )

    yield* Effect.logInfo("hood market simulation running").pipe(Effect.annotateLogs({ seed: options.seed }))
    for (let actions = 0; options.maxActions === undefined || actions < options.maxActions; actions++) {
      if (elapsedMs >= nextLaunchAt) {
        yield* guarded(launch)
        nextLaunchAt = elapsedMs + Math.round(options.launchEveryMs * (0.5 + (yield* Random.next)))
      }
      yield* guarded(trade)
      const waitMs = Math.round(options.tradeEveryMs * (0.5 + (yield* Random.next)))
      elapsedMs += waitMs
      yield* Effect.sleep(Duration.millis(waitMs))
    }
  }).pipe(Effect.withRandom(Random.make(options.seed)))
