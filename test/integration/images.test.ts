/**
 * Hosted images against a real database (embedded PGlite, and a PostgreSQL server when the
 * machine has one): uploads stored content-addressed (same bytes, one row, one id), a square
 * upload's bytes kept exactly and served back with its type and immutable caching, a wide one
 * cropped; the per-key upload window under concurrent uploads at the limit (exactly the limit
 * succeed; on the server also from two independent pools, and from two processes started
 * together) and at its edge in time; the per-account storage bound; this engine's own hosted URLs
 * resolved from storage with the shape rules (a found image's description kept in a bounded memo),
 * and a fetched image re-hosted.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Either, Exit, Layer, Option, Scope } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import type { RecognizedImage } from "../../src/services/images/ImageProcessor.js"
import { imageIdOf } from "../../src/services/images/HostedImageStore.js"
import type { ImageRefused } from "../../src/services/images/ImageRefused.js"
import * as ImageService from "../../src/services/images/ImageService.js"
import { solidImage, stripedImage } from "../support/testImages.js"
import { ManualClock } from "../support/webhookReceiver.js"
import { projectRoot } from "../support/engine.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0)
const BASE = "https://cs.test.example"

type Ctx = Context.Context<SqlClient.SqlClient | ImageService.ImageService>

const build = async (db: Database.DatabaseOptions, options: Partial<ImageService.ImageServiceOptions> = {}) => {
  const scope = await Effect.runPromise(Scope.make())
  const layer = ImageService.layer({ publicBaseUrl: BASE, ...options }).pipe(Layer.provideMerge(Database.layer(db)))
  const context: Ctx = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return { context, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const imagesSuite = (db: () => Database.DatabaseOptions, secondPool: boolean) => {
  const clock = new ManualClock(T0)
  let main: Awaited<ReturnType<typeof build>>
  let tight: Awaited<ReturnType<typeof build>> | undefined
  let other: Awaited<ReturnType<typeof build>> | undefined
  let seq = 0

  beforeAll(async () => {
    main = await build(db())
    // Server only: a second pool on the same database, as a second process would have.
    if (secondPool) other = await build(db())
  }, 120_000)
  afterAll(async () => {
    await other?.close()
    await tight?.close()
    await main?.close()
  })

  const runIn = <A, E>(ctx: Ctx, effect: Effect.Effect<A, E, SqlClient.SqlClient | ImageService.ImageService>) =>
    Effect.runPromise(Effect.provide(effect, ctx).pipe(Effect.withClock(clock)))
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | ImageService.ImageService>) => runIn(main.context, effect)
  const service = (ctx: Ctx = main.context) => Context.get(ctx, ImageService.ImageService)
  const owner = () => {
    seq++
    return { accountId: `acct_img_${seq}`, keyId: `key_img_${seq}` }
  }
  const upload = (o: { accountId: string; keyId: string }, bytes: Uint8Array, uploadsPerMin = 10, ctx: Ctx = main.context) =>
    runIn(ctx, Effect.either(service(ctx).upload({ ...o, uploadsPerMin, bytes })))
  const rowCount = (id: string, ctx: Ctx = main.context) =>
    runIn(ctx, Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM hosted_images WHERE id = ${id}`)).then(
      (r) => r[0]!.n
    )
  const ok = <A>(r: Either.Either<A, ImageRefused | SqlError>): A => {
    if (Either.isLeft(r)) throw new Error(`refused: ${r.left._tag === "ImageRefused" ? r.left.reason : "sql"}: ${r.left.message}`)
    return r.right
  }

  it("stores a square upload's exact bytes once, under the SHA-256 of the bytes, and serves them back", async () => {
    clock.nowMs = T0
    const bytes = await solidImage("png", 64, 64, [1, 2, 3])
    const first = ok(await upload(owner(), bytes))
    const id = imageIdOf(bytes)
    expect(first).toEqual({
      id,
      url: `${BASE}/api/v1/uploads/images/${id}.png`,
      format: "png",
      contentType: "image/png",
      width: 64,
      height: 64,
      byteLength: bytes.byteLength
    })
    // again, from the same and from another account: same id, still one row
    const again = ok(await upload(owner(), bytes))
    expect(again).toEqual(first)
    expect(await rowCount(id)).toBe(1)

    const served = Option.getOrThrow(await run(service().serve(`${id}.png`)))
    expect(Buffer.from(served.body).equals(Buffer.from(bytes))).toBe(true)
    expect(served.headers).toEqual({
      "content-type": "image/png",
      "cache-control": "public, max-age=31536000, immutable",
      etag: `"${id}"`,
      "x-content-type-options": "nosniff"
    })
    // the same id under another extension, an unknown id, and a malformed name are not served
    expect(Option.isNone(await run(service().serve(`${id}.jpg`)))).toBe(true)
    expect(Option.isNone(await run(service().serve(`${"0".repeat(64)}.png`)))).toBe(true)
    expect(Option.isNone(await run(service().serve("agent-image")))).toBe(true)
  })

  it("crops a wide upload to its centered square and stores the crop", async () => {
    clock.nowMs = T0
    const wide = await stripedImage("png", 90, 60, 15, [255, 0, 0], [0, 255, 0])
    const hosted = ok(await upload(owner(), wide))
    expect(hosted).toMatchObject({ width: 60, height: 60, format: "png" })
    expect(hosted.id).not.toBe(imageIdOf(wide))
    expect(await rowCount(imageIdOf(wide))).toBe(0)
    const served = Option.getOrThrow(await run(service().serve(`${hosted.id}.png`)))
    expect(imageIdOf(served.body)).toBe(hosted.id)
  })

  it("refuses what is not an image and records nothing for it", async () => {
    clock.nowMs = T0
    const o = owner()
    const r = await upload(o, new TextEncoder().encode("GIF87a but not really"))
    expect(Either.isLeft(r) && r.left).toMatchObject({ _tag: "ImageRefused", role: "upload", reason: "undecodable" })
    const usage = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM hosted_image_owners WHERE account_id = ${o.accountId}`)
    )
    expect(usage).toHaveLength(0)
  })

  it("lets exactly the plan's limit of concurrent uploads through, then frees the window after a minute", async () => {
    clock.nowMs = T0
    const limit = 10
    const o = owner()
    const images = await Promise.all(Array.from({ length: 25 }, (_, i) => solidImage("png", 16, 16, [i, i, i])))
    const contexts = other === undefined ? [main.context] : [main.context, other.context]
    const results = await Promise.all(images.map((bytes, i) => upload(o, bytes, limit, contexts[i % contexts.length]!)))
    const taken = results.filter(Either.isRight)
    const refused = results.filter(Either.isLeft).map((r) => r.left)
    expect(taken).toHaveLength(limit)
    expect(refused).toHaveLength(25 - limit)
    for (const r of refused) expect(r).toMatchObject({ reason: "rate_limited", retryAfterMs: 60_000, limit, retryable: true })
    const takes = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM image_upload_takes WHERE key_id = ${o.keyId}`)
    )
    expect(takes[0]!.n).toBe(limit)

    // One millisecond before the first takes leave the window: still full, and it says how long.
    clock.nowMs = T0 + 59_999
    const early = await upload(o, images[0]!, limit)
    expect(Either.isLeft(early) && early.left).toMatchObject({ reason: "rate_limited", retryAfterMs: 1 })
    clock.nowMs = T0 + 60_000
    expect(Either.isRight(await upload(o, images[0]!, limit))).toBe(true)
    // another key of the same account has its own window
    expect(Either.isRight(await upload({ ...o, keyId: `${o.keyId}_b` }, images[1]!, limit))).toBe(true)
  }, 60_000)

  it("a limit of zero allows no upload", async () => {
    clock.nowMs = T0
    const r = await upload(owner(), await solidImage("png", 8, 8), 0)
    expect(Either.isLeft(r) && r.left).toMatchObject({ reason: "rate_limited" })
  })

  it("bounds the bytes an account's uploads add up to; an image it already has costs nothing", async () => {
    clock.nowMs = T0
    const a = await solidImage("png", 20, 20, [10, 20, 30])
    const b = await solidImage("png", 20, 20, [40, 50, 60])
    const c = await solidImage("png", 20, 20, [70, 80, 90])
    tight ??= await build(db(), { storedBytesMaxPerAccount: a.byteLength + b.byteLength })
    const small = tight
    const o = owner()
    expect(Either.isRight(await upload(o, a, 10, small.context))).toBe(true)
    expect(Either.isRight(await upload(o, b, 10, small.context))).toBe(true)
    const full = await upload(o, c, 10, small.context)
    expect(Either.isLeft(full) && full.left).toMatchObject({ reason: "storage_full", limitBytes: a.byteLength + b.byteLength })
    expect(await rowCount(imageIdOf(c), small.context)).toBe(0)
    // already its own: no charge
    expect(Either.isRight(await upload(o, a, 10, small.context))).toBe(true)
    // another account is not charged for this one's images
    expect(Either.isRight(await upload(owner(), c, 10, small.context))).toBe(true)
    const usage = await runIn(
      small.context,
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ stored_bytes: string; images: number }>`SELECT stored_bytes, images FROM hosted_image_usage WHERE account_id = ${o.accountId}`)
    )
    expect(usage[0]).toEqual({ stored_bytes: String(a.byteLength + b.byteLength), images: 2 })
  })

  it("resolves this engine's hosted URLs from storage with the shape rules, and re-hosts a fetched image", async () => {
    clock.nowMs = T0
    const square = ok(await upload(owner(), await solidImage("webp", 40, 40)))
    const asImage = await run(service().resolve({ url: square.url, role: "image" }))
    expect(asImage).toEqual({ _tag: "Hosted", image: square })
    const asBanner = await run(Effect.either(service().resolve({ url: square.url, role: "banner" })))
    expect(Either.isLeft(asBanner) && asBanner.left).toMatchObject({ role: "banner", reason: "wrong_shape", width: 40, height: 40 })
    const missing = await run(Effect.either(service().resolve({ url: square.url.replace(square.id, "f".repeat(64)), role: "image" })))
    expect(Either.isLeft(missing) && missing.left).toMatchObject({ reason: "unreachable" })
    const wrongExt = await run(Effect.either(service().resolve({ url: square.url.replace(/\.webp$/, ".png"), role: "image" })))
    expect(Either.isLeft(wrongExt) && wrongExt.left).toMatchObject({ reason: "unreachable" })
    expect(await run(service().rehost(asImage))).toEqual(square)

    const bannerBytes = await solidImage("jpeg", 300, 100)
    const fetched: RecognizedImage = { format: "jpeg", width: 300, height: 100, frames: 1, bytes: bannerBytes }
    const rehosted = await run(service().rehost({ _tag: "Fetched", image: fetched, sourceUrl: "https://art.example.com/b.jpg" }))
    expect(rehosted).toMatchObject({ id: imageIdOf(bannerBytes), format: "jpeg", width: 300, height: 100 })
    expect(rehosted.url).toBe(`${BASE}/api/v1/uploads/images/${imageIdOf(bannerBytes)}.jpg`)
    expect(await run(service().rehost({ _tag: "Fetched", image: fetched, sourceUrl: "https://art.example.com/b.jpg" }))).toEqual(rehosted)
    expect(await rowCount(rehosted.id)).toBe(1)
  })

  it("keeps a hosted image's description once read (its row never changes), reads an id not found again, and keeps at most hostedInfosMax", async () => {
    clock.nowMs = T0
    const memo = await build(db(), { hostedInfosMax: 1 })
    try {
      const resolveIn = (url: string) => runIn(memo.context, Effect.either(service(memo.context).resolve({ url, role: "image" })))
      const o = owner()
      const aBytes = await solidImage("png", 24, 24, [1, 1, 1])
      const aUrl = `${BASE}/api/v1/uploads/images/${imageIdOf(aBytes)}.png`
      // Not stored yet: refused, and nothing kept for it.
      const before = await resolveIn(aUrl)
      expect(Either.isLeft(before) && before.left).toMatchObject({ reason: "unreachable" })
      const a = ok(await upload(o, aBytes, 10, memo.context))
      expect(a.url).toBe(aUrl)
      expect(await resolveIn(aUrl)).toEqual(Either.right({ _tag: "Hosted", image: a }))
      // Rows are never deleted; deleting one here shows the next resolve reads nothing: the kept description answers.
      const remove = (id: string) =>
        runIn(
          memo.context,
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.zipRight(sql`DELETE FROM hosted_image_owners WHERE image_id = ${id}`, sql`DELETE FROM hosted_images WHERE id = ${id}`)
          )
        )
      await remove(a.id)
      expect(await resolveIn(aUrl)).toEqual(Either.right({ _tag: "Hosted", image: a }))
      // The bound (1): a second image's description clears the memo before it is kept.
      const b = ok(await upload(o, await solidImage("png", 24, 24, [2, 2, 2]), 10, memo.context))
      expect(await resolveIn(b.url)).toEqual(Either.right({ _tag: "Hosted", image: b }))
      await remove(b.id)
      expect(await resolveIn(b.url)).toEqual(Either.right({ _tag: "Hosted", image: b }))
      const evicted = await resolveIn(aUrl)
      expect(Either.isLeft(evicted) && evicted.left).toMatchObject({ reason: "unreachable" })
    } finally {
      await memo.close()
    }
  })
}

describe("hosted images on embedded PGlite", () => {
  imagesSuite(() => ({ url: undefined, dataDir: undefined }), false)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`hosted images on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  imagesSuite(() => ({ url: dbUrl, dataDir: undefined }), true)

  it("holds the upload window across processes: two processes uploading at once take exactly the limit", async () => {
    const limit = 10
    const children = await Promise.all(
      [1, 2].map((shade) =>
        startUploadChild({ databaseUrl: dbUrl, accountId: "acct_procs", keyId: "key_procs", limit, count: 9, nowMs: T0, shade })
      )
    )
    try {
      for (const c of children) c.go()
      const counts = await Promise.all(children.map((c) => c.result))
      expect(counts.reduce((sum, c) => sum + c.taken, 0)).toBe(limit)
      expect(counts.reduce((sum, c) => sum + c.rateLimited, 0)).toBe(18 - limit)
      expect(counts.map((c) => c.other)).toEqual([0, 0])
    } finally {
      for (const c of children) c.kill()
    }
  }, 120_000)
})

const uploadChild = path.join(projectRoot, "test/support/imageUploadChild.ts")

interface ChildCounts {
  readonly taken: number
  readonly rateLimited: number
  readonly other: number
}

/** Starts `uploadChild.ts`; resolves once it is ready; `go()` starts its uploads. */
const startUploadChild = (config: Record<string, unknown>) =>
  new Promise<{ go: () => void; result: Promise<ChildCounts>; kill: () => void }>((ready, fail) => {
    const child = spawn(process.execPath, ["--import", "tsx", uploadChild, JSON.stringify(config)], { cwd: projectRoot, stdio: ["pipe", "pipe", "pipe"] })
    let output = ""
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()))
    let settle: (c: ChildCounts) => void = () => {}
    let reject: (e: Error) => void = () => {}
    const result = new Promise<ChildCounts>((ok, no) => {
      settle = ok
      reject = no
    })
    const timer = setTimeout(() => fail(new Error(`upload child not ready:\n${output}`)), 60_000)
    createInterface({ input: child.stdout! }).on("line", (line) => {
      output += `${line}\n`
      if (line === "READY") {
        clearTimeout(timer)
        ready({ go: () => child.stdin!.write("go\n"), result, kill: () => child.kill("SIGKILL") })
      } else if (line.startsWith("{")) settle(JSON.parse(line) as ChildCounts)
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      const error = new Error(`upload child exited (${code}):\n${output}`)
      fail(error)
      reject(error)
    })
  })
