/**
 * Test support: uploads from a process of their own, for the cross-process upload-window test
 * (`test/integration/images.test.ts`). Argument: JSON `{databaseUrl, accountId, keyId, limit,
 * count, nowMs, shade}`. Opens the server database (migrated), makes `count` distinct small PNGs,
 * prints `READY`, waits for one line on stdin (so several children start together), runs the
 * uploads at once with the clock fixed at `nowMs`, prints `{"taken", "rateLimited", "other"}` counts and exits.
 */
import { Clock, Effect, Either, Layer } from "effect"
import { createInterface } from "node:readline"
import * as Database from "../../src/db/Database.js"
import * as ImageService from "../../src/services/images/ImageService.js"
import { solidImage } from "./testImages.js"

interface ChildConfig {
  readonly databaseUrl: string
  readonly accountId: string
  readonly keyId: string
  readonly limit: number
  readonly count: number
  readonly nowMs: number
  /** Keeps one child's images distinct from another's. */
  readonly shade: number
}

const config = JSON.parse(process.argv[2] ?? "{}") as ChildConfig

const fixedClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => config.nowMs,
  currentTimeMillis: Effect.succeed(config.nowMs),
  unsafeCurrentTimeNanos: () => BigInt(config.nowMs) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(config.nowMs) * 1_000_000n),
  sleep: () => Effect.void
}

const program = Effect.gen(function* () {
  const images = yield* Effect.promise(() =>
    Promise.all(Array.from({ length: config.count }, (_, i) => solidImage("png", 8, 8, [config.shade, i, 7])))
  )
  const service = yield* ImageService.ImageService
  process.stdout.write("READY\n")
  yield* Effect.async<void>((resume) => {
    const lines = createInterface({ input: process.stdin })
    lines.once("line", () => {
      lines.close()
      resume(Effect.void)
    })
  })
  const results = yield* Effect.forEach(
    images,
    (bytes) => Effect.either(service.upload({ accountId: config.accountId, keyId: config.keyId, uploadsPerMin: config.limit, bytes })),
    { concurrency: "unbounded" }
  )
  const taken = results.filter(Either.isRight).length
  const rateLimited = results.filter((r) => Either.isLeft(r) && r.left._tag === "ImageRefused" && r.left.reason === "rate_limited").length
  process.stdout.write(`${JSON.stringify({ taken, rateLimited, other: results.length - taken - rateLimited })}\n`)
}).pipe(Effect.withClock(fixedClock))

const layer = ImageService.layer({ publicBaseUrl: "https://cs.test.example" }).pipe(
  Layer.provideMerge(Database.layer({ url: config.databaseUrl, dataDir: undefined }))
)

Effect.runPromise(Effect.scoped(Effect.provide(program, layer))).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`upload child failed: ${String(e)}\n`)
    process.exit(1)
  }
)
