/**
 * Hosted images (launch spec 4 "uploads" and endpoint rule 11) and the `imageUrl` / `bannerUrl`
 * fetches (spec 2.1), for the upload, serving and launch routes, which stay thin: they decode the
 * request, call one method, and map `ImageRefused` through the error table.
 *
 * - `upload`: takes one upload from the key's per-minute window (the plan's limit, across
 *   processes), recognizes the bytes, crops to a centered square unless already square (then the
 *   bytes are kept exactly), and stores the result content-addressed under the account's storage
 *   bound. The take comes first: a refused body still spends its slot, as an attempt.
 * - `resolve`: what an `imageUrl` / `bannerUrl` names, judged by the role's shape rule, writing
 *   nothing (dry runs use it). This engine's own hosted URLs are read from storage, never fetched
 *   (and may be `http:` when the engine is); any other URL is fetched under `ImageFetcher`'s rules.
 *   A hosted image's description, once read, is kept in a bounded memo (`hostedInfosMax`): its row
 *   never changes and is never deleted (`HostedImageStore`), so nothing invalidates it; an id not
 *   found is read again next time (issue 34: the dry run's image check without a statement).
 * - `rehost`: stores a fetched image (content-addressed, no owner, no storage charge: each launch
 *   re-hosts at most two images and launches have their own daily cap) and gives its hosted URL.
 * - `serve`: the bytes and headers for `GET /api/v1/uploads/images/<id>.<ext>`.
 *
 * At most `decodesMax` images are decoded at once in this process; further ones wait.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { type TokenMetadataDirectory, TokenMetadataRegistry } from "../../../actors/TokenMetadata.js"
import { readMetadata, storeMetadata } from "./HostedMetadata.js"
import { metadataIdOf, metadataUrl, parseMetadataFile, type TokenMetadataFields, tokenMetadataDocument, viewOfDocument } from "./TokenMetadataDocument.js"
import { type Resolver, systemResolver } from "../../net/PublicTarget.js"
import { hostedUrl, parseHostedFile, parseHostedUrl } from "./HostedImageUrl.js"
import { imageIdOf, lookupImage, readImage, storeImage, storeUpload, type StoredImageInfo, takeUpload } from "./HostedImageStore.js"
import { fetchImageBytes } from "./ImageFetcher.js"
import { contentTypeOf, type ImageFormat } from "./ImageFormat.js"
import { defaultImageLimits, type ImageLimits, recognize, type RecognizedImage, squareForUpload } from "./ImageProcessor.js"
import { imageRefused, type ImageRefused } from "./ImageRefused.js"
import { isRoughlySquare, isWideBanner } from "./ImageShape.js"
import * as Database from "../../db/Database.js"
import { BoundedMemo } from "../../platform/BoundedMemo.js"

/** The spec's upload limit is per minute. */
export const uploadWindowMs = 60_000
/** Default bound on the bytes of the distinct images one account has uploaded: 1 GiB. */
export const defaultStoredBytesMaxPerAccount = 1024 * 1024 * 1024
/** Default bound on the hosted images' descriptions kept in memory (about 200 bytes each). */
export const defaultHostedInfosMax = 10_000
/** `Cache-Control` of a served image: its URL names its bytes, so it never changes. */
export const hostedImageCacheControl = "public, max-age=31536000, immutable"

export interface HostedImage {
  readonly id: string
  readonly url: string
  readonly format: ImageFormat
  readonly contentType: string
  readonly width: number
  readonly height: number
  readonly byteLength: number
}

export interface UploadInput {
  readonly accountId: string
  readonly keyId: string
  /** The plan's uploads per minute for this key. */
  readonly uploadsPerMin: number
  /** The image bytes (the multipart `image` part, or the raw body). */
  readonly bytes: Uint8Array
}

export interface ResolveInput {
  readonly url: string
  readonly role: "image" | "banner"
}

