/**
 * The one runner of attempts that move money (a staking operation, a reward claim; next the
 * launch paths, a trade, an order's execution, a transfer). The attempt's lifecycle is a pure
 * machine, `step(state, event) -> [state, outputs]`; this runner is the only thing that acts on
 * it: it saves every new state durably before it performs the outputs that state implies,
 * performs them through the attempt's ports (sign and send, read the outcome, settle writes),
 * feeds each result back to `step`, and runs the recovery passes that resume what a dead process
 * left in flight. A new rail is a new machine, store and ports, not a new runner.
 *
 * Invariants:
 * - Saved before acted on: an output is performed only after the state that asked for it
 *   committed. A crash between the two leaves the state; a recovery pass performs what it still
 *   owes (`machine.owed`) and nothing else.
 * - One driver per attempt (`RowLease`, kind `store.kind`): the save that makes an attempt in
 *   flight makes this process its owner in the same transaction (`claimIn`); every later save of
 *   the driver is fenced in its transaction (`fenceIn`), or, where the store saves in one statement
 *   (`saveFenced`), by the lease's renewal as that statement's first CTE gating its writes: a
 *   driver whose lease was taken over dies with `RowLeaseLost`, its save writes nothing and it
 *   performs nothing more.
 * - A save is conditional on the state it leaves (`store.save` answers false when another writer
 *   moved the row first): of racing writers one moves the row, the others are told `Moved`.
 * - Writes that must happen exactly when a state commits (settle rows, the webhook outbox) are
 *   made by `store.save` inside the same transaction (or `saveFenced`'s same statement), never as
 *   a separate output.
 * - A request that brings proof of a settled fate (a landed signature) may settle an in-flight
 *   attempt without its lease (a conditional save into a state that is not in flight); it may not
 *   move it to another in-flight state (that would drive it beside its owner).
 * - An idle attempt (not in flight, its fate still open outside: a build its caller may have
 *   broadcast itself) is looked at by the watch pass (`machine.idle`, `store.idle`); what it finds
 *   is an event applied as a request's would be.
 * Bounds: at most `maxRounds` output rounds per call; a recovery pass takes at most what
 * `store.inFlight` lists, a watch pass what `store.idle` lists (the store bounds both).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Effect, Schedule } from "effect"
import type { RowLeaseLost, RowLeases } from "../../db/RowLease.js"

/** Output rounds one call performs at most (each performed output may cause one more round). */
export const MAX_ROUNDS = 16

/** The pure lifecycle of one attempt; `undefined` is "no row yet". */
export interface AttemptMachine<S, Ev, Out> {
  /** Pure. The SAME state object when the event changes nothing. Throwing is a defect. */
  readonly step: (state: S | undefined, event: Ev) => readonly [S | undefined, ReadonlyArray<Out>]
  /** Whether a process must drive the attempt in this state (it waits on the outside world). */
  readonly inFlight: (state: S) => boolean
  /** What a stored state still owes after a restart (what a recovery pass performs). */
  readonly owed: (state: S) => ReadonlyArray<Out>
  /**
   * What a stored state that is NOT in flight still asks of the outside world when a watch pass
   * looks at it (an unsigned build its caller may have signed and broadcast without telling us);
   * absent or empty: nothing. Performed without a lease: its event is applied like a request's.
   */
  readonly idle?: (state: S) => ReadonlyArray<Out>
}

