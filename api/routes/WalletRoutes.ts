/**
 * Wallet routes (spec document 2: 2.3 and the wallet and TEE rows of 4.1): list, link-existing,
 * revoke, HPKE import (init, submit), the sign relay, TEE wallets and TEE rebind (preview,
 * commit, history). Each handler authenticates through the injected `authenticate`, checks the
 * credential kind and scope itself (so the rules hold whatever the middleware enforces), parses
 * the body naming the first bad field, and hands a typed input to the `WalletService`.
 *
 * Credential kinds: wallet reads and writes take an agent key or a session; the sign relay an
 * agent key with `swap:write`; import an agent key with `launch:write` or a session; TEE wallet
 * administration and rebind a session or device token, never an agent key.
 */
import { Effect, Schema } from "effect"
import { apiError, type ApiError, validationFailed } from "../../src/domain/ApiError.js"
import type { ErrorCode } from "../../src/domain/ErrorCodes.js"
import { canonicalAddress, parseWalletChain, type WalletChain } from "../../src/services/wallets/ChainKeys.js"
import { MAX_SEALED_BYTES, P256_PUBLIC_KEY_BYTES } from "../../src/services/wallets/Hpke.js"
import {
  AUTH_HEADERS,
  type Authenticate,
  type AuthNeed,
  type CredentialKind,
  holdsScope,
  type Principal
} from "../../src/services/wallets/Principal.js"
import {
  REBIND_HISTORY_LIMIT_DEFAULT,
  REBIND_HISTORY_LIMIT_MAX,
  type RebindInput,
  type WalletRefusal,
  type WalletServiceShape
} from "../../src/services/wallets/WalletService.js"
import { json, type Reply, type Request } from "../Http.js"
import type { RouteDef } from "../Router.js"
import { isApiError as isErr } from "../QueryParams.js"

export interface WalletRoutesDeps {
  readonly wallets: WalletServiceShape
  readonly authenticate: Authenticate
}

/** Rebind bodies carry up to 200 ids and an `expect` map; everything else is small. */
export const REBIND_BODY_MAX_BYTES = 64 * 1024
export const WALLET_BODY_MAX_BYTES = 8 * 1024
export const LABEL_MAX_CHARS = 64
const ID_MAX_CHARS = 128
const SELECTOR_MAX_CHARS = 128

const KEY_OR_SESSION: ReadonlyArray<CredentialKind> = ["agentKey", "session"]
const OWNER: ReadonlyArray<CredentialKind> = ["session", "device"]

const fromRefusal = (r: WalletRefusal): ApiError =>
  apiError(r.code as ErrorCode, r.message, {
    ...(r.field !== undefined ? { field: r.field } : {}),
    ...(r.status !== undefined ? { status: r.status } : {}),
    ...(r.extra !== undefined ? { extra: r.extra } : {})
  })

/** Service failures to the wire: refusals as they are, storage failures as defects (500, nothing recorded). */
const toWire = <A>(effect: Effect.Effect<A, WalletRefusal | { readonly _tag: "SqlError" }>): Effect.Effect<A, ApiError> =>
  effect.pipe(
    Effect.catchAll((e) => (e._tag === "WalletRefusal" ? Effect.fail(fromRefusal(e as WalletRefusal)) : Effect.die(e)))
  )

const credentialName: Record<CredentialKind, string> = { session: "a session", device: "a device token", agentKey: "an agent key" }

/** The route's own check of what `authenticate` resolved. */
const admit = (p: Principal, need: AuthNeed): Effect.Effect<Principal, ApiError> => {
  if (!need.credentials.includes(p.credential)) {
    return Effect.fail(
      apiError("UNAUTHORIZED", `This route takes ${need.credentials.map((c) => credentialName[c]).join(" or ")}, not ${credentialName[p.credential]}`)
    )
  }
  if (need.scope !== undefined && !holdsScope(p, need.scope)) {
    return Effect.fail(apiError("SCOPE_MISSING", `The key lacks the ${need.scope} scope`, { extra: { scope: need.scope } }))
  }
  return Effect.succeed(p)
}

// --- body parsing --------------------------------------------------------------------------------

type Body = Readonly<Record<string, unknown>>