export type ResolvedImage =
  /** One of this engine's hosted images: nothing was fetched. */
  | { readonly _tag: "Hosted"; readonly image: HostedImage }
  /** Fetched and recognized, not stored yet. */
  | { readonly _tag: "Fetched"; readonly image: RecognizedImage; readonly sourceUrl: string }

export interface ServedImage {
  readonly body: Uint8Array
  readonly headers: Readonly<Record<string, string>>
}

/** A launch's pictures as the image step resolved them. */
export interface LaunchPictures {
  readonly image: ResolvedImage
  readonly banner: ResolvedImage | null
}

/** What a launch's metadata document says besides its pictures (a `LaunchRequest` is one). */
export type MetadataTexts = Pick<TokenMetadataFields, "name" | "symbol" | "description" | "socials">

export interface ImageServiceShape {
  readonly upload: (input: UploadInput) => Effect.Effect<HostedImage, ImageRefused | SqlError>
  readonly resolve: (input: ResolveInput) => Effect.Effect<ResolvedImage, ImageRefused | SqlError>
  readonly rehost: (resolved: ResolvedImage) => Effect.Effect<HostedImage, SqlError>
  /** The URL `rehost` gives this image, computed without storing anything (what a dry run sizes the launch with). */
  readonly hostedUrlOf: (resolved: ResolvedImage) => string
  /** `file` is the last path segment (`<id>.<ext>`); none for anything not hosted here. */
  readonly serve: (file: string) => Effect.Effect<Option.Option<ServedImage>, SqlError>
  /**
   * The launch's metadata URI (its hosted document, `TokenMetadataDocument.ts`), computed without
   * storing anything: what a dry run sizes the launch with, and what `hostLaunch` stores.
   */
  readonly metadataUrlOf: (texts: MetadataTexts, pictures: LaunchPictures) => string
  /** Re-hosts the pictures and stores the metadata document (all content-addressed, idempotent). */
  readonly hostLaunch: (texts: MetadataTexts, pictures: LaunchPictures) => Effect.Effect<{ readonly image: HostedImage; readonly metadataUrl: string }, SqlError>
  /** `file` is `<id>.json`; none for anything not hosted here. */
  readonly serveMetadata: (file: string) => Effect.Effect<Option.Option<ServedImage>, SqlError>
}

export class ImageService extends Context.Tag("curvestream/ImageService")<ImageService, ImageServiceShape>() {}

export interface ImageServiceOptions {
  /** The engine's public base URL: hosted URLs are built under it and recognized by it. */
  readonly publicBaseUrl: string
  /** Tests only: `imageUrl` / `bannerUrl` may be loopback (and `http:` to it). Default off. */
  readonly allowLoopbackForTests?: boolean
  readonly resolve?: Resolver
  /** Deadline of one DNS resolution (default 5 s). */
  readonly resolveTimeoutMs?: number
  /** Deadline of one image fetch, body included (default 10 s). */
  readonly fetchTimeoutMs?: number
  /** Extra trusted certificates for fetches (tests with a self-signed server). */
  readonly tlsCa?: string
  readonly limits?: ImageLimits
  readonly storedBytesMaxPerAccount?: number
  /** Images decoded at once in this process (default 2). */
  readonly decodesMax?: number
  /** Hosted images' descriptions kept once read (default `defaultHostedInfosMax`; cleared at the bound). */
  readonly hostedInfosMax?: number
  /** This process's metadata directory: a document this process hosts is readable at once. */
  readonly metadata?: TokenMetadataDirectory
}

const positive = (name: string, v: number): number => {
  if (!(Number.isSafeInteger(v) && v > 0)) throw new Error(`ImageService: ${name} must be a positive integer`)
  return v
}

const shapeRefusal = (role: "image" | "banner", d: { width: number; height: number }): ImageRefused | undefined => {
  if (role === "image" && !isRoughlySquare(d)) {
    return imageRefused(role, "wrong_shape", `imageUrl must be roughly square (aspect ratio at most 1.5:1); it is ${d.width}x${d.height}`, d)
  }
  if (role === "banner" && !isWideBanner(d)) {
    return imageRefused(role, "wrong_shape", `bannerUrl must be wider than 1.5:1; it is ${d.width}x${d.height}`, d)
  }
  return undefined
}

