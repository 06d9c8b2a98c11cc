/**
 * Wallet routes (spec document 2: 2.3 and the wallet and TEE rows of 4.1): list, link-existing,
 * revoke, HPKE import (init, submit), the sign relay, TEE wallets and TEE rebind (preview,
 * commit, history). Each route authenticates through the injected `authenticate` and checks the
 * credential kind and scope itself (so the rules hold whatever the middleware enforces); the
 * router then decodes its declared inputs with `WalletDecoders` (naming the first bad field); the
 * handler hands the typed input to the `WalletService` and maps its failures through
 * `api/ErrorTable.ts`.
 *
 * Credential kinds: wallet reads and writes take an agent key or a session; the sign relay an
 * agent key with `swap:write`; import an agent key with `launch:write` or a session; TEE wallet
 * administration and rebind a session or device token, never an agent key.
 */
import { Effect, Schema } from "effect"
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import { type AuthHeaders, AUTH_HEADERS, type AuthNeed, type CredentialKind, holdsScope, type Principal } from "../../src/services/wallets/Principal.js"
import { type WalletServiceShape, type WalletView } from "../../src/services/wallets/WalletService.js"
import { ErrorTable } from "../ErrorTable.js"
import { json, type Request } from "../Http.js"
import { callerRefusals, type CodesByStatus, mergeCodes, type RowTable, tableRefusals } from "../RouteRefusals.js"
import { isApiError, stringParam } from "../QueryParams.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import {
  challengeAddress,
  challengeQuery,
  decodeCreateTeeBody,
  decodeImportInitBody,
  decodeImportSubmitShape,
  decodeLinkBody,
  decodeRebindBody,
  importSubmitInput,
  LABEL_MAX_CHARS,
  rebindsQuery,
  SIGNATURE_MAX_CHARS,
  decodeSignBody,
  UpdateBody
} from "./WalletDecoders.js"
import { reply } from "./ServiceCall.js"
import { ImportInitAnswer, LinkChallenge, RebindResponse, Rebinds, WalletEnvelope, WalletList, WalletRevoked, WalletSigned } from "./WalletResponses.js"

/**
 * Resolves the caller. Fails `UNAUTHORIZED` / `KEY_EXPIRED` (and, when the middleware enforces
 * `need`, `SCOPE_MISSING`) as the auth rules say.
 */
export type Authenticate = (headers: AuthHeaders, need: AuthNeed) => Effect.Effect<Principal, ApiError>

export interface WalletRoutesDeps {
  readonly wallets: WalletServiceShape
  readonly authenticate: Authenticate
}

/** Rebind bodies carry up to 200 ids and an `expect` map; everything else is small. */
export const REBIND_BODY_MAX_BYTES = 64 * 1024
export const WALLET_BODY_MAX_BYTES = 8 * 1024

const KEY_OR_SESSION: ReadonlyArray<CredentialKind> = ["agentKey", "session"]
const OWNER: ReadonlyArray<CredentialKind> = ["session", "device"]

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

/** A wallet in the `{success, wallet}` reply. */
const asWallet = <E>(call: Effect.Effect<WalletView, E>) => Effect.map(call, (wallet) => ({ wallet }))

// --- docs ---------------------------------------------------------------------------------------

