/**
 * The configured trade router, checked once when the Hood trade rail is built with one
 * (`HOOD_TRADE_ROUTER_ADDRESS`, or the embedded localnet's own): the address has code, and the
 * router's `factory()` and `swapRouter()` are the configured factory and SwapRouter. An address
 * with no code takes a buy's ETH and never trades (the preflight `eth_call` of a call to it
 * succeeds); a router deployed for another factory makes every trade revert (`NotACurveToken`).
 * A mismatch refuses the start (`TradeRouterConfigError` naming the variable), as a missing Hood
 * address does (`HoodConfigError`) and a node following another chain does (`ChainIdentityError`).
 *
 * Each read is bounded (`TRADE_ROUTER_CHECK_TIMEOUT`: a read that hangs is interrupted at it) and
 * a node that does not answer is retried on the chain identity's start-up schedule (10 retries,
 * 21 s of pauses: one read gives up after at most `TRADE_ROUTER_READ_BOUND`, 76 s); the whole check
 * (up to three reads, one after the other) gives up at `TRADE_ROUTER_CHECK_DEADLINE` (80 s), so a
 * node that answers each read only on its last retry cannot hold the start for three read bounds.
 * A revert is an answer (not a router) and is not retried. The decision on what was read is
 * `tradeRouterMismatch`.
 */
import { Duration, Effect, Schedule, Schema } from "effect"
import { type Address, BaseError, ContractFunctionZeroDataError, getAddress, type Hex, type PublicClient } from "viem"
import { tradeRouterAbi } from "./abi.generated.js"
import { isRevert } from "./client/HoodSender.js"

/** Every read of the check answers within this, or counts as the node not answering. */
export const TRADE_ROUTER_CHECK_TIMEOUT = Duration.seconds(5)
/** Retries of a read the node did not answer (21 s of pauses with `retrySchedule`). */
export const TRADE_ROUTER_CHECK_RETRIES = 10
/** Pauses between tries: exponential from 200 ms, at most 3 s apart (the chain identity read's). */
const retrySchedule = Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("3 seconds")))
/**
 * The longest one read takes before it fails `unreachable`: 11 tries of `TRADE_ROUTER_CHECK_TIMEOUT`
 * and the 10 pauses between them (0.2 + 0.4 + 0.8 + 1.6 + 6 × 3 s).
 */
export const TRADE_ROUTER_READ_BOUND = Duration.sum(Duration.times(TRADE_ROUTER_CHECK_TIMEOUT, TRADE_ROUTER_CHECK_RETRIES + 1), Duration.millis(21_000))
/** The whole check's bound: past it the start fails `unreachable`, whatever read it was on. */
export const TRADE_ROUTER_CHECK_DEADLINE = Duration.seconds(80)

export class TradeRouterConfigError extends Schema.TaggedError<TradeRouterConfigError>()("TradeRouterConfigError", {
  reason: Schema.Literal("mismatch", "unreachable"),
  message: Schema.String
}) {}

export interface TradeRouterExpected {
  readonly tradeRouter: Address
  readonly factory: Address
  readonly swapRouter: Address
}

/** What the node says of the configured address: its code, and the router's two immutables (undefined: the call reverted, not a router). */
export interface TradeRouterFacts {
  readonly code: Hex | undefined
  readonly factory: Address | undefined
  readonly swapRouter: Address | undefined
}

const VAR = "HOOD_TRADE_ROUTER_ADDRESS"

/** Why the configured trade router cannot serve this deployment, or undefined when it can. Pure. */
export const tradeRouterMismatch = (expected: TradeRouterExpected, facts: TradeRouterFacts): string | undefined => {
  if (facts.code === undefined || facts.code === "0x") return `${VAR} (${expected.tradeRouter}) has no contract code on the Hood node`
  if (facts.factory === undefined || facts.swapRouter === undefined) return `${VAR} (${expected.tradeRouter}) is not a TradeRouter: its factory() or swapRouter() call reverted`
  if (getAddress(facts.factory) !== getAddress(expected.factory)) {
    return `${VAR} (${expected.tradeRouter}) routes for the factory ${getAddress(facts.factory)}, not HOOD_FACTORY_ADDRESS (${getAddress(expected.factory)})`
  }
  if (getAddress(facts.swapRouter) !== getAddress(expected.swapRouter)) {
    return `${VAR} (${expected.tradeRouter}) swaps through ${getAddress(facts.swapRouter)}, not HOOD_SWAP_ROUTER_ADDRESS (${getAddress(expected.swapRouter)})`
  }
  return undefined
}

const unanswered = (what: string, e: unknown) =>
  new TradeRouterConfigError({ reason: "unreachable", message: `cannot check ${VAR}: the Hood node did not answer ${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` })

/** An answer that says "not this contract": the call reverted, or returned nothing (no such function, a fallback). */
const notThisContract = (e: unknown): boolean => isRevert(e) || (e instanceof BaseError && e.walk((x) => x instanceof ContractFunctionZeroDataError) !== null)

/** One bounded read, retried while the node does not answer; a revert is `undefined` (an answer). */
const bounded = <A>(what: string, f: () => Promise<A>): Effect.Effect<A | undefined, TradeRouterConfigError> =>
  Effect.tryPromise({ try: f, catch: (e) => e }).pipe(
    Effect.timeoutFail({ duration: TRADE_ROUTER_CHECK_TIMEOUT, onTimeout: () => new Error(`no answer within ${Duration.format(TRADE_ROUTER_CHECK_TIMEOUT)}`) }),
    Effect.catchAll((e) => (notThisContract(e) ? Effect.succeed(undefined) : Effect.fail(unanswered(what, e)))),
    Effect.retry({ schedule: retrySchedule, times: TRADE_ROUTER_CHECK_RETRIES })
  )

/** Reads the facts and refuses a router that cannot serve this deployment (see the module comment). */
export const checkTradeRouter = (client: PublicClient, expected: TradeRouterExpected): Effect.Effect<void, TradeRouterConfigError> =>
  Effect.gen(function* () {
    const code = yield* bounded("eth_getCode", () => client.getCode({ address: expected.tradeRouter }))
    const hasCode = code !== undefined && code !== "0x"
    const [factory, swapRouter] = hasCode
      ? yield* Effect.all([
          bounded("factory()", () => client.readContract({ address: expected.tradeRouter, abi: tradeRouterAbi, functionName: "factory" })),
          bounded("swapRouter()", () => client.readContract({ address: expected.tradeRouter, abi: tradeRouterAbi, functionName: "swapRouter" }))
        ])
      : [undefined, undefined]
    const mismatch = tradeRouterMismatch(expected, { code, factory, swapRouter })
    if (mismatch !== undefined) return yield* new TradeRouterConfigError({ reason: "mismatch", message: `${mismatch}; refusing to start the Hood trade rail` })
  }).pipe(
    Effect.timeoutFail({
      duration: TRADE_ROUTER_CHECK_DEADLINE,
      onTimeout: () =>
        new TradeRouterConfigError({ reason: "unreachable", message: `cannot check ${VAR}: the Hood node did not answer its reads within ${Duration.format(TRADE_ROUTER_CHECK_DEADLINE)}` })
    })
  )