export const make = (options: ImageServiceOptions): Effect.Effect<ImageServiceShape, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<SqlClient.SqlClient>()
    const base = options.publicBaseUrl
    new URL(base) // a malformed base is a configuration defect
    const limits = options.limits ?? defaultImageLimits
    positive("limits.bytesMax", limits.bytesMax)
    positive("limits.pixelsMax", limits.pixelsMax)
    const storedBytesMax = positive("storedBytesMaxPerAccount", options.storedBytesMaxPerAccount ?? defaultStoredBytesMaxPerAccount)
    const policy = {
      allowLoopback: options.allowLoopbackForTests === true,
      resolve: options.resolve ?? systemResolver,
      resolveTimeoutMs: positive("resolveTimeoutMs", options.resolveTimeoutMs ?? 5_000),
      fetchTimeoutMs: positive("fetchTimeoutMs", options.fetchTimeoutMs ?? 10_000),
      bytesMax: limits.bytesMax,
      tlsCa: options.tlsCa
    }
    const decodes = yield* Effect.makeSemaphore(positive("decodesMax", options.decodesMax ?? 2))
    const hostedInfos = new BoundedMemo<string, StoredImageInfo>(positive("hostedInfosMax", options.hostedInfosMax ?? defaultHostedInfosMax))
    /** A hosted image's description: kept once found (immutable), read again while not found. */
    const hostedInfo = (id: string) => {
      const kept = hostedInfos.peek(id)
      if (kept !== undefined) return Effect.succeed(Option.some(kept))
      return Effect.tap(lookupImage(id), (info) => (Option.isSome(info) ? Effect.sync(() => hostedInfos.keep(id, info.value)) : Effect.void))
    }

    const hosted = (info: StoredImageInfo): HostedImage => ({
      id: info.id,
      url: hostedUrl(base, info),
      format: info.format,
      contentType: contentTypeOf[info.format],
      width: info.width,
      height: info.height,
      byteLength: info.byteLength
    })

    const upload = Effect.fn("ImageService.upload")(function* (input: UploadInput) {
      const nowMs = yield* Clock.currentTimeMillis
      const take = yield* takeUpload(input.keyId, input.uploadsPerMin, uploadWindowMs, nowMs)
      if (!take.taken) {
        return yield* imageRefused("upload", "rate_limited", `Over ${input.uploadsPerMin} image uploads per minute for this key`, {
          retryAfterMs: take.retryAfterMs,
          limit: input.uploadsPerMin
        })
      }
      const square = yield* decodes.withPermits(1)(
        Effect.flatMap(recognize(input.bytes, "upload", limits), (image) => squareForUpload(image, limits))
      )
      return hosted(yield* storeUpload(input.accountId, square, storedBytesMax, yield* Clock.currentTimeMillis))
    }, Effect.provide(context))

    const resolve = Effect.fn("ImageService.resolve")(function* (input: ResolveInput) {
      const field = input.role === "image" ? "imageUrl" : "bannerUrl"
      const own = parseHostedUrl(base, input.url)
      if (own !== undefined) {
        const info = yield* hostedInfo(own.id)
        if (Option.isNone(info) || info.value.format !== own.format) {
          return yield* imageRefused(input.role, "unreachable", `${field} names no image hosted here`, { statusCode: 404 })
        }
        const refusal = shapeRefusal(input.role, info.value)
        if (refusal !== undefined) return yield* refusal
        return { _tag: "Hosted", image: hosted(info.value) } satisfies ResolvedImage
      }
      const bytes = yield* fetchImageBytes(input.url, input.role, policy)
      const image = yield* decodes.withPermits(1)(recognize(bytes, input.role, limits))
      const refusal = shapeRefusal(input.role, image)
      if (refusal !== undefined) return yield* refusal
      return { _tag: "Fetched", image, sourceUrl: input.url } satisfies ResolvedImage
    }, Effect.provide(context))

    const rehost = Effect.fn("ImageService.rehost")(function* (resolved: ResolvedImage) {
      if (resolved._tag === "Hosted") return resolved.image
      return hosted(yield* storeImage(resolved.image, yield* Clock.currentTimeMillis))
    }, Effect.provide(context))

    const hostedUrlOf = (resolved: ResolvedImage): string =>
      resolved._tag === "Hosted" ? resolved.image.url : hostedUrl(base, { id: imageIdOf(resolved.image.bytes), format: resolved.image.format })

    const serve = Effect.fn("ImageService.serve")(function* (file: string) {
      const ref = parseHostedFile(file)
      if (ref === undefined) return Option.none()
      const stored = yield* readImage(ref.id)
      if (Option.isNone(stored) || stored.value.format !== ref.format) return Option.none()
      return Option.some<ServedImage>({
        body: stored.value.bytes,
        headers: {
          "content-type": contentTypeOf[ref.format],
          "cache-control": hostedImageCacheControl,
          etag: `"${ref.id}"`,
          "x-content-type-options": "nosniff"
        }
      })
    }, Effect.provide(context))

    const documentOf = (texts: MetadataTexts, pictures: LaunchPictures): Uint8Array =>
      tokenMetadataDocument({
        name: texts.name,
        symbol: texts.symbol,
        description: texts.description,
        socials: texts.socials,
        image: hostedUrlOf(pictures.image),
        banner: pictures.banner === null ? null : hostedUrlOf(pictures.banner)
      })

    const metadataUrlOf = (texts: MetadataTexts, pictures: LaunchPictures): string => metadataUrl(base, metadataIdOf(documentOf(texts, pictures)))

    const hostLaunch = Effect.fn("ImageService.hostLaunch")(function* (texts: MetadataTexts, pictures: LaunchPictures) {
      const image = yield* rehost(pictures.image)
      if (pictures.banner !== null) yield* rehost(pictures.banner)
      const document = documentOf(texts, pictures)
      const id = yield* storeMetadata(document, yield* Clock.currentTimeMillis)
      const view = viewOfDocument(document)
      if (view !== undefined) options.metadata?.add(id, view)
      return { image, metadataUrl: metadataUrl(base, id) }
    }, Effect.provide(context))

    const serveMetadata = Effect.fn("ImageService.serveMetadata")(function* (file: string) {
      const id = parseMetadataFile(file)
      if (id === undefined) return Option.none()
      const stored = yield* readMetadata(id)
      if (Option.isNone(stored)) return Option.none()
      return Option.some<ServedImage>({
        body: stored.value,
        headers: {
          "content-type": "application/json",
          "cache-control": hostedImageCacheControl,
          etag: `"${id}"`,
          "x-content-type-options": "nosniff",
          // Wallets and explorers read token metadata from their own origins.
          "access-control-allow-origin": "*"
        }
      })
    }, Effect.provide(context))

    return { upload, resolve, rehost, hostedUrlOf, serve, metadataUrlOf, hostLaunch, serveMetadata }
  })

/** The process's `TokenMetadataRegistry`, when one is in context, is told of every document this service hosts. */
export const layer = (options: ImageServiceOptions): Layer.Layer<ImageService, never, SqlClient.SqlClient> =>
  Layer.effect(
    ImageService,
    Effect.flatMap(Effect.serviceOption(TokenMetadataRegistry), (registry) =>
      make(Option.isSome(registry) && options.metadata === undefined ? { ...options, metadata: registry.value } : options)
    )
  )

/**
 * The real image service over `Database.layerTest`: hosted under `https://api.example.test`,
 * loopback image URLs allowed; the rest (DNS, limits, trusted certificates) are the test's.
 */
export const layerTest = (options: Partial<ImageServiceOptions> = {}) =>
  layer({ publicBaseUrl: "https://api.example.test", allowLoopbackForTests: true, ...options }).pipe(Layer.provide(Database.layerTest))