// The request bodies as the document shows them (the decoders in `WalletDecoders.ts` decide;
// these describe what they accept, so the generated client types each body).
const WalletChainDoc = Schema.Literal("solana", "evm")
const LabelDoc = Schema.String.annotations({ description: `1 to ${LABEL_MAX_CHARS} characters after trimming` })
const Base64Doc = (description: string) => Schema.String.annotations({ description: `base64: ${description}` })
const LinkWalletBody = Schema.Struct({
  chain: WalletChainDoc,
  address: Schema.String.annotations({ description: "base58 (solana) or 0x-prefixed 20-byte address (evm; EIP-55 when mixed case)" }),
  signature: Schema.String.annotations({ description: `the challenge signed by the wallet (base58 ed25519 or 0x personal_sign), at most ${SIGNATURE_MAX_CHARS} characters` }),
  label: Schema.optional(LabelDoc)
}).annotations({ identifier: "LinkWalletBody" })
const ImportInitBody = Schema.Struct({ chain: WalletChainDoc, address: Schema.String }).annotations({ identifier: "ImportInitBody" })
const ImportSubmitBody = Schema.Struct({
  ciphertext: Base64Doc("the sealed key"),
  encapsulatedKey: Base64Doc("the 65-byte uncompressed P-256 point"),
  signerPublicKey: Base64Doc("the signer's P-256 public key (uncompressed point or SPKI DER)"),
  label: Schema.optional(LabelDoc)
}).annotations({ identifier: "ImportSubmitBody" })
const SignBody = Schema.Struct({
  claimId: Schema.String,
  transaction: Schema.String.annotations({ description: "the built transaction: base64 (Solana) or 0x-hex (EVM)" }),
  authorizationSignature: Schema.optional(Base64Doc("64 bytes"))
}).annotations({ identifier: "SignBody" })
const CreateTeeBody = Schema.Struct({
  chain: WalletChainDoc,
  keyPrefix: Schema.String.annotations({ description: "the agent key the wallet is bound to" }),
  label: Schema.optional(LabelDoc),
  allowLaunch: Schema.optional(Schema.Boolean),
  vaultDestination: Schema.optional(Schema.String.annotations({ description: "an address on the wallet's chain" }))
}).annotations({ identifier: "CreateTeeBody" })
const RebindBody = Schema.Union(
  Schema.Struct({
    dryRun: Schema.Literal(true),
    toKeyPrefix: Schema.String,
    wallets: Schema.Array(Schema.String).annotations({ description: "selectors: wallet ids or addresses" }),
    labelPrefix: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    dryRun: Schema.optional(Schema.Literal(false)),
    toKeyPrefix: Schema.String,
    walletIds: Schema.Array(Schema.String),
    expect: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({ description: "each walletId's current bound key prefix, from the preview" })
  })
).annotations({ identifier: "RebindBody", description: "a preview (`dryRun: true`, selectors) or a commit (walletIds and expect)" })

/** A route's refusals: its caller check's and the rows of the failures its service call fails with (`WalletError` and more). */
const refusals = (need: AuthNeed, tables: ReadonlyArray<RowTable>, own: CodesByStatus = {}) => tableRefusals(tables, mergeCodes(callerRefusals(need), own))
const W = ErrorTable.WalletError

/** Any segment reaches the service, which answers 404 for an id it does not know. */
const idPath = { id: stringParam("Wallet id", { required: true, emptyIsValue: true }) }

