/**
 * The migration keeper (spec 3.6): finds completed curves in the market index, sends the migrate
 * transaction through the chain's executor on the schedule of `KeeperPolicy`, and reports its
 * progress as `MigrationProgress` events on the bus, so the markets' migration blocks (and a
 * restarted keeper) see `in_progress` with `attempts`/`nextAttemptAt`, then `delayed` once the
 * retries are exhausted. The chain's own `CurveMigrated` event completes the migration; the
 * keeper never marks it done itself.
 *
 * Positions: a progress event is ordered after the completion it follows and before the
 * migration it announces: `solanaPosition(confirmedSlot, 999999, attempt)` sorts after every
 * transaction of the confirmed slot the keeper observed, and the migrate transaction can only
 * land in a later slot.
 *
 * Hood recovery (spec 3.6 "no pool will open → cancelled, overriding retries"): an executor whose
 * migrate fails with `MigrationBlocked` (the chain will keep refusing it: the Uniswap pool is already
 * open at another price) and that can `cancel` is cancelled once the retry budget is spent: the
 * keeper sends the cancel (the curve enters recovery) and reports `cancelled` with `attempts` and
 * `gaveUpAt`. A budget spent on transient failures still ends `delayed` (a human decides), as does a
 * cancel that fails: recovery is irreversible, so only a refusal the chain will repeat leads to it.
 *
 * Bounded: one migration in flight at a time per keeper (a sweep handles candidates in order),
 * the schedule map holds only completed, unmigrated markets (entries are dropped when a market
 * leaves `completed`), and each send has a deadline.
 *
 * One active keeper across processes (`runKeeperAlone`): every actors process with the keys runs
 * it, but only the holder of the keeper's lease in PostgreSQL (`RowLease.runAlone`) sweeps; the
 * others stand by and the first to find the lease ended takes over. Before each send the active
 * keeper renews its lease and sends nothing if it lost it, so two keepers never race on a curve
 * (the chain would take one migration and count the other's failure as an attempt). In the cluster
 * the active keeper reads its candidates from `market.snapshots` (`SnapshotCandidates`, through
 * `runKeeperAloneOver`): every partition's markets, not only those its own process owns.
 */
import { Clock, Data, Duration, Effect, type Scope } from "effect"
import { type RowLeases, type RunAloneOptions, runAlone } from "../../db/RowLease.js"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { type ChainId, MigrationProgress } from "../../../ingest/ChainEvent.js"
import { backoffMs, discovered, failed, isDue, type KeeperPolicyOptions, type MigrationSchedule, nextWakeMs } from "./KeeperPolicy.js"

/** A migration the chain will keep refusing (Hood: the pool is already open at another price): no pool will open. */
export class MigrationBlocked extends Data.TaggedError("MigrationBlocked")<{ readonly message: string }> {}

const errorText = (e: string | MigrationBlocked): string => (typeof e === "string" ? e : e.message)

/**
 * A Solana curve that completed in the slot that created it (an atomic launch's first buys pushed
 * it past graduation in the launch block): its automatic migration is not armed (launch spec 4,
 * rule 8), so the keeper leaves it. Solana positions start `s:<slot, 20 digits>`.
 */
export const graduatedInLaunchSlot = (core: MarketCore): boolean =>
  core.chain === "solana" && core.completedPosition !== undefined && core.completedPosition.slice(0, 22) === core.identity.createdPosition.slice(0, 22)

export interface MigrationExecutor {
  readonly chain: ChainId
  /**
   * Position for a progress event of this attempt, after everything the chain has confirmed about
   * the market (`core`, the keeper's snapshot of it) and before the transaction it announces.
   */
  readonly progressPosition: (attempt: number, core: MarketCore) => Effect.Effect<string, string>
  /** Sends the migrate transaction; succeeds with its signature once the node accepted it. */
  readonly migrate: (core: MarketCore) => Effect.Effect<string, string | MigrationBlocked>
  /** Hood: ends a migration that cannot succeed by moving the curve to recovery; succeeds with the transaction hash. */
  readonly cancel?: (core: MarketCore) => Effect.Effect<string, string>
}

export interface MigrationKeeperOptions {
  /** Markets whose lifecycle is `completed` (the keeper filters again). */
  readonly candidates: () => Iterable<MarketCore>
  readonly executors: ReadonlyArray<MigrationExecutor>
  readonly publish: (events: ReadonlyArray<MigrationProgress>) => Effect.Effect<void, unknown>
  readonly policy: KeeperPolicyOptions
  /** Deadline of one migrate send. */
  readonly sendTimeout?: Duration.DurationInput
  /**
   * Asked before each send (migrate or cancel): false when this keeper is no longer the active one,
   * and then it sends and reports nothing (default: always active).
   */
  readonly active?: Effect.Effect<boolean>
}