const objectBody = (req: Request): Body | ApiError =>
  typeof req.body === "object" && req.body !== null && !Array.isArray(req.body)
    ? (req.body as Body)
    : validationFailed("body", "Request body must be a JSON object")

/** A null value reads as absent. */
const present = (body: Body, key: string): boolean => body[key] !== undefined && body[key] !== null

const chainField = (body: Body): WalletChain | ApiError =>
  parseWalletChain(body.chain) ?? validationFailed("chain", "chain must be solana or evm")

const addressField = (body: Body, key: string, chain: WalletChain): string | ApiError =>
  canonicalAddress(chain, body[key]) ??
  validationFailed(key, chain === "solana" ? `${key} must be a base58 Solana address` : `${key} must be a 0x-prefixed 20-byte address (EIP-55 when mixed case)`)

const stringField = (body: Body, key: string, maxChars: number): string | ApiError => {
  const v = body[key]
  return typeof v === "string" && v.length >= 1 && v.length <= maxChars ? v : validationFailed(key, `${key} must be a string of 1 to ${maxChars} characters`)
}

const labelField = (body: Body): string | undefined | ApiError => {
  if (!present(body, "label")) return undefined
  const v = body.label
  const trimmed = typeof v === "string" ? v.trim() : ""
  return trimmed.length >= 1 && trimmed.length <= LABEL_MAX_CHARS
    ? trimmed
    : validationFailed("label", `label must be 1 to ${LABEL_MAX_CHARS} characters after trimming`)
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$|^[A-Za-z0-9_-]+$/

const base64Field = (body: Body, key: string, minBytes: number, maxBytes: number): Uint8Array | ApiError => {
  const v = body[key]
  if (typeof v !== "string" || v.length === 0 || v.length > Math.ceil((maxBytes * 4) / 3) + 4 || !BASE64.test(v)) {
    return validationFailed(key, `${key} must be base64`)
  }
  const bytes = new Uint8Array(Buffer.from(v, v.includes("-") || v.includes("_") ? "base64url" : "base64"))
  return bytes.byteLength >= minBytes && bytes.byteLength <= maxBytes
    ? bytes
    : validationFailed(key, `${key} must decode to ${minBytes === maxBytes ? minBytes : `${minBytes} to ${maxBytes}`} bytes`)
}

/** A P-256 public key as SPKI DER, from base64 of either the 65-byte uncompressed point or SPKI DER. */
const signerKeyField = (body: Body): Effect.Effect<Uint8Array, ApiError> => {
  const raw = base64Field(body, "signerPublicKey", P256_PUBLIC_KEY_BYTES, 200)
  if (!(raw instanceof Uint8Array)) return Effect.fail(raw)
  return Effect.tryPromise({
    try: async () => {
      const format = raw.byteLength === P256_PUBLIC_KEY_BYTES ? "raw" : "spki"
      const key = await crypto.subtle.importKey(format, new Uint8Array(raw), { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"])
      return new Uint8Array(await crypto.subtle.exportKey("spki", key))
    },
    catch: () => validationFailed("signerPublicKey", "signerPublicKey must be a P-256 public key (uncompressed point or SPKI), base64")
  })
}

/** Solana transactions travel as base64 wire bytes, EVM ones as 0x-hex. */
const transactionField = (body: Body): Uint8Array | ApiError => {
  const v = body.transaction
  if (typeof v === "string" && /^0x([0-9a-fA-F]{2})+$/.test(v) && v.length <= 2 + 2 * 128 * 1024) return new Uint8Array(Buffer.from(v.slice(2), "hex"))
  return base64Field(body, "transaction", 1, 4096)
}


/** Runs a parse step list, failing with the first refusal. */
const parsed = <A>(v: A | ApiError): Effect.Effect<A, ApiError> => (isErr(v) ? Effect.fail(v) : Effect.succeed(v))

const ok = (value: unknown): Reply => json(200, value)

// --- docs ---------------------------------------------------------------------------------------

const Obj = (identifier: string, description: string) =>
  Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ identifier, description })

const WalletList = Obj("WalletList", "`{success, wallets[] {id, chain, address, walletKind, label?, allowLaunch, boundKeyPrefix?, createdAt}, embeddedWallets[]}`")
const WalletEnvelope = Obj("WalletEnvelope", "`{success, wallet}`")
const Refusal = { description: "Refusal in the error envelope (`code`, `field` or `reason`)" }

const idParam = { name: "id", description: "Wallet id", schema: { type: "string" } }

export const walletRoutes = (deps: WalletRoutesDeps): ReadonlyArray<RouteDef> => {
  const { wallets, authenticate } = deps

  const withPrincipal = (req: Request, need: AuthNeed, f: (p: Principal) => Effect.Effect<Reply, ApiError>) =>
    authenticate(req.headers, need).pipe(
      Effect.flatMap((p) => admit(p, need)),
      Effect.flatMap(f)
    )

  const withBody = (req: Request, need: AuthNeed, f: (p: Principal, body: Body) => Effect.Effect<Reply, ApiError>) =>
    withPrincipal(req, need, (p) => Effect.flatMap(parsed(objectBody(req)), (body) => f(p, body)))

  return [
    {
      method: "GET",
      path: "/api/v1/agent/wallets",
      operationId: "listWallets",
      summary: "The account's active linked, imported and TEE wallets, and its embedded wallets",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      responses: { 200: { description: "Wallets", schema: WalletList }, 401: Refusal },
      handler: (req) => withPrincipal(req, { credentials: KEY_OR_SESSION }, (p) => toWire(wallets.list(p)).pipe(Effect.map((r) => ok({ success: true, ...r }))))
    },
    {
      method: "GET",
      path: "/api/v1/agent/wallets/link-challenge",
      operationId: "walletLinkChallenge",
      summary: "The message to sign with an existing wallet to link it",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      query: [
        { name: "chain", description: "solana or evm", required: true, schema: { type: "string", enum: ["solana", "evm"] } },
        { name: "address", description: "The wallet's address", required: true, schema: { type: "string" } }
      ],
      responses: { 200: { description: "`{success, chain, address, message}`", schema: Obj("LinkChallenge", "challenge") }, 400: Refusal },
      handler: (req) =>
        withPrincipal(req, { credentials: KEY_OR_SESSION }, (p) =>
          Effect.gen(function* () {
            const q = new URLSearchParams(req.query)
            const body = { chain: q.get("chain"), address: q.get("address") }
            const chain = yield* parsed(chainField(body))
            const address = yield* parsed(addressField(body, "address", chain))
            return ok({ success: true, chain, address, message: wallets.linkChallenge(p, chain, address) })
          })
        )
    },
    {
      method: "POST",
      path: "/api/v1/agent/wallets",
      operationId: "linkWallet",
      summary: "Link an existing wallet (attribution only; Pro or Max)",
      description:
        "Body `{chain, address, signature, label?}`. `signature` proves control of the address over the link challenge: base58 ed25519 on Solana, EIP-191 personal_sign on EVM.",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      body: { schema: Obj("LinkWalletBody", "`{chain, address, signature, label?}`"), maxBytes: WALLET_BODY_MAX_BYTES },
      responses: {
        200: { description: "The linked wallet", schema: WalletEnvelope },
        400: Refusal,
        403: Refusal,
        409: Refusal
      },
      handler: (req) =>
        withBody(req, { credentials: KEY_OR_SESSION }, (p, body) =>
          Effect.gen(function* () {
            const chain = yield* parsed(chainField(body))
            const address = yield* parsed(addressField(body, "address", chain))
            const signature = yield* parsed(stringField(body, "signature", 256))
            const label = yield* parsed(labelField(body))
            const wallet = yield* toWire(wallets.link(p, { chain, address, signature, ...(label !== undefined ? { label } : {}) }))
            return ok({ success: true, wallet })
          })
        )
    },
    {
      method: "DELETE",
      path: "/api/v1/agent/wallets/{id}",
      operationId: "revokeWallet",
      summary: "Revoke (tombstone) a wallet; idempotent",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      pathParams: [idParam],
      responses: { 200: { description: "`{success, id, revokedAt, policyNeutralized?}`", schema: Obj("RevokeWallet", "revoke") }, 404: Refusal },
      handler: (req) => withPrincipal(req, { credentials: KEY_OR_SESSION }, (p) => toWire(wallets.revoke(p, req.params[0] ?? "")).pipe(Effect.map(ok)))
    },
    {
      method: "PATCH",
      path: "/api/v1/agent/wallets/{id}",
      operationId: "updateWallet",
      summary: "Owner: turn a TEE wallet's allowLaunch on or off, or rename a wallet",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      pathParams: [idParam],
      body: { schema: Obj("UpdateWalletBody", "`{allowLaunch?, label?}`"), maxBytes: WALLET_BODY_MAX_BYTES },
      responses: { 200: { description: "The wallet", schema: WalletEnvelope }, 400: Refusal, 404: Refusal },
      handler: (req) =>
        withBody(req, { credentials: OWNER }, (p, body) =>
          Effect.gen(function* () {
            if (!present(body, "allowLaunch") && !present(body, "label")) {
              return yield* validationFailed("body", "Send allowLaunch or label")
            }
            const allowLaunch = body.allowLaunch
            if (present(body, "allowLaunch") && typeof allowLaunch !== "boolean") {
              return yield* validationFailed("allowLaunch", "allowLaunch must be a boolean")
            }
            const label = yield* parsed(labelField(body))
            const wallet = yield* toWire(
              wallets.update(p, req.params[0] ?? "", {
                ...(typeof allowLaunch === "boolean" ? { allowLaunch } : {}),
                ...(label !== undefined ? { label } : {})
              })
            )
            return ok({ success: true, wallet })
          })
        )
    },
    {
      method: "POST",
      path: "/api/v1/agent/wallets/import/init",
      operationId: "walletImportInit",
      summary: "Start an HPKE import: returns the encryption public key",
      description:
        "Body `{chain, address}`. Seal the key's text (hex for evm, base58 for solana) with RFC 9180 Base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305, empty info and aad, to `encryptionPublicKey`; then submit within 10 minutes.",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      body: { schema: Obj("ImportInitBody", "`{chain, address}`"), maxBytes: WALLET_BODY_MAX_BYTES },
      responses: {
        200: { description: "`{success, importId, chain, address, encryptionPublicKey, hpke, expiresAt}`", schema: Obj("ImportInit", "init") },
        400: Refusal,
        403: Refusal,
        409: Refusal
      },
      handler: (req) =>
        withBody(req, { credentials: KEY_OR_SESSION, scope: "launch:write" }, (p, body) =>
          Effect.gen(function* () {
            const chain = yield* parsed(chainField(body))
            const address = yield* parsed(addressField(body, "address", chain))
            return ok(yield* toWire(wallets.importInit(p, chain, address)))
          })
        )
    },
    {
      method: "POST",
      path: "/api/v1/agent/wallets/import/submit",
      operationId: "walletImportSubmit",
      summary: "Finish an HPKE import: the sealed key, its encapsulated key and the signer public key",
      description: "Body `{ciphertext, encapsulatedKey, signerPublicKey, label?}` (base64).",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      body: { schema: Obj("ImportSubmitBody", "`{ciphertext, encapsulatedKey, signerPublicKey, label?}`"), maxBytes: WALLET_BODY_MAX_BYTES },
      responses: { 200: { description: "The imported wallet", schema: WalletEnvelope }, 400: Refusal, 403: Refusal, 409: Refusal },
      handler: (req) =>
        withBody(req, { credentials: KEY_OR_SESSION, scope: "launch:write" }, (p, body) =>
          Effect.gen(function* () {
            const ciphertext = yield* parsed(base64Field(body, "ciphertext", 17, MAX_SEALED_BYTES))
            const encapsulatedKey = yield* parsed(base64Field(body, "encapsulatedKey", P256_PUBLIC_KEY_BYTES, P256_PUBLIC_KEY_BYTES))
            if (encapsulatedKey[0] !== 0x04) return yield* validationFailed("encapsulatedKey", "encapsulatedKey must be an uncompressed P-256 point")
            const signerSpki = yield* signerKeyField(body)
            const label = yield* parsed(labelField(body))
            const wallet = yield* toWire(
              wallets.importSubmit(p, { ciphertext, encapsulatedKey, signerSpki, ...(label !== undefined ? { label } : {}) })
            )
            return ok({ success: true, wallet })
          })
        )
    },
    {
      method: "POST",
      path: "/api/v1/agent/wallets/{id}/sign",
      operationId: "walletSign",
      summary: "Sign relay: signs a transaction the service built, once, under its build claim",
      description:
        "Body `{claimId, transaction, authorizationSignature?}`: `transaction` is base64 wire bytes (Solana) or 0x-hex (EVM); imported wallets need `authorizationSignature`, base64 P-256 ECDSA (r||s) by the signer key over the transaction bytes.",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      pathParams: [idParam],
      body: { schema: Obj("SignBody", "`{claimId, transaction, authorizationSignature?}`"), maxBytes: WALLET_BODY_MAX_BYTES * 2 },
      responses: { 200: { description: "`{success, walletId, chain, claimId, signature, signedTransaction}`", schema: Obj("SignResult", "signature") }, 403: Refusal, 404: Refusal },
      handler: (req) =>
        withBody(req, { credentials: ["agentKey"], scope: "swap:write" }, (p, body) =>
          Effect.gen(function* () {
            const claimId = yield* parsed(stringField(body, "claimId", ID_MAX_CHARS))
            const transaction = yield* parsed(transactionField(body))
            const authorizationSignature = present(body, "authorizationSignature")
              ? yield* parsed(base64Field(body, "authorizationSignature", 64, 64))
              : undefined
            const signed = yield* toWire(
              wallets.signClaimed(p, req.params[0] ?? "", {
                claimId,
                transaction,
                ...(authorizationSignature !== undefined ? { authorizationSignature } : {})
              })
            )
            return ok({ success: true, ...signed })
          })
        )
    },
    {
      method: "POST",
      path: "/api/v1/agent/tee-wallets",
      operationId: "createTeeWallet",
      summary: "Owner: create a TEE wallet bound to one key",
      description: "Body `{chain, keyPrefix, label?, allowLaunch?, vaultDestination?}`.",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      body: { schema: Obj("CreateTeeBody", "`{chain, keyPrefix, label?, allowLaunch?, vaultDestination?}`"), maxBytes: WALLET_BODY_MAX_BYTES },
      responses: { 200: { description: "The TEE wallet", schema: WalletEnvelope }, 400: Refusal, 403: Refusal },
      handler: (req) =>
        withBody(req, { credentials: OWNER }, (p, body) =>
          Effect.gen(function* () {
            const chain = yield* parsed(chainField(body))
            const keyPrefix = yield* parsed(stringField(body, "keyPrefix", ID_MAX_CHARS))
            const label = yield* parsed(labelField(body))
            if (present(body, "allowLaunch") && typeof body.allowLaunch !== "boolean") {
              return yield* validationFailed("allowLaunch", "allowLaunch must be a boolean")
            }
            const vaultDestination = present(body, "vaultDestination") ? yield* parsed(addressField(body, "vaultDestination", chain)) : undefined
            const wallet = yield* toWire(
              wallets.createTee(p, {
                chain,
                keyPrefix,
                ...(label !== undefined ? { label } : {}),
                ...(body.allowLaunch === true ? { allowLaunch: true } : {}),
                ...(vaultDestination !== undefined ? { vaultDestination } : {})
              })
            )
            return ok({ success: true, wallet })
          })
        )
    },
    {
      method: "POST",
      path: "/api/v1/agent/tee-wallets/rebind",
      operationId: "rebindTeeWallets",
      summary: "Owner: move TEE wallets to another key (preview with dryRun, then commit with expect)",
      description:
        "Preview `{dryRun: true, toKeyPrefix, wallets[] (ids, addresses or labels), labelPrefix?}`; commit `{toKeyPrefix, walletIds[], expect: {<walletId>: <current bound key prefix>}}`.",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      body: { schema: Obj("RebindBody", "preview or commit"), maxBytes: REBIND_BODY_MAX_BYTES },
      responses: {
        200: { description: "`{success, dryRun, toKey, rebound[], unchanged[]}`", schema: Obj("RebindResponse", "rebind") },
        400: Refusal,
        409: Refusal,
        503: Refusal
      },
      handler: (req) =>
        withBody(req, { credentials: OWNER }, (p, body) =>
          Effect.gen(function* () {
            const input = yield* parsed(parseRebind(body))
            return ok(yield* toWire(wallets.rebind(p, input)))
          })
        )
    },
    {
      method: "GET",
      path: "/api/v1/agent/tee-wallets/rebinds",
      operationId: "listTeeRebinds",
      summary: "Owner: rebinds, newest first",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      query: [
        { name: "walletId", description: "Only this wallet's rebinds", schema: { type: "string" } },
        { name: "limit", description: `1 to ${REBIND_HISTORY_LIMIT_MAX} (clamped), default ${REBIND_HISTORY_LIMIT_DEFAULT}`, schema: { type: "integer" } }
      ],
      responses: { 200: { description: "`{success, rebinds[]}`", schema: Obj("Rebinds", "history") }, 400: Refusal },
      handler: (req) =>
        withPrincipal(req, { credentials: OWNER }, (p) =>
          Effect.gen(function* () {
            const q = new URLSearchParams(req.query)
            const rawLimit = q.get("limit")
            let limit = REBIND_HISTORY_LIMIT_DEFAULT
            if (rawLimit !== null) {
              if (!/^-?\d{1,9}$/.test(rawLimit)) return yield* validationFailed("limit", "limit must be an integer")
              limit = Math.min(REBIND_HISTORY_LIMIT_MAX, Math.max(1, Number(rawLimit)))
            }
            const walletId = q.get("walletId") ?? undefined
            const rows = yield* toWire(wallets.rebinds(p, walletId === "" ? undefined : walletId, limit))
            return ok({ success: true, rebinds: rows })
          })
        )
    }
  ]
}

const stringArray = (body: Body, key: string, maxChars: number): ReadonlyArray<string> | ApiError => {
  const v = body[key]
  if (!Array.isArray(v)) return validationFailed(key, `${key} must be an array of strings`)
  for (const item of v) {
    if (typeof item !== "string" || item.length < 1 || item.length > maxChars) {
      return validationFailed(key, `${key} must hold strings of 1 to ${maxChars} characters`)
    }
  }
  return v as ReadonlyArray<string>
}

/** Preview (`dryRun: true`) or commit; a commit carrying selectors is refused. */
export const parseRebind = (body: Body): RebindInput | ApiError => {
  const dryRun = body.dryRun
  if (present(body, "dryRun") && typeof dryRun !== "boolean") return validationFailed("dryRun", "dryRun must be a boolean")
  const toKeyPrefix = stringField(body, "toKeyPrefix", ID_MAX_CHARS)
  if (isErr(toKeyPrefix)) return toKeyPrefix
  if (dryRun === true) {
    const selectors = stringArray(body, "wallets", SELECTOR_MAX_CHARS)
    if (isErr(selectors)) return selectors
    let labelPrefix: string | undefined
    if (present(body, "labelPrefix")) {
      const lp = stringField(body, "labelPrefix", LABEL_MAX_CHARS)
      if (isErr(lp)) return lp
      labelPrefix = lp
    }
    return { _tag: "Preview", toKeyPrefix, wallets: selectors, ...(labelPrefix !== undefined ? { labelPrefix } : {}) }
  }
  for (const selector of ["wallets", "labelPrefix"]) {
    if (present(body, selector)) return validationFailed(selector, "A commit names walletIds and expect, not selectors; preview first")
  }
  const walletIds = stringArray(body, "walletIds", ID_MAX_CHARS)
  if (isErr(walletIds)) return walletIds
  const expect = body.expect
  if (typeof expect !== "object" || expect === null || Array.isArray(expect)) {
    return validationFailed("expect", "expect must map each walletId to its current bound key prefix (from the preview)")
  }
  const expectMap: Record<string, string> = {}
  for (const id of walletIds) {
    const v = (expect as Record<string, unknown>)[id]
    if (typeof v !== "string") return validationFailed(`expect.${id}`, `expect has no current bound key prefix for ${id}`)
    expectMap[id] = v
  }
  return { _tag: "Commit", toKeyPrefix, walletIds, expect: expectMap }
}
