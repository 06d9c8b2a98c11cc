/**
 * The spend gate's store (`src/services/spend/SpendStore.ts`) on embedded PGlite and on a real
 * PostgreSQL server (two pools: two engine processes): 200 concurrent builds against one txLimit
 * admit exactly what fits and the rest are `tx_limit_reached`; the same against a window already
 * partly booked; a reserve replayed under its id answers the first, a released one is decided anew; a booking meters the hold's
 * value once into the key's usage and a sell books without a hold and is never refused; a release
 * frees the window; the sweep releases only expired holds, at most its bound per pass; a window
 * reset clears an open hold's weight, a lifetime window keeps it; a hold kept past its window's reset
 * (`keepHeldIn`) is decided anew in the current one.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Deferred, Effect, Either, Exit, Fiber, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import { findAccountKey, insertKey } from "../../src/services/keys/KeyRepository.js"
import type { TxLimit } from "../../src/services/keys/KeyRules.js"
import type { SpendAttempt } from "../../src/services/spend/SpendGate.js"
import { book, check, checkKey, checkKeyNow, checkReadsWindow, holdAround, keepHeldIn, release, reservationState, reserve, type ReserveInput, sweep, windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { swapKey } from "../support/tradeRows.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const gateSuite = (options: () => Database.DatabaseOptions, pools: 1 | 2) => {
  let scope: Scope.CloseableScope
  let sqlA: SqlClient.SqlClient
  let sqlB: SqlClient.SqlClient
  let keys = 0
  const on = <A, E>(sql: SqlClient.SqlClient, self: Effect.Effect<A, E, SqlClient.SqlClient>) => run(Effect.provideService(self, SqlClient.SqlClient, sql))

  /** A fresh account and key with the given limits; returns its ids. */
  const newKey = async (txLimit: TxLimit | null, spendLimits: ReadonlyArray<{ asset: string; maxPerTxRaw: string }> | null = null) => {
    const n = ++keys
    const accountId = `acct-gate-${n}`
    const prefix = `gate${String(n).padStart(4, "0")}`
    const keyId = `kid-gate-${n}`
    await on(sqlA, sqlA`INSERT INTO accounts (id, plan, referral_code) VALUES (${accountId}, 'max', ${`GATE${n}`})`)
    await on(
      sqlA,
      insertKey(
        swapKey({ id: keyId, prefix, accountId, hash: `hash-${n}`, txLimit }),
        Date.now()
      )
    )
    if (spendLimits !== null) await on(sqlA, sqlA`UPDATE agent_keys SET spend_limits = ${JSON.stringify(spendLimits)}::jsonb WHERE id = ${keyId}`)
    return { accountId, prefix, keyId }
  }

  const buy = (usdMicros: bigint | null, o: Partial<SpendAttempt> = {}): SpendAttempt => ({
    rail: "main",
    purpose: "trade",
    side: "buy",
    asset: "sol",
    amountRaw: 1_000n,
    usdMicros,
    ...o
  })

  const input = (k: { accountId: string; prefix: string }, id: string, attempt: SpendAttempt, holdMs?: number): ReserveInput => ({
    reservationId: id,
    accountId: k.accountId,
    keyPrefix: k.prefix,
    chain: "solana",
    attempt,
    ...(holdMs !== undefined ? { holdMs } : {})
  })

  beforeAll(async () => {
    scope = await run(Scope.make())
    const migrated = Layer.effectDiscard(Database.runMigrations(migrations)).pipe(Layer.provideMerge(Database.layer(options())))
    sqlA = Context.get(await run(Layer.buildWithScope(migrated, scope)), SqlClient.SqlClient)
    sqlB = pools === 2 ? Context.get(await run(Layer.buildWithScope(Database.layer(options()), scope)), SqlClient.SqlClient) : sqlA
  }, 60_000)

  afterAll(async () => {
    await run(Scope.close(scope, Exit.void))
  })

  /** 200 builds of `eachUsd` at once, alternating pools; returns how many were admitted and the refusals' reasons. */
  const race = async (k: { accountId: string; prefix: string }, tag: string, eachUsd: bigint) => {
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => on(i % 2 === 0 ? sqlA : sqlB, Effect.either(reserve(input(k, `${tag}-${i}`, buy(eachUsd))))))
    )
    const admitted = outcomes.filter(Either.isRight).length
    const reasons = new Set(outcomes.filter(Either.isLeft).map((o) => o.left.reason))
    return { admitted, reasons }
  }

  it("200 concurrent builds against one txLimit admit exactly what fits; the window then holds exactly their sum", async () => {
    const k = await newKey({ usdMicros: 1_000_000, reset: "daily" })
    const { admitted, reasons } = await race(k, "race", 7_000n)
    expect(admitted).toBe(142) // floor(1,000,000 / 7,000)
    expect([...reasons]).toEqual(["tx_limit_reached"])
    expect(await on(sqlA, windowUsedUsdMicros(`kid-gate-${keys}`, "daily", Date.now()))).toBe(142n * 7_000n)
  }, 120_000)

  it("against a window already partly booked, 200 concurrent builds admit only what is left", async () => {
    const k = await newKey({ usdMicros: 1_000_000, reset: "monthly" })
    await on(sqlA, book({ reservationId: "booked-before", accountId: k.accountId, keyId: k.keyId, rail: "main", purpose: "trade", chain: "solana", side: "buy", asset: "sol", amountRaw: 1n, usdMicros: 300_000n, trades: 1 }))
    const { admitted } = await race(k, "rest", 10_000n)
    expect(admitted).toBe(70)
  }, 120_000)

  it("a reserve replayed under its id answers the first, holds once and is not decided again", async () => {
    const k = await newKey({ usdMicros: 10_000, reset: "daily" })
    const first = await on(sqlA, reserve(input(k, "once", buy(6_000n))))
    const again = await on(sqlB, reserve(input(k, "once", buy(6_000n))))
    expect(first.replayed).toBe(false)
    expect(again).toMatchObject({ reservationId: "once", held: true, usdMicros: 6_000n, replayed: true })
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(6_000n)
  })

  it("the dry run's decision on the authenticated key row is the stored key's: the window's holds and bookings count, a per-asset cap refuses, a sell passes; nothing is held", async () => {
    const k = await newKey({ usdMicros: 10_000, reset: "daily" }, [{ asset: "sol", maxPerTxRaw: "500" }])
    const row = (await on(sqlA, findAccountKey(k.accountId, k.prefix)))!
    const both = async (attempt: SpendAttempt) => {
      const fromRow = await on(sqlB, checkKey(row, attempt))
      const read = await on(sqlB, check({ accountId: k.accountId, keyPrefix: k.prefix, chain: "solana", attempt }))
      expect(fromRow).toEqual(read)
      return fromRow
    }
    expect(await both(buy(6_000n, { amountRaw: 400n }))).toMatchObject({ _tag: "Admitted" })
    await on(sqlA, reserve(input(k, "dry-held", buy(6_000n, { amountRaw: 400n }))))
    // The hold weighs on the window: what fit before no longer does.
    const over = await both(buy(6_000n, { amountRaw: 400n }))
    expect(over._tag === "Refused" ? over.error.reason : undefined).toBe("tx_limit_reached")
    expect(await both(buy(4_000n, { amountRaw: 400n }))).toMatchObject({ _tag: "Admitted" })
    const capped = await both(buy(1_000n, { amountRaw: 501n }))
    expect(capped._tag === "Refused" ? capped.error.reason : undefined).toBe("spend_limit_exceeded")
    expect(await both(buy(1_000_000n, { side: "sell", amountRaw: 10n ** 12n }))).toMatchObject({ _tag: "Admitted" })
    // Checking holds nothing: the window is the one hold.
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(6_000n)
  })

  it("the decision in place (no window to read: a key without txLimit, or a sell) is checkKey's and the stored key's", async () => {
    const k = await newKey(null, [{ asset: "sol", maxPerTxRaw: "500" }])
    const row = (await on(sqlA, findAccountKey(k.accountId, k.prefix)))!
    const l = await newKey({ usdMicros: 10, reset: "daily" })
    const limited = (await on(sqlA, findAccountKey(l.accountId, l.prefix)))!
    const cases: ReadonlyArray<readonly [typeof row, SpendAttempt]> = [
      [row, buy(6_000n, { amountRaw: 400n })],
      [row, buy(1_000n, { amountRaw: 501n })],
      [row, buy(1_000_000n, { side: "sell", amountRaw: 10n ** 12n })],
      [limited, buy(1_000_000n, { side: "sell", amountRaw: 10n ** 12n })]
    ]
    for (const [key, attempt] of cases) {
      expect(checkReadsWindow(key, attempt)).toBe(false)
      const now = checkKeyNow(key, attempt, Date.now())
      expect(now).toEqual(await on(sqlB, checkKey(key, attempt)))
      expect(now).toEqual(await on(sqlB, check({ accountId: key.accountId, keyPrefix: key.prefix, chain: "solana", attempt })))
    }
    expect(checkKeyNow(row, buy(1_000n, { amountRaw: 501n }), Date.now())).toMatchObject({ _tag: "Refused" })
    // A buy on a key with a txLimit reads its window: not decided in place.
    expect(checkReadsWindow(limited, buy(1n))).toBe(true)
    // Against the reading path (`check`), with usage booked: `limited`'s window is far past its 10 µUSD
    // and `row` (no txLimit) has as much booked. A sell on `limited` and a buy on `row` are still admitted
    // in place and by `check`, while `check` refuses a buy on `limited` (so the booking is seen).
    const booked = (key: { accountId: string; keyId: string }, id: string, side: "buy" | "sell") =>
      on(sqlA, book({ reservationId: id, accountId: key.accountId, keyId: key.keyId, rail: "main", purpose: "trade", chain: "solana", side, asset: "sol", amountRaw: 400n, usdMicros: 50_000n, trades: 1 }))
    await booked(l, `past-${l.keyId}`, "sell")
    await booked(k, `past-${k.keyId}`, "buy")
    expect(await on(sqlA, windowUsedUsdMicros(l.keyId, "daily", Date.now()))).toBe(50_000n)
    const read = (key: typeof row, attempt: SpendAttempt) => on(sqlB, check({ accountId: key.accountId, keyPrefix: key.prefix, chain: "solana", attempt }))
    const refusedBuy = await read(limited, buy(1n, { amountRaw: 1n }))
    expect(refusedBuy._tag === "Refused" ? refusedBuy.error.reason : undefined).toBe("tx_limit_reached")
    for (const [key, attempt] of [
      [limited, buy(1_000_000n, { side: "sell", amountRaw: 10n ** 12n })],
      [row, buy(6_000n, { amountRaw: 400n })]
    ] as const) {
      expect(checkReadsWindow(key, attempt)).toBe(false)
      expect(await read(key, attempt)).toMatchObject({ _tag: "Admitted" })
      expect(checkKeyNow(key, attempt, Date.now())).toMatchObject({ _tag: "Admitted" })
    }
  })

  it("a released id reserved again is decided anew: held again when it fits, refused when it no longer does", async () => {
    const k = await newKey({ usdMicros: 10_000, reset: "daily" })
    await on(sqlA, reserve(input(k, "again", buy(6_000n))))
    expect(await on(sqlA, release("again"))).toBe(true)
    const retried = await on(sqlB, reserve(input(k, "again", buy(6_000n))))
    expect(retried).toMatchObject({ held: true, replayed: false })
    expect(await on(sqlA, reservationState("again"))).toBe("held")
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(6_000n)
    // Released again while another build took the room: the retry is refused and holds nothing.
    expect(await on(sqlA, release("again"))).toBe(true)
    await on(sqlA, reserve(input(k, "other", buy(5_000n))))
    const refused = await on(sqlA, Effect.either(reserve(input(k, "again", buy(6_000n)))))
    expect(Either.isLeft(refused) ? refused.left.reason : undefined).toBe("tx_limit_reached")
    expect(await on(sqlA, reservationState("again"))).toBe("released")
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(5_000n)
  })

  it("keepHeldIn: a hold in its window is extended only; one taken before the window reset is decided anew in the current window (moved into it when it fits, left as it was when refused); a lifetime window or a key without txLimit only extends; a hold not open is left", async () => {
    const keep = async (k: { accountId: string; prefix: string }, id: string, attempt: SpendAttempt, untilMs: number) => {
      const e = await on(sqlB, Effect.either(sqlB.withTransaction(keepHeldIn(input(k, id, attempt), untilMs))))
      return Either.isRight(e) ? e.right : Either.isLeft(e) && "reason" in e.left ? e.left.reason : "sql"
    }
    const row = (id: string) =>
      on(sqlA, sqlA<{ state: string; created: Date | string; usd: string | null; expires: Date | string }>`
        SELECT state, created_at AS created, usd_micros::text AS usd, expires_at AS expires FROM spend_reservations WHERE id = ${id}`).then((r) => r[0]!)
    const at = (d: Date | string) => new Date(d).getTime()
    const backdate = (id: string, to: Date) => on(sqlA, sqlA`UPDATE spend_reservations SET created_at = ${to} WHERE id = ${id}`)
    const later = Date.now() + 3_600_000
    const k = await newKey({ usdMicros: 10_000, reset: "daily" })
    await on(sqlA, reserve(input(k, "keep-a", buy(6_000n))))
    // In its window: extended, not decided again (a value the window could not fit is not even looked at).
    expect(await keep(k, "keep-a", buy(20_000n), later)).toBe("kept")
    expect([at((await row("keep-a")).expires), (await row("keep-a")).usd]).toEqual([later, "6000"])
    // Taken yesterday and still held: it weighs nothing in today's window.
    const yesterday = new Date(Date.now() - 25 * 3_600_000)
    await backdate("keep-a", yesterday)
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(0n)
    await on(sqlA, reserve(input(k, "keep-b", buy(5_000n))))
    // Decided anew in today's window: 5,000 held today plus 6,000 does not fit; the hold is left as it was (yesterday's, unextended).
    expect(await keep(k, "keep-a", buy(6_000n), later + 60_000)).toBe("tx_limit_reached")
    expect(await row("keep-a")).toMatchObject({ state: "held", usd: "6000" })
    expect([at((await row("keep-a")).created), at((await row("keep-a")).expires)]).toEqual([yesterday.getTime(), later])
    // Room made: it fits, valued anew and moved into today's window, extended.
    expect(await on(sqlA, release("keep-b"))).toBe(true)
    expect(await keep(k, "keep-a", buy(7_000n), later + 60_000)).toBe("redecided")
    expect(await row("keep-a")).toMatchObject({ state: "held", usd: "7000" })
    expect(at((await row("keep-a")).created)).toBeGreaterThan(yesterday.getTime() + 3_600_000)
    expect(at((await row("keep-a")).expires)).toBe(later + 60_000)
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(7_000n)
    // In its window again: extended only, never shortened.
    expect(await keep(k, "keep-a", buy(7_000n), later)).toBe("kept")
    expect(at((await row("keep-a")).expires)).toBe(later + 60_000)
    // Not open: left.
    expect(await on(sqlA, release("keep-a"))).toBe(true)
    expect(await keep(k, "keep-a", buy(7_000n), later)).toBe("not_held")
    expect((await row("keep-a")).state).toBe("released")
    // A lifetime window has no reset, and a key without txLimit no window: however old the hold, extended only.
    for (const txLimit of [{ usdMicros: 10_000, reset: "never" as const }, null]) {
      const other = await newKey(txLimit)
      const id = `keep-${txLimit === null ? "none" : "never"}`
      await on(sqlA, reserve(input(other, id, buy(6_000n))))
      await backdate(id, new Date(Date.now() - 40 * 86_400_000))
      await on(sqlA, sqlA`UPDATE agent_keys SET tx_limit_usd_micros = CASE WHEN tx_limit_usd_micros IS NULL THEN NULL ELSE 1 END WHERE id = ${other.keyId}`)
      expect(await keep(other, id, buy(6_000n), later)).toBe("kept")
      expect(at((await row(id)).expires)).toBe(later)
    }
  })

  it("a sweep that waited on a hold's row while keepHeldIn extended it leaves the hold held (its expiry re-checked on the row it waited for)", async () => {
    const k = await newKey({ usdMicros: 10_000, reset: "daily" })
    await on(sqlA, reserve(input(k, "kept-late", buy(1_000n), 0))) // expired at once
    const entered = await run(Deferred.make<void>())
    const go = await run(Deferred.make<void>())
    const kept = on(
      sqlA,
      sqlA.withTransaction(
        Effect.gen(function* () {
          const r = yield* keepHeldIn(input(k, "kept-late", buy(1_000n)), Date.now() + 3_600_000)
          yield* Deferred.succeed(entered, undefined)
          yield* Deferred.await(go)
          return r
        })
      )
    )
    await run(Deferred.await(entered))
    const swept = on(sqlB, sweep())
    if (pools === 2) {
      // The sweep's statement is queued on the row the open transaction locked (a server: two sessions).
      const deadline = Date.now() + 20_000
      const waiting = () =>
        on(sqlB, sqlB<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE spend_reservations SET state = ''released''%'`)
      while ((await waiting())[0]!.n === 0) {
        if (Date.now() > deadline) throw new Error("the sweep never waited on the locked hold")
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    await run(Deferred.succeed(go, undefined))
    expect(await kept).toBe("kept")
    await swept
    expect(await on(sqlA, reservationState("kept-late"))).toBe("held")
  })

  it("a booking meters once; a sell is admitted past every cap, takes no hold and counts when it books", async () => {
    const k = await newKey({ usdMicros: 10_000, reset: "daily" }, [{ asset: "sol", maxPerTxRaw: "100" }])
    const held = await on(sqlA, reserve(input(k, "b1", buy(4_000n, { amountRaw: 100n }))))
    expect(held.held).toBe(true)
    // Over the per-asset cap by one unit: refused, nothing held.
    const capped = await on(sqlA, Effect.either(reserve(input(k, "b2", buy(1n, { amountRaw: 101n })))))
    expect(Either.isLeft(capped) ? capped.left.reason : undefined).toBe("spend_limit_exceeded")
    expect(await on(sqlA, reservationState("b2"))).toBeUndefined()
    const bookIt = { reservationId: "b1", accountId: k.accountId, keyId: k.keyId, rail: "main" as const, purpose: "trade" as const, chain: "solana", side: "buy" as const, asset: "sol", amountRaw: 100n, usdMicros: 4_500n, trades: 1 }
    expect(await on(sqlA, book(bookIt))).toEqual({ fresh: true, usdMicros: 4_500n })
    expect(await on(sqlB, book(bookIt))).toEqual({ fresh: false, usdMicros: null })
    expect(await on(sqlA, reservationState("b1"))).toBe("booked")
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(4_500n)
    // A sell far over the cap and the window: admitted, no hold; booked, it counts (the window is now over its limit).
    const sell = await on(sqlA, reserve(input(k, "s1", buy(50_000n, { side: "sell", amountRaw: 10n ** 12n }))))
    expect(sell.held).toBe(false)
    expect(await on(sqlA, reservationState("s1"))).toBeUndefined()
    await on(sqlA, book({ ...bookIt, reservationId: "s1", side: "sell", amountRaw: 10n ** 12n, usdMicros: 50_000n }))
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(54_500n)
    const usage = await on(sqlA, sqlA<{ usd: string; trades: number }>`SELECT usd_micros::text AS usd, trade_count AS trades FROM agent_key_usage_daily WHERE key_id = ${k.keyId}`)
    expect(usage).toEqual([{ usd: "54500", trades: 2 }])
    // The next buy is refused: the sell's booking fills the window.
    const next = await on(sqlA, Effect.either(reserve(input(k, "b3", buy(1n, { amountRaw: 1n })))))
    expect(Either.isLeft(next) ? next.left.reason : undefined).toBe("tx_limit_reached")
  })

  it("holdAround: a request whose reserve replayed another's hold never releases it when its run fails before that request recorded its row", async () => {
    const k = await newKey({ usdMicros: 10_000, reset: "daily" })
    // A reserves and is about to record its row; B (the same id, at once) gets the replayed hold and fails transiently.
    const program = Effect.gen(function* () {
      const reserved = yield* Deferred.make<void>()
      const record = yield* Deferred.make<void>()
      let written = false
      const hold = { input: input(k, "same-id", buy(6_000n)), recorded: Effect.sync(() => written), what: "spend gate test" }
      const a = yield* Effect.fork(
        holdAround(
          hold,
          Effect.zipRight(Deferred.succeed(reserved, undefined), Deferred.await(record)).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                written = true
              })
            )
          )
        )
      )
      yield* Deferred.await(reserved)
      const b = yield* Effect.either(holdAround(hold, Effect.fail("chain_unavailable" as const)))
      const afterB = yield* reservationState("same-id")
      yield* Deferred.succeed(record, undefined)
      yield* Fiber.join(a)
      const afterA = yield* reservationState("same-id")
      // The hard cap still counts A's hold: another build that does not fit beside it is refused.
      const other = yield* Effect.either(reserve(input(k, "other-id", buy(6_000n))))
      return { b, afterB, afterA, other }
    })
    const out = await on(sqlA, program)
    expect(Either.isLeft(out.b) ? out.b.left : undefined).toBe("chain_unavailable")
    expect(out.afterB).toBe("held")
    expect(out.afterA).toBe("held")
    expect(Either.isLeft(out.other) ? out.other.left.reason : undefined).toBe("tx_limit_reached")
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now()))).toBe(6_000n)
    // The request that reserved it still releases its own hold when it fails unrecorded.
    const own = await on(sqlA, Effect.either(holdAround({ input: input(k, "own-id", buy(1_000n)), recorded: Effect.succeed(false), what: "spend gate test" }, Effect.fail("chain_unavailable" as const))))
    expect(Either.isLeft(own)).toBe(true)
    expect(await on(sqlA, reservationState("own-id"))).toBe("released")
  })

  it("a release frees the window; the sweep releases only expired holds, at most its bound per pass", async () => {
    const k = await newKey({ usdMicros: 10_000, reset: "never" })
    await on(sqlA, reserve(input(k, "r1", buy(10_000n))))
    expect(Either.isLeft(await on(sqlA, Effect.either(reserve(input(k, "r2", buy(1n))))))).toBe(true)
    expect(await on(sqlA, release("r1"))).toBe(true)
    expect(await on(sqlA, release("r1"))).toBe(false)
    // Three holds that have expired already and one that has not.
    for (const id of ["x1", "x2", "x3"]) await on(sqlA, reserve(input(k, id, buy(1_000n), 0)))
    await on(sqlA, reserve(input(k, "live", buy(1_000n))))
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "never", Date.now()))).toBe(4_000n)
    const mine = () => on(sqlA, sqlA<{ id: string; state: string }>`SELECT id, state FROM spend_reservations WHERE key_id = ${k.keyId} AND id <> 'r1' ORDER BY id`)
    let swept = 0
    for (let pass = 0; pass < 10 && (await mine()).some((r) => r.id !== "live" && r.state === "held"); pass++) {
      const n = await on(sqlB, sweep(2))
      expect(n).toBeLessThanOrEqual(2)
      swept += n
    }
    expect(swept).toBeGreaterThanOrEqual(3)
    expect(await mine()).toEqual([
      { id: "live", state: "held" },
      { id: "x1", state: "released" },
      { id: "x2", state: "released" },
      { id: "x3", state: "released" }
    ])
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "never", Date.now()))).toBe(1_000n)
    // A window reset clears an open hold's weight; a lifetime window keeps it.
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "daily", Date.now() + 86_400_000))).toBe(0n)
    expect(await on(sqlA, windowUsedUsdMicros(k.keyId, "never", Date.now() + 86_400_000))).toBe(1_000n)
  })

  it("the sweep keeps an expired hold while its transfer was sent and is unsettled; settled, the hold is swept", async () => {
    const k = await newKey({ usdMicros: 1_000_000, reset: "never" })
    const transfer = (clientTransferId: string, state: string) =>
      on(
        sqlA,
        sqlA`INSERT INTO transfers (account_id, client_transfer_id, key_id, key_prefix, request_hash, chain, asset, amount_raw, from_address,
          to_address, destination_class, destination_kind, state, signature, created_at, updated_at)
          VALUES (${k.accountId}, ${clientTransferId}, ${k.keyId}, ${k.prefix}, 'h', 'solana', 'sol', 1000, 'F', 'T', 'own', 'wallet', ${state}, 'S', now(), now())`
      )
    const idOf = (clientTransferId: string) => `transfer:${JSON.stringify([k.accountId, clientTransferId])}`
    await transfer("in-flight", "sending")
    await transfer("settled", "failed")
    for (const id of ["in-flight", "settled", "no-row"]) await on(sqlA, reserve(input(k, idOf(id), buy(1_000n), 0)))
    for (let pass = 0; pass < 5; pass++) await on(sqlB, sweep())
    const states = async () => Object.fromEntries(await Promise.all(["in-flight", "settled", "no-row"].map(async (id) => [id, await on(sqlA, reservationState(idOf(id)))])))
    expect(await states()).toEqual({ "in-flight": "held", settled: "released", "no-row": "released" })
    // Settled now (its own save books or releases the hold; here the sweep may): swept.
    await on(sqlA, sqlA`UPDATE transfers SET state = 'confirmed' WHERE account_id = ${k.accountId} AND client_transfer_id = 'in-flight'`)
    await on(sqlB, sweep())
    expect((await states())["in-flight"]).toBe("released")
  })

  it("the sweep keeps the hold of a built TEE transfer whose sign claim the relay signed while its bytes can land (Hood: no expiry); an unsigned one, or Solana bytes past their expiry, are swept", async () => {
    const k = await newKey({ usdMicros: 1_000_000, reset: "never" })
    const past = new Date(Date.now() - 60_000)
    const builtWith = async (clientTransferId: string, chain: "solana" | "hood", claimState: "open" | "signed", txExpiresAt: Date | null) => {
      const claimId = `claim-${k.keyId}-${clientTransferId}`
      await on(
        sqlA,
        sqlA`INSERT INTO sign_claims (id, account_id, wallet_id, key_id, chain, purpose, message_hash, required_scopes, state, created_at, expires_at, tx_expires_at)
          VALUES (${claimId}, ${k.accountId}, 'w', ${k.keyId}, ${chain === "solana" ? "solana" : "evm"}, 'transfer', 'm', '[]'::jsonb, ${claimState}, ${past}, ${past}, ${txExpiresAt})`
      )
      await on(
        sqlA,
        sqlA`INSERT INTO transfers (account_id, client_transfer_id, key_id, key_prefix, request_hash, chain, asset, amount_raw, from_address,
          to_address, destination_class, destination_kind, state, signature, created_at, updated_at, payer, claim_id, claim_expires_at)
          VALUES (${k.accountId}, ${clientTransferId}, ${k.keyId}, ${k.prefix}, 'h', ${chain}, 'eth', 1000, 'F', 'T', 'own', 'vault', 'built', '', now(), now(), 'tee', ${claimId}, ${past})`
      )
    }
    const idOf = (clientTransferId: string) => `transfer:${JSON.stringify([k.accountId, clientTransferId])}`
    await builtWith("hood-signed", "hood", "signed", null)
    await builtWith("hood-unsigned", "hood", "open", null)
    await builtWith("solana-signed-expired", "solana", "signed", past)
    await builtWith("solana-signed-live", "solana", "signed", new Date(Date.now() + 3_600_000))
    const ids = ["hood-signed", "hood-unsigned", "solana-signed-expired", "solana-signed-live"]
    for (const id of ids) await on(sqlA, reserve(input(k, idOf(id), buy(1_000n), 0)))
    for (let pass = 0; pass < 5; pass++) await on(sqlB, sweep())
    const states = async () => Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await on(sqlA, reservationState(idOf(id)))])))
    expect(await states()).toEqual({ "hood-signed": "held", "hood-unsigned": "released", "solana-signed-expired": "released", "solana-signed-live": "held" })
  })
}

describe("spend gate on embedded PGlite", () => {
  gateSuite(() => ({ url: undefined, dataDir: undefined }), 1)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`spend gate on a real PostgreSQL server, two pools${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  gateSuite(() => ({ url: dbUrl, dataDir: undefined }), 2)
})