/** The keeper's lease: one row, whichever process holds it sweeps. */
export const KEEPER_LEASE = { kind: "singleton", key: "migration-keeper" } as const

const key = (core: MarketCore) => `${core.chain}:${core.mint}`

/** What the market's migration block says about the schedule (a restarted keeper resumes from it). */
const scheduleFromMarket = (core: MarketCore, nowMs: number): MigrationSchedule => {
  const m = core.migration
  switch (m.status) {
    case "in_progress":
      return { _tag: "Pending", attempts: m.attempts, nextAttemptAtMs: m.nextAttemptAtMs ?? nowMs }
    case "delayed":
    case "cancelled":
      return { _tag: "Delayed", attempts: m.attempts, gaveUpAtMs: m.gaveUpAtMs ?? nowMs, lastError: m.lastError ?? "" }
    default:
      return discovered(nowMs)
  }
}

export const runMigrationKeeper = (options: MigrationKeeperOptions) =>
  Effect.gen(function* () {
    const schedules = new Map<string, MigrationSchedule>()
    const executors = new Map(options.executors.map((e) => [e.chain, e]))
    const policy = options.policy
    const sendTimeout = options.sendTimeout ?? "30 seconds"

    const progress = (core: MarketCore, executor: MigrationExecutor, attempt: number, fields: {
      status: "in_progress" | "delayed" | "cancelled"
      attempts: number
      nextAttemptAtMs: number | null
      gaveUpAtMs: number | null
      lastError: string | null
    }, nowMs: number) =>
      executor.progressPosition(attempt, core).pipe(
        Effect.flatMap((position) =>
          options.publish([
            new MigrationProgress({
              id: `${core.chain}:keeper:${core.mint}:${attempt}:${fields.status}:${nowMs}`,
              position,
              chain: core.chain,
              mint: core.mint,
              timestampMs: nowMs,
              signature: "",
              ...fields
            })
          ])
        ),
        Effect.catchAll((e) => Effect.logWarning("keeper could not report migration progress", String(e)))
      )

    const stillActive = options.active ?? Effect.succeed(true)

    const attempt = (core: MarketCore, executor: MigrationExecutor, schedule: MigrationSchedule & { _tag: "Pending" }) =>
      Effect.gen(function* () {
        if (!(yield* stillActive)) {
          // Not counted as an attempt: looked at again at the next sweep (by then this keeper has stopped or is active again).
          schedules.set(key(core), { ...schedule, nextAttemptAtMs: (yield* Clock.currentTimeMillis) + policy.sweepIntervalMs })
          return yield* Effect.logWarning("keeper is no longer the active one; it sends nothing")
        }
        const n = schedule.attempts + 1
        const startedMs = yield* Clock.currentTimeMillis
        yield* progress(core, executor, n, {
          status: "in_progress",
          attempts: n,
          // When the next attempt comes if this one fails (none after the last one).
          nextAttemptAtMs: n >= policy.maxAttempts ? null : startedMs + backoffMs(policy, n),
          gaveUpAtMs: null,
          lastError: null
        }, startedMs)
        const result = yield* executor.migrate(core).pipe(
          Effect.timeoutFail({ duration: sendTimeout, onTimeout: (): string | MigrationBlocked => "migrate send timed out" }),
          Effect.either
        )
        const nowMs = yield* Clock.currentTimeMillis
        if (result._tag === "Right") {
          yield* Effect.logInfo("keeper sent migration").pipe(Effect.annotateLogs({ chain: core.chain, mint: core.mint, signature: result.right, attempt: n }))
          // Sent, not yet seen migrated: check again after the backoff; a landed migration removes the candidate.
          schedules.set(key(core), { _tag: "Pending", attempts: n, nextAttemptAtMs: nowMs + policy.backoffBaseMs })
          return
        }
        const error = errorText(result.left)
        const next = failed(policy, schedule, nowMs, error)
        schedules.set(key(core), next)
        yield* Effect.logWarning("keeper migration attempt failed").pipe(
          Effect.annotateLogs({ chain: core.chain, mint: core.mint, attempt: n, error })
        )
        if (next._tag === "Delayed" && result.left instanceof MigrationBlocked && executor.cancel !== undefined) {
          yield* cancel(core, executor, executor.cancel, n, next)
          return
        }
        yield* next._tag === "Delayed"
          ? progress(core, executor, n, { status: "delayed", attempts: n, nextAttemptAtMs: null, gaveUpAtMs: next.gaveUpAtMs, lastError: next.lastError }, nowMs)
          : next._tag === "Pending"
            ? progress(core, executor, n, { status: "in_progress", attempts: n, nextAttemptAtMs: next.nextAttemptAtMs, gaveUpAtMs: null, lastError: error }, nowMs)
            : Effect.void
      })

    /** The budget is spent on a refusal the chain will repeat: cancel (recovery), or report delayed if that fails too. */
    const cancel = (
      core: MarketCore,
      executor: MigrationExecutor,
      send: NonNullable<MigrationExecutor["cancel"]>,
      n: number,
      given: MigrationSchedule & { _tag: "Delayed" }
    ) =>
      Effect.gen(function* () {
        if (!(yield* stillActive)) return yield* Effect.logWarning("keeper is no longer the active one; it cancels nothing")
        const sent = yield* send(core).pipe(
          Effect.timeoutFail({ duration: sendTimeout, onTimeout: () => "cancel send timed out" }),
          Effect.either
        )
        const nowMs = yield* Clock.currentTimeMillis
        if (sent._tag === "Right") {
          yield* Effect.logWarning("keeper cancelled a migration that cannot succeed; the curve is in recovery").pipe(
            Effect.annotateLogs({ chain: core.chain, mint: core.mint, attempts: n, signature: sent.right, error: given.lastError })
          )
          return yield* progress(core, executor, n, { status: "cancelled", attempts: n, nextAttemptAtMs: null, gaveUpAtMs: given.gaveUpAtMs, lastError: given.lastError }, nowMs)
        }
        const lastError = `${given.lastError}; cancel failed: ${sent.left}`
        schedules.set(key(core), { ...given, lastError })
        yield* Effect.logError("keeper could not cancel a blocked migration; a human must act").pipe(
          Effect.annotateLogs({ chain: core.chain, mint: core.mint, attempts: n, error: lastError })
        )
        yield* progress(core, executor, n, { status: "delayed", attempts: n, nextAttemptAtMs: null, gaveUpAtMs: given.gaveUpAtMs, lastError }, nowMs)
      })

    const sweep = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const seen = new Set<string>()
      for (const core of options.candidates()) {
        if (core.lifecycle !== "completed" || graduatedInLaunchSlot(core)) continue
        const executor = executors.get(core.chain)
        if (executor === undefined) continue
        const k = key(core)
        seen.add(k)
        let schedule = schedules.get(k)
        if (schedule === undefined) {
          schedule = scheduleFromMarket(core, nowMs)
          schedules.set(k, schedule)
        }
        if (isDue(schedule, nowMs)) yield* attempt(core, executor, schedule as MigrationSchedule & { _tag: "Pending" })
      }
      for (const k of schedules.keys()) if (!seen.has(k)) schedules.delete(k)
    })

    yield* Effect.logInfo("migration keeper running").pipe(Effect.annotateLogs({ sweepIntervalMs: policy.sweepIntervalMs }))
    let lastSweepMs = yield* Clock.currentTimeMillis
    for (;;) {
      yield* sweep
      lastSweepMs = yield* Clock.currentTimeMillis
      const wakeMs = nextWakeMs(policy, lastSweepMs, schedules.values())
      yield* Effect.sleep(Duration.millis(Math.max(10, wakeMs - lastSweepMs)))
    }
  })