/** Where attempts live. Knows the table, not the chain. */
export interface AttemptStore<K, S, Out> {
  /** The lease kind of this attempt's rows. */
  readonly kind: string
  readonly leaseKey: (key: K) => string
  readonly load: (key: K) => Effect.Effect<S | undefined, SqlError>
  /**
   * In the caller's transaction: writes `next` where the row still holds `prev` (`undefined`:
   * inserts it), with every write that must commit with it (settle rows, outbox events, as
   * `outputs` say); false when another writer moved the row first.
   */
  readonly save: (key: K, prev: S | undefined, next: S, outputs: ReadonlyArray<Out>) => Effect.Effect<boolean, SqlError, SqlClient.SqlClient>
  /**
   * Optional: `save` over a stored row (`prev` defined) as ONE statement with no transaction
   * around it. `fence`, when given, is this process's lease renewal (`RowLeases.renewal`): the
   * statement runs it as a CTE and gates every write of its own on it, so a save whose lease was
   * lost writes nothing. Answers whether the lease held (true without a fence) and whether the row
   * moved. Where a store has it, the runner saves with it (every save that claims no lease): one
   * round trip instead of a transaction's four or more.
   */
  readonly saveFenced?: (
    key: K,
    prev: S,
    next: S,
    outputs: ReadonlyArray<Out>,
    fence: Statement.Fragment | undefined
  ) => Effect.Effect<{ readonly held: boolean; readonly moved: boolean }, SqlError, SqlClient.SqlClient>
  /** The attempts in flight (bounded by the store). */
  readonly inFlight: Effect.Effect<ReadonlyArray<K>, SqlError>
  /** The attempts not in flight whose `machine.idle` may ask something (bounded by the store); absent: none. */
  readonly idle?: Effect.Effect<ReadonlyArray<K>, SqlError>
}

/** How the outside world is touched: per rail and per chain; knows nothing of the ledger. */
export interface AttemptPorts<K, S, Ev, Out, E> {
  /**
   * Performs one output of a saved state; the event its result makes (fed back to `step`), or
   * undefined (nothing to feed back: an answer, a wait that ended without a verdict).
   */
  readonly perform: (key: K, state: S, output: Out) => Effect.Effect<Ev | undefined, E>
}

/** What a call did: the state it leaves (`Saved` or `Unchanged`), or that another writer moved the row. */
export type Applied<S, Out> =
  | { readonly _tag: "Saved"; readonly state: S; readonly outputs: ReadonlyArray<Out> }
  /** `step` changed nothing: `outputs` are the machine's answer (a refusal, a replay, a decision). */
  | { readonly _tag: "Unchanged"; readonly state: S | undefined; readonly outputs: ReadonlyArray<Out> }
  | { readonly _tag: "Moved" }

export interface AttemptRunnerOptions<K, S, Ev, Out, E> {
  readonly machine: AttemptMachine<S, Ev, Out>
  readonly store: AttemptStore<K, S, Out>
  readonly ports: AttemptPorts<K, S, Ev, Out, E>
  readonly leases: RowLeases
  readonly sql: SqlClient.SqlClient
  /** Between the passes a resumed attempt makes while it is still in flight (default every 2 s, 60 times). */
  readonly recoverySchedule?: Schedule.Schedule<unknown, unknown>
  readonly maxRounds?: number
}

export interface AttemptRunner<K, S, Ev, Out, E> {
  /**
   * Steps the attempt from its stored `state` with `event` and acts on it. Entering flight makes
   * this process the driver (held while the outputs are performed, given back after); settling
   * needs no lease. The state it leaves, `Unchanged` with the machine's answer, or `Moved`.
   */
  readonly apply: (key: K, state: S | undefined, event: Ev) => Effect.Effect<Applied<S, Out>, E | SqlError | RowLeaseLost>
  /** Resumes one in-flight attempt whose lease ended (in the background); false when a live process drives it or it settled. */
  readonly takeOver: (key: K) => Effect.Effect<boolean, SqlError>
  /** One recovery pass: takes over every in-flight attempt no live process drives; how many it took. */
  readonly recover: Effect.Effect<number, SqlError>
  /**
   * One watch pass over the idle attempts (`store.idle`): performs what each still asks
   * (`machine.idle`) and applies the event its result makes, as `apply` does (a conditional save: of
   * racing passes and requests one moves the row; entering flight makes this process its driver).
   * A failure on one attempt is logged and the pass goes on. How many attempts it moved.
   */
  readonly watch: Effect.Effect<number, SqlError>
}

