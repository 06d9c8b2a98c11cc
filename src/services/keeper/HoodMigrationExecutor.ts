/**
 * The keeper's Hood side: the curve's `migrate()` (keeper only) sent by the keeper account through
 * viem to the Hood node, which seeds the Uniswap v3 pool at the curve's final price in one
 * transaction; and, once the retry budget is spent on a migration the chain keeps refusing
 * (`PoolPriceMismatch`: someone opened the pool at another price first, so no pool will open at
 * the curve's), `cancelMigration()`, which puts the curve in recovery (spec 2.9, 3.6).
 *
 * Each send waits for its receipt: viem estimates first, so a refusal surfaces as the contract's
 * custom error before anything is mined, and a mined revert is a failure too. An attempt on a
 * curve the chain already shows migrated succeeds without sending (the keeper's re-check after a
 * send it has not yet seen ingested); one already in recovery is `MigrationBlocked`.
 *
 * Progress positions (see MigrationKeeper.ts): `h:<block>:999999:<seq>`, where `<block>` is the
 * block of the market's last applied event. That sorts after every log of that block (so after
 * the completion the keeper reacts to) and before any log of a later block, where the migrate or
 * cancel it announces can only land — independent of how far the ingester lags the head, so a
 * progress event can never be ordered after a migration the ingester has not published yet.
 * `<seq>` grows per mint so the several events of one attempt stay strictly ordered; the per-mint
 * memory holds at most `POSITION_MEMORY_MAX` mints (oldest forgotten; the market's own last
 * position then takes over).
 */
import { Effect } from "effect"
import type { Address, PublicClient } from "viem"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { bondingCurveAbi } from "../../chain/hood/abi.generated.js"
import { cancelMigration, type HoodClients, migrate, revertName } from "../../chain/hood/client/HoodClient.js"
import { MigrationBlocked, type MigrationExecutor } from "./MigrationKeeper.js"

export const POSITION_MEMORY_MAX = 4_096
const KEEPER_LOG_INDEX = "999999"
const SEQ_MAX = 9_999

/** Refusals the chain will repeat on every attempt: the pool exists at another price. */
const BLOCKING_ERRORS = new Set(["PoolPriceMismatch"])

const describe = (e: unknown): string => {
  const name = revertName(e)
  if (name !== undefined) return name
  if (e instanceof Error) return (e as { shortMessage?: string }).shortMessage ?? e.message
  return String(e)
}

const PHASE_MIGRATED = 2
const PHASE_RECOVERY = 3

const curvePhase = (pc: PublicClient, curve: Address): Promise<number> =>
  pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "curveState" }).then((s) => Number(s[0]))

/** The next keeper position after `after` (a Hood position), in its block. */
export const nextKeeperPosition = (after: string): string => {
  const [, block, logIndex, seq] = after.split(":")
  if (block === undefined || logIndex === undefined) throw new RangeError(`not a Hood position: ${after}`)
  if (logIndex !== KEEPER_LOG_INDEX) return `h:${block}:${KEEPER_LOG_INDEX}:0001`
  const n = Math.min(SEQ_MAX, Number(seq ?? "0") + 1)
  return `h:${block}:${KEEPER_LOG_INDEX}:${String(n).padStart(4, "0")}`
}

export interface HoodMigrationExecutorOptions {
  /** Public and wallet clients; the wallet's account must be the factory's keeper. */
  readonly clients: HoodClients
  /** Receipt wait of one send (default 60 s; the keeper's own send deadline also applies). */
  readonly receiptTimeoutMs?: number
}

export const hoodMigrationExecutor = (options: HoodMigrationExecutorOptions): MigrationExecutor => {
  const { clients } = options
  const issued = new Map<string, string>()

  const position = (core: MarketCore): string => {
    const last = issued.get(core.mint)
    const base = last !== undefined && last > core.lastPosition ? last : core.lastPosition
    const next = nextKeeperPosition(base)
    issued.delete(core.mint)
    if (issued.size >= POSITION_MEMORY_MAX) {
      const oldest = issued.keys().next()
      if (oldest.done !== true) issued.delete(oldest.value)
    }
    issued.set(core.mint, next)
    return next
  }

  return {
    chain: "hood",
    progressPosition: (_attempt, core) => Effect.try({ try: () => position(core), catch: describe }),
    migrate: (core) =>
      Effect.gen(function* () {
        const curve = core.identity.curveAddress as Address
        const phase = yield* Effect.tryPromise({ try: () => curvePhase(clients.publicClient, curve), catch: describe })
        if (phase === PHASE_MIGRATED) return "already-migrated"
        if (phase === PHASE_RECOVERY) return yield* Effect.fail(new MigrationBlocked({ message: "curve is in recovery" }))
        const sent = yield* Effect.tryPromise({ try: () => migrate(clients, curve), catch: (e) => e })
        return sent.hash as string
      }).pipe(
        Effect.mapError((e): string | MigrationBlocked => {
          if (e instanceof MigrationBlocked || typeof e === "string") return e
          const text = describe(e)
          return BLOCKING_ERRORS.has(text) ? new MigrationBlocked({ message: text }) : text
        }),
        Effect.timeoutFail({ duration: options.receiptTimeoutMs ?? 60_000, onTimeout: (): string | MigrationBlocked => "migrate receipt timed out" })
      ),
    cancel: (core) =>
      Effect.tryPromise({ try: () => cancelMigration(clients, core.identity.curveAddress as Address), catch: describe }).pipe(
        Effect.map((sent): string => sent.hash),
        Effect.timeoutFail({ duration: options.receiptTimeoutMs ?? 60_000, onTimeout: () => "cancel receipt timed out" })
      )
  }
}