/**
 * The keeper in at most one process at a time: the holder of `KEEPER_LEASE` sweeps, and renews the
 * lease before each send (a failed renewal sends nothing); the other processes stand by.
 */
export const runKeeperAlone = (leases: RowLeases, options: MigrationKeeperOptions, alone: RunAloneOptions = {}) =>
  runKeeperAloneOver(leases, Effect.succeed(options.candidates), options, alone)

/**
 * `runKeeperAlone` whose candidates come from `source`, built in a scope of its own each time this
 * process becomes the active keeper and closed when it stops being it (the cluster's
 * `SnapshotCandidates`: every partition's completed markets). A source that fails ends this turn
 * as active (the lease is given back); the process then stands by like any other.
 */
export const runKeeperAloneOver = <E, R>(
  leases: RowLeases,
  source: Effect.Effect<MigrationKeeperOptions["candidates"], E, R | Scope.Scope>,
  options: Omit<MigrationKeeperOptions, "candidates" | "active">,
  alone: RunAloneOptions = {}
) =>
  runAlone(
    leases,
    KEEPER_LEASE.kind,
    KEEPER_LEASE.key,
    Effect.scoped(
      Effect.flatMap(source, (candidates) =>
        runMigrationKeeper({ ...options, candidates, active: leases.renew(KEEPER_LEASE.kind, KEEPER_LEASE.key).pipe(Effect.orElseSucceed(() => false)) })
      )
    ),
    alone
  )