/** The lease write a save makes: take the row (entering flight), check this driver's lease, or none (a settle with proof). */
type Lease = "claim" | "fence" | "none"

/**
 * A save over a stored row that claims no lease, through the store's `saveFenced` (one statement,
 * the lease's renewal in it for a driver's save); undefined where the store has none or the save
 * is an insert or a claim (the runner's transaction then). A driver that lost the row dies with
 * `RowLeaseLost`, as the transaction's fence does (its statement wrote nothing).
 */
const oneStatementSave = <K, S, Out>(store: AttemptStore<K, S, Out>, leases: RowLeases, key: K, prev: S | undefined, next: S, outputs: ReadonlyArray<Out>, lease: Lease) => {
  const one = store.saveFenced
  if (one === undefined || prev === undefined || lease === "claim") return undefined
  const leaseKey = store.leaseKey(key)
  const fence = lease === "fence" ? leases.renewal(store.kind, leaseKey) : undefined
  return Effect.flatMap(one(key, prev, next, outputs, fence), ({ held, moved }) => leases.fenced(store.kind, leaseKey, held, moved))
}

export const makeAttemptRunner = <K, S, Ev, Out, E>(options: AttemptRunnerOptions<K, S, Ev, Out, E>): AttemptRunner<K, S, Ev, Out, E> => {
  const { machine, store, ports, leases, sql } = options
  const maxRounds = options.maxRounds ?? MAX_ROUNDS
  const recoverySchedule = options.recoverySchedule ?? Schedule.intersect(Schedule.spaced("2 seconds"), Schedule.recurs(60))

  /** Saves `next` over `prev` with the lease write `lease` asks for: in one statement where the store can (`oneStatementSave`), else in one transaction. */
  const save = (key: K, prev: S | undefined, next: S, outputs: ReadonlyArray<Out>, lease: Lease) =>
    (
      oneStatementSave(store, leases, key, prev, next, outputs, lease) ??
      sql.withTransaction(
        Effect.gen(function* () {
          // The fence first: a driver that lost the row dies here and its transaction writes nothing.
          if (lease === "fence") yield* leases.fenceIn(store.kind, store.leaseKey(key))
          const saved = yield* store.save(key, prev, next, outputs)
          if (saved && lease === "claim") yield* leases.claimIn(store.kind, store.leaseKey(key))
          return saved
        })
      )
    ).pipe(Effect.provideService(SqlClient.SqlClient, sql))

  /** Steps and saves (as the driver when `driving`); the outputs are not performed here. */
  const stepAndSave = (key: K, state: S | undefined, event: Ev, driving: boolean) =>
    Effect.gen(function* () {
      const [next, outputs] = machine.step(state, event)
      if (next === state || next === undefined) return { _tag: "Unchanged", state, outputs } as Applied<S, Out>
      const wasInFlight = state !== undefined && machine.inFlight(state)
      const lease: Lease = driving ? "fence" : wasInFlight ? "none" : machine.inFlight(next) ? "claim" : "none"
      if (!driving && wasInFlight && machine.inFlight(next)) {
        return yield* Effect.dieMessage(`${store.kind}: only the driver moves an attempt in flight to another in-flight state`)
      }
      const saved = yield* save(key, state, next, outputs, lease)
      return saved ? ({ _tag: "Saved", state: next, outputs } as Applied<S, Out>) : ({ _tag: "Moved" } as Applied<S, Out>)
    })

  /** Performs `outputs` of the saved `state`, feeding each result back, fenced, until nothing is asked. */
  const drive = (key: K, start: S, first: ReadonlyArray<Out>, driving: boolean) =>
    Effect.gen(function* () {
      let state = start
      let outputs = first
      let seen: Array<Out> = [...first]
      for (let round = 0; outputs.length > 0 && round < maxRounds; round++) {
        const more: Array<Out> = []
        for (const output of outputs) {
          const event = yield* ports.perform(key, state, output)
          if (event === undefined) continue
          const applied = yield* stepAndSave(key, state, event, driving)
          if (applied._tag === "Moved") return applied
          if (applied._tag === "Unchanged") {
            seen = [...seen, ...applied.outputs]
            continue
          }
          state = applied.state
          seen = [...seen, ...applied.outputs]
          more.push(...applied.outputs)
        }
        outputs = more
      }
      return { _tag: "Saved", state, outputs: seen } as Applied<S, Out>
    })

  const apply: AttemptRunner<K, S, Ev, Out, E>["apply"] = (key, state, event) =>
    Effect.gen(function* () {
      const applied = yield* stepAndSave(key, state, event, false)
      if (applied._tag !== "Saved") return applied
      if (!machine.inFlight(applied.state)) return yield* drive(key, applied.state, applied.outputs, false)
      // This process claimed the attempt with the save: it drives it holding the lease.
      return yield* leases.whileHeld(store.kind, store.leaseKey(key), drive(key, applied.state, applied.outputs, true))
    })

  /** One pass over a stored in-flight attempt this process drives: what it owes, performed. */
  const resumeOnce = (key: K) =>
    Effect.gen(function* () {
      const state = yield* store.load(key)
      if (state === undefined || !machine.inFlight(state)) return state
      const applied = yield* drive(key, state, machine.owed(state), true)
      return applied._tag === "Moved" ? undefined : applied.state
    })

  const takeOver: AttemptRunner<K, S, Ev, Out, E>["takeOver"] = (key) =>
    Effect.gen(function* () {
      const leaseKey = store.leaseKey(key)
      if (!(yield* leases.take(store.kind, leaseKey))) return false
      // Read again under the lease: the previous driver may have settled it after the list was read.
      const current = yield* store.load(key).pipe(Effect.tapErrorCause(() => leases.release(store.kind, leaseKey).pipe(Effect.ignore)))
      if (current === undefined || !machine.inFlight(current)) {
        yield* leases.release(store.kind, leaseKey)
        return false
      }
      // Driven in the background until it settles or the recovery schedule ends (a later pass takes it again).
      yield* Effect.forkDaemon(
        leases
          .whileHeld(
            store.kind,
            leaseKey,
            resumeOnce(key).pipe(
              Effect.repeat({ schedule: recoverySchedule, while: (s) => s !== undefined && machine.inFlight(s) }),
              Effect.retry(recoverySchedule)
            )
          )
          .pipe(Effect.catchAllCause((cause) => Effect.logWarning(`a ${store.kind} left in flight is still unsettled`, cause)))
      )
      return true
    })

  const recover: AttemptRunner<K, S, Ev, Out, E>["recover"] = Effect.gen(function* () {
    const keys = yield* store.inFlight
    const driven = yield* leases.live(store.kind, keys.map(store.leaseKey))
    let taken = 0
    for (const key of keys) if (!driven.has(store.leaseKey(key)) && (yield* takeOver(key))) taken++
    return taken
  })

  /** The watch of one idle attempt: what it asks, performed, and its event applied; whether the row moved. */
  const watchOne = (key: K) =>
    Effect.gen(function* () {
      const state = yield* store.load(key)
      if (state === undefined || machine.inFlight(state)) return false
      for (const output of machine.idle?.(state) ?? []) {
        const event = yield* ports.perform(key, state, output)
        if (event === undefined) continue
        const applied = yield* apply(key, state, event)
        if (applied._tag !== "Unchanged") return applied._tag === "Saved"
      }
      return false
    })

  const watch: AttemptRunner<K, S, Ev, Out, E>["watch"] = Effect.gen(function* () {
    if (store.idle === undefined || machine.idle === undefined) return 0
    const keys = yield* store.idle
    let moved = 0
    for (const key of keys) {
      const done = yield* watchOne(key).pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning(`the watch of an idle ${store.kind} failed; the next pass looks again`, cause), false))
      )
      if (done) moved++
    }
    return moved
  })

  return { apply, takeOver, recover, watch }
}