export const walletRoutes = (deps: WalletRoutesDeps): ReadonlyArray<RouteDef> => {
  const { wallets, authenticate } = deps

  /** The caller, admitted for `need`. */
  const caller =
    (need: AuthNeed) =>
    (req: Request): Effect.Effect<Principal, ApiError> =>
      Effect.flatMap(authenticate(req.headers, need), (p) => admit(p, need))
  const needs = {
    keyOrSession: { credentials: KEY_OR_SESSION },
    /** The reads: a paused key may still use them. */
    reader: { credentials: KEY_OR_SESSION, whilePaused: "allow" },
    owner: { credentials: OWNER },
    importer: { credentials: KEY_OR_SESSION, scope: "launch:write" },
    signer: { credentials: ["agentKey"], scope: "swap:write" }
  } as const satisfies Record<string, AuthNeed>
  const keyOrSession = caller(needs.keyOrSession)
  const reader = caller(needs.reader)
  const owner = caller(needs.owner)
  const importer = caller(needs.importer)

  return [
    route({
      method: "GET",
      path: "/api/v1/agent/wallets",
      operationId: "listWallets",
      summary: "The account's active linked, imported and TEE wallets, and its embedded wallets",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      responses: { 200: { description: "Wallets", schema: WalletList }, ...refusals(needs.reader, []) },
      authenticate: reader,
      handler: (_req, _input, p) => reply(wallets.list(p))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/wallets/link-challenge",
      operationId: "walletLinkChallenge",
      summary: "The message to sign with an existing wallet to link it",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      query: challengeQuery,
      responses: { 200: { description: "`{success, chain, address, message}`", schema: LinkChallenge }, ...refusals(needs.reader, [], { 400: ["VALIDATION_FAILED"] }) },
      authenticate: reader,
      handler: (_req, { address: raw, chain }, p) => {
        const address = challengeAddress(chain, raw)
        return isApiError(address) ? Effect.fail(address) : Effect.succeed(json(200, { success: true, chain, address, message: wallets.linkChallenge(p, chain, address) }))
      }
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/wallets",
      operationId: "linkWallet",
      summary: "Link an existing wallet (attribution only; Pro or Max)",
      description:
        "Body `{chain, address, signature, label?}`. `signature` proves control of the address over the link challenge: base58 ed25519 on Solana, EIP-191 personal_sign on EVM.",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      body: decodedBody({ schema: LinkWalletBody, maxBytes: WALLET_BODY_MAX_BYTES, decode: decodeLinkBody }),
      responses: {
        200: { description: "The linked wallet", schema: WalletEnvelope },
        ...refusals(needs.keyOrSession, [W])
      },
      authenticate: keyOrSession,
      handler: (_req, { body }, p) => reply(asWallet(wallets.link(p, body)))
    }),
    route({
      method: "DELETE",
      path: "/api/v1/agent/wallets/{id}",
      operationId: "revokeWallet",
      summary: "Revoke (tombstone) a wallet; idempotent",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      pathParams: idPath,
      responses: { 200: { description: "`{success, id, revokedAt, policyNeutralized?}`", schema: WalletRevoked }, ...refusals(needs.keyOrSession, [W]) },
      authenticate: keyOrSession,
      handler: (_req, { id }, p) => reply(wallets.revoke(p, id))
    }),
    route({
      method: "PATCH",
      path: "/api/v1/agent/wallets/{id}",
      operationId: "updateWallet",
      summary: "Owner: turn a TEE wallet's allowLaunch on or off, or rename a wallet",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      pathParams: idPath,
      body: { schema: UpdateBody, maxBytes: WALLET_BODY_MAX_BYTES },
      responses: { 200: { description: "The wallet", schema: WalletEnvelope }, ...refusals(needs.owner, [W]) },
      authenticate: owner,
      handler: (_req, { body, id }, p) => reply(asWallet(wallets.update(p, id, body)))
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/wallets/import/init",
      operationId: "walletImportInit",
      summary: "Start an HPKE import: returns the encryption public key",
      description:
        "Body `{chain, address}`. Seal the key's text (hex for evm, base58 for solana) with RFC 9180 Base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305, empty info and aad, to `encryptionPublicKey`; then submit within 10 minutes.",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      body: decodedBody({ schema: ImportInitBody, maxBytes: WALLET_BODY_MAX_BYTES, decode: decodeImportInitBody }),
      responses: {
        200: { description: "`{success, importId, chain, address, encryptionPublicKey, hpke, expiresAt}`", schema: ImportInitAnswer },
        ...refusals(needs.importer, [W])
      },
      authenticate: importer,
      handler: (_req, { body: { address, chain } }, p) =>
        reply(Effect.map(wallets.importInit(p, chain, address), ({ expiresAtMs, ...init }) => ({ ...init, expiresAt: expiresAtMs })))
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/wallets/import/submit",
      operationId: "walletImportSubmit",
      summary: "Finish an HPKE import: the sealed key, its encapsulated key and the signer public key",
      description: "Body `{ciphertext, encapsulatedKey, signerPublicKey, label?}` (base64).",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      body: decodedBody({
        schema: ImportSubmitBody,
        maxBytes: WALLET_BODY_MAX_BYTES,
        decode: decodeImportSubmitShape
      }),
      responses: { 200: { description: "The imported wallet", schema: WalletEnvelope }, ...refusals(needs.importer, [W]) },
      authenticate: importer,
      // WebCrypto checks the signer key's curve (asynchronous, so here rather than in the router).
      handler: (_req, { body }, p) => Effect.flatMap(importSubmitInput(body), (input) => reply(asWallet(wallets.importSubmit(p, input))))
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/wallets/{id}/sign",
      operationId: "walletSign",
      summary: "Sign relay: signs a transaction the service built, once, under its build claim",
      description:
        "Body `{claimId, transaction, authorizationSignature?}`: `transaction` is base64 wire bytes (Solana) or 0x-hex (EVM); imported wallets need `authorizationSignature`, base64 P-256 ECDSA (r||s) by the signer key over the transaction bytes.",
      tags: ["wallets"],
      auth: "agentKey",
      headers: AUTH_HEADERS,
      pathParams: idPath,
      body: decodedBody({ schema: SignBody, maxBytes: WALLET_BODY_MAX_BYTES * 2, decode: decodeSignBody }),
      responses: { 200: { description: "`{success, walletId, chain, claimId, signature, signedTransaction}`", schema: WalletSigned }, ...refusals(needs.signer, [ErrorTable.SignClaimError, W]) },
      authenticate: caller(needs.signer),
      handler: (_req, { body, id }, p) => reply(wallets.signClaimed(p, id, body))
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/tee-wallets",
      operationId: "createTeeWallet",
      summary: "Owner: create a TEE wallet bound to one key",
      description: "Body `{chain, keyPrefix, label?, allowLaunch?, vaultDestination?}`.",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      body: decodedBody({
        schema: CreateTeeBody,
        maxBytes: WALLET_BODY_MAX_BYTES,
        decode: decodeCreateTeeBody
      }),
      responses: { 200: { description: "The TEE wallet", schema: WalletEnvelope }, ...refusals(needs.owner, [W]) },
      authenticate: owner,
      handler: (_req, { body }, p) => reply(asWallet(wallets.createTee(p, body)))
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/tee-wallets/rebind",
      operationId: "rebindTeeWallets",
      summary: "Owner: move TEE wallets to another key (preview with dryRun, then commit with expect)",
      description:
        "Preview `{dryRun: true, toKeyPrefix, wallets[] (ids, addresses or labels), labelPrefix?}`; commit `{toKeyPrefix, walletIds[], expect: {<walletId>: <current bound key prefix>}}`.",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      body: decodedBody({ schema: RebindBody, maxBytes: REBIND_BODY_MAX_BYTES, decode: decodeRebindBody }),
      responses: {
        200: { description: "`{success, dryRun, toKey, rebound[], unchanged[]}`", schema: RebindResponse },
        ...refusals(needs.owner, [ErrorTable.RebindError, W])
      },
      authenticate: owner,
      handler: (_req, { body }, p) => reply(wallets.rebind(p, body))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/tee-wallets/rebinds",
      operationId: "listTeeRebinds",
      summary: "Owner: rebinds, newest first",
      tags: ["wallets"],
      auth: "session",
      headers: AUTH_HEADERS,
      query: rebindsQuery,
      responses: { 200: { description: "`{success, rebinds[]}`", schema: Rebinds }, ...refusals(needs.owner, [], { 400: ["VALIDATION_FAILED"] }) },
      authenticate: owner,
      handler: (_req, { limit, walletId }, p) => reply(Effect.map(wallets.rebinds(p, walletId, limit), (rebinds) => ({ rebinds })))
    })
  ]
}
