/**
 * The signal detectors as the sharded runtime sees them (actors/runtime/ShardedRuntime.ts): two
 * `ActorDefinition`s over `chain.events`, plus the mention detector for the social source.
 *
 * - `tokenSignalsDefinition`: key `chain:mint` (the bus key, so per-token order is the chain's);
 *   confluence, deployer trades, large_move, token dormancy, intra_book, distribution.
 * - `chainSignalsDefinition`: key = the chain; new_ticker, deployer relaunches, tracked-wallet
 *   dormancy. Run it in its own runtime (one key per chain: one shard does the work).
 * - `KolMentionDetectors` (KolMention.ts): kol_mention, stepped by the social source's wiring.
 *
 * Outputs are `Signal`s; the wiring hands them to `SignalWriter` and the stream.
 */
import type { Either } from "effect"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { decodeChainEvent } from "../../ingest/ChainEventCodec.js"
import type { ActorDefinition } from "../runtime/ShardedRuntime.js"
import { chainKey, chainPositionOf, type ChainSignalState, decodeChainState, encodeChainState, makeChainSignalsStep } from "./ChainSignals.js"
import { decodeJson, encodeJson } from "./internal/json.js"
import type { Signal } from "../../src/domain/Signal.js"
import { defaultSignalConfig, type SignalConfig, type SignalInputs } from "./SignalConfig.js"
import { makeTokenSignalsStep, tokenKey, tokenPositionOf, type TokenSignalState } from "./TokenSignals.js"

export const TOKEN_SIGNALS_OWNER = "signals.token"
export const CHAIN_SIGNALS_OWNER = "signals.chain"

export const encodeTokenState = (s: TokenSignalState): string => encodeJson({ v: 1, s })

export const decodeTokenState = (text: string): TokenSignalState => {
  const o = decodeJson(text) as { v?: unknown; s?: TokenSignalState }
  if (o === null || typeof o !== "object" || o.v !== 1 || typeof o.s?.mint !== "string") throw new TypeError("not a TokenSignals state")
  return o.s
}

const describeSignal = (s: Signal) => ({ level: "info" as const, message: `signal ${s.pattern} ${s.chain}:${s.asset} ${s.id} (${s.quality})` })

export const tokenSignalsDefinition = (
  inputs: SignalInputs,
  config: SignalConfig = defaultSignalConfig,
  decode: (bytes: Uint8Array) => Either.Either<ChainEvent, unknown> = decodeChainEvent
): ActorDefinition<TokenSignalState, ChainEvent, Signal> => ({
  owner: TOKEN_SIGNALS_OWNER,
  decode,
  keyOf: (e) => tokenKey(e.chain, e.mint),
  eventId: (e) => e.id,
  step: makeTokenSignalsStep(config, inputs),
  positionOf: tokenPositionOf,
  encodeState: encodeTokenState,
  decodeState: decodeTokenState,
  describeOutput: describeSignal
})

export const chainSignalsDefinition = (
  inputs: SignalInputs,
  config: SignalConfig = defaultSignalConfig,
  decode: (bytes: Uint8Array) => Either.Either<ChainEvent, unknown> = decodeChainEvent
): ActorDefinition<ChainSignalState, ChainEvent, Signal> => ({
  owner: CHAIN_SIGNALS_OWNER,
  decode,
  keyOf: (e) => chainKey(e.chain),
  eventId: (e) => e.id,
  step: makeChainSignalsStep(config, inputs),
  positionOf: chainPositionOf,
  encodeState: encodeChainState,
  decodeState: decodeChainState,
  describeOutput: describeSignal
})

/**
 * Runs both chain-event detectors over events in memory, in the given order (tests, replays,
 * the strategy lab): per-token and per-chain states in plain maps, signals in emission order.
 */
export class SignalReplay {
  private readonly tokenStep: ReturnType<typeof makeTokenSignalsStep>
  private readonly chainStep: ReturnType<typeof makeChainSignalsStep>
  readonly tokens = new Map<string, TokenSignalState>()
  readonly chains = new Map<string, ChainSignalState>()

  constructor(inputs: SignalInputs, config: SignalConfig = defaultSignalConfig) {
    this.tokenStep = makeTokenSignalsStep(config, inputs)
    this.chainStep = makeChainSignalsStep(config, inputs)
  }

  apply(event: ChainEvent): ReadonlyArray<Signal> {
    const tk = tokenKey(event.chain, event.mint)
    const [token, a] = this.tokenStep(this.tokens.get(tk), event)
    if (token !== undefined) this.tokens.set(tk, token)
    const ck = chainKey(event.chain)
    const [chain, b] = this.chainStep(this.chains.get(ck), event)
    if (chain !== undefined) this.chains.set(ck, chain)
    return a.length === 0 ? b : b.length === 0 ? a : [...a, ...b]
  }

  applyAll(events: Iterable<ChainEvent>): Array<Signal> {
    const out: Array<Signal> = []
    for (const e of events) out.push(...this.apply(e))
    return out
  }
}
