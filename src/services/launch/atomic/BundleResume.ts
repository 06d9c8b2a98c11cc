/**
 * A restart resumes every atomic bundle where it was (launch spec 3.5; issue 12's durable
 * BundleActor): each unsettled row's stored state is carried on by the runner from what is
 * stored, never by resending.
 *
 * - `built` past `expiresAt` → `Expire` (holds released); `submitting` (verification was
 *   interrupted; nothing was signed) → back to `built` first.
 * - `signing` → `SendAbandoned`: `Sent` is stored before a bundle leaves, so it never left; the
 *   holds stay (rule 7) and the attempt fails.
 * - `sent` → one recovery pass from the chain.
 * - `landed` → every owed item asked for again (each performed once, `atomic_bookings`), and a
 *   recovery pass while a buy's own outcome is still unread.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import type { BundleState } from "../../../../actors/bundle/BundleActor.js"
import type { LaunchLedgerShape } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { type BookedLeg, type BookingFailure, type BookingTarget, makeBookings } from "./AtomicBookings.js"
import type { makeRunner, RunnerIo } from "./BundleRunner.js"
import { type BundleRow, findBundle, saveState, unsettledBundleIds } from "./BundleStore.js"

/** What a bundle row keeps beside the actor's state to carry it on after a restart. */
export interface StoredBundleBuild {
  /** Each buy leg's payer address, in leg order. */
  readonly buyers: ReadonlyArray<string>
  readonly lastValidBlockHeight: bigint
  readonly booking: Omit<BookingTarget, "launchSignature" | "legs"> & { readonly legs: ReadonlyArray<Omit<BookedLeg, "signature">> }
}

export const encodeStoredBuild = (b: StoredBundleBuild): string =>
  JSON.stringify({
    buyers: b.buyers,
    lastValidBlockHeight: b.lastValidBlockHeight.toString(),
    booking: {
      ...b.booking,
      platformFeeBps: b.booking.platformFeeBps.toString(),
      legs: b.booking.legs.map((l) => ({
        ...l,
        amountInRaw: l.amountInRaw.toString(),
        platformFeeRaw: l.platformFeeRaw.toString(),
        usdMicros: l.usdMicros === null ? null : l.usdMicros.toString()
      }))
    }
  })

export const decodeStoredBuild = (text: string): StoredBundleBuild => {
  const o = JSON.parse(text) as {
    buyers: string[]
    lastValidBlockHeight: string
    booking: Omit<StoredBundleBuild["booking"], "platformFeeBps" | "legs" | "result"> & {
      platformFeeBps: string
      result: StoredResult
      legs: Array<{ index: number; clientTradeId: string; amountInRaw: string; platformFeeRaw: string; usdMicros: string | null }>
    }
  }
  return {
    buyers: o.buyers,
    lastValidBlockHeight: BigInt(o.lastValidBlockHeight),
    booking: {
      ...o.booking,
      platformFeeBps: BigInt(o.booking.platformFeeBps),
      legs: o.booking.legs.map((l) => ({
        index: l.index,
        clientTradeId: l.clientTradeId,
        amountInRaw: BigInt(l.amountInRaw),
        platformFeeRaw: BigInt(l.platformFeeRaw),
        usdMicros: l.usdMicros === null ? null : BigInt(l.usdMicros)
      }))
    }
  }
}

/** The booking target as of a state: the signatures are the ones the state recorded when sent. */
export const bookingTargetAt = (b: StoredBundleBuild, s: BundleState): BookingTarget => ({
  ...b.booking,
  launchSignature: s.launchSignature,
  legs: b.booking.legs.map((l) => ({ ...l, signature: s.buys.find((x) => x.index === l.index)?.signature ?? null }))
})

type Runner = ReturnType<typeof makeRunner>

/**
 * The runner's io for one stored bundle: every state saved to its row, every output booked. With
 * `fence` (the driving process's row lease, `RowLease.fenceIn`), each state is saved in one
 * transaction with the fence, so a process that lost the bundle to another stores nothing more
 * (and, `Sent` being stored before the bundle leaves, sends nothing).
 */
export const bundleIo = (
  ledger: LaunchLedgerShape,
  row: BundleRow<StoredBundleBuild>,
  fence?: Effect.Effect<void, SqlError, SqlClient.SqlClient>
) =>
  Effect.map(
    Effect.context<SqlClient.SqlClient>(),
    (ctx): RunnerIo<BookingFailure> => ({
      save: (s) =>
        Effect.provide(
          Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
            fence === undefined
              ? saveState(row.bundleId, s, nowMs)
              : Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.zipRight(fence, saveState(row.bundleId, s, nowMs))))
          ),
          ctx
        ),
      perform: (s, o) => Effect.provide(makeBookings(ledger, bookingTargetAt(row.build, s)).perform(o), ctx)
    })
  )

export const resumeBundle = (
  runner: Runner,
  ledger: LaunchLedgerShape,
  row: BundleRow<StoredBundleBuild>,
  nowMs: number,
  fence?: Effect.Effect<void, SqlError, SqlClient.SqlClient>
) =>
  Effect.gen(function* () {
    const io = yield* bundleIo(ledger, row, fence)
    let s = row.state
    if (s.phase === "submitting") s = yield* runner.apply(s, { _tag: "SubmitRefused", kind: "bytes", detail: "submit interrupted before signing", atMs: nowMs }, io)
    switch (s.phase) {
      case "built":
        return yield* runner.apply(s, { _tag: "Expire", atMs: nowMs }, io)
      case "signing":
        return yield* runner.apply(s, { _tag: "SendAbandoned", atMs: nowMs }, io)
      case "sent":
        return yield* runner.recover(s, row.build.buyers, row.mint, row.build.lastValidBlockHeight, io)
      case "landed": {
        const resumed = yield* runner.resume(s, io)
        return resumed.buys.some((b) => b.outcome === "pending")
          ? yield* runner.recover(resumed, row.build.buyers, row.mint, row.build.lastValidBlockHeight, io)
          : resumed
      }
      default:
        return s
    }
  })

/** Every unsettled bundle, oldest first; one that fails is left for the next pass and counted. */
export const resumeAll = (runner: Runner, ledger: LaunchLedgerShape, nowMs: number) =>
  Effect.gen(function* () {
    const ids = yield* unsettledBundleIds()
    let failed = 0
    for (const id of ids) {
      const row = yield* findBundle(id, decodeStoredBuild)
      if (row === undefined) continue
      const r = yield* Effect.either(resumeBundle(runner, ledger, row, nowMs))
      if (r._tag === "Left") failed++
    }
    return { bundles: ids.length, failed }
  }) satisfies Effect.Effect<unknown, SqlError, SqlClient.SqlClient>
