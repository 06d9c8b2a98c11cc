/**
 * The account's wallets (spec document 2: 2.3, the rebind rules of 4.1, limits of 8): linked
 * (attribution-only), imported (HPKE import, spend-capable through the sign relay) and TEE
 * wallets (bound to one agent key, `allowLaunch`), the sign relay's single-use build claims, and
 * TEE rebind. Keys are custodied by the `WalletProvider`; this module keeps the account's rows.
 *
 * Invariants:
 * - At most one active row per chain and address across all accounts (a partial unique index);
 *   revoke tombstones, so a revoked address can be linked again.
 * - The active-wallet count of an account never passes its plan's `linkedWallets`: the count and
 *   the insert run in one transaction holding a per-account advisory lock.
 * - The relay signs only a transaction this service recorded with `recordBuilt`: same wallet,
 *   same key, same message bytes, within the claim's 30-minute lifetime, once. The claim is
 *   consumed by one conditional UPDATE after the provider signed, so two racing requests cannot
 *   both receive a signature; a refused request consumes nothing.
 * - A rebind commit is one transaction: every check re-runs inside it, then only the bindings
 *   change (plus audit and assignment rows). A preview writes nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { getTransactionDecoder } from "@solana/kit"
import { Context, Effect, Layer, Schema } from "effect"
import type { ErrorCode } from "../../domain/ErrorCodes.js"
import { type Plan, planById } from "../../domain/Plans.js"
import { addressKey, addressOfSecret, canonicalAddress, parseImportedSecret, type WalletChain } from "./ChainKeys.js"
import { generateRecipient, HPKE_PARAMETERS, openSealed } from "./Hpke.js"
import { type MasterKey, WalletMasterKey } from "./MasterKey.js"
import { holdsScope, type KeyDirectory, type KeyInfo, type Principal } from "./Principal.js"
import { type EmbeddedWallet, WalletProvider, type WalletProviderError } from "./WalletProvider.js"

/** A refusal with the spec's code; the route maps it to the wire unchanged. */
export class WalletRefusal extends Schema.TaggedError<WalletRefusal>()("WalletRefusal", {
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  extra: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}) {}

const refuse = (
  code: ErrorCode,
  message: string,
  more: { field?: string; status?: number; extra?: Record<string, unknown> } = {}
): WalletRefusal => new WalletRefusal({ code, message, ...more })

const notFound = (message: string) => refuse("VALIDATION_FAILED", message, { status: 404, field: "id" })

// --- limits ------------------------------------------------------------------------------------

export const CLAIM_LIFETIME_MS = 30 * 60_000
export const IMPORT_TTL_MS = 10 * 60_000
export const OPEN_IMPORTS_PER_ACCOUNT_MAX = 5
export const REBIND_WALLETS_MAX = 200
export const SELECTED_SCOPE_ASSIGNMENTS_MAX = 1_000
export const REBIND_HISTORY_LIMIT_MAX = 100
export const REBIND_HISTORY_LIMIT_DEFAULT = 20

// --- views -------------------------------------------------------------------------------------

export type WalletKind = "linked" | "imported" | "tee"

interface WalletRow {
  readonly id: string
  readonly account_id: string
  readonly chain: WalletChain
  readonly address: string
  readonly address_key: string
  readonly kind: WalletKind
  readonly label: string | null
  readonly allow_launch: boolean
  readonly bound_key_id: string | null
  readonly bound_key_prefix: string | null
  readonly provider_wallet_id: string | null
  readonly policy_id: string | null
  readonly policy_neutralized: boolean | null
  readonly vault_destination: string | null
  readonly authority_status: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}

export interface WalletView {
  readonly id: string
  readonly chain: WalletChain
  readonly address: string
  readonly walletKind: WalletKind
  readonly label?: string
  readonly allowLaunch: boolean
  readonly boundKeyPrefix?: string
  readonly vaultDestination?: string
  readonly createdAt: string
}

const iso = (d: Date | string): string => new Date(d).toISOString()

export const walletView = (r: WalletRow): WalletView => ({
  id: r.id,
  chain: r.chain,
  address: r.address,
  walletKind: r.kind,
  ...(r.label !== null ? { label: r.label } : {}),
  allowLaunch: r.allow_launch,
  ...(r.kind === "tee" && r.bound_key_prefix !== null ? { boundKeyPrefix: r.bound_key_prefix } : {}),
  ...(r.kind === "tee" && r.vault_destination !== null ? { vaultDestination: r.vault_destination } : {}),
  createdAt: iso(r.created_at)
})

const WALLET_COLUMNS = `id, account_id, chain, address, address_key, kind, label, allow_launch, bound_key_id, bound_key_prefix,
  provider_wallet_id, policy_id, policy_neutralized, vault_destination, authority_status, created_at, revoked_at`

// --- inputs ------------------------------------------------------------------------------------

export interface LinkInput {
  readonly chain: WalletChain
  readonly address: string
  /** Proof of control over `linkChallenge(...)`: base58 ed25519 (Solana) or 0x personal_sign (EVM). */
  readonly signature: string
  readonly label?: string
}

export interface ImportSubmitInput {
  readonly ciphertext: Uint8Array
  readonly encapsulatedKey: Uint8Array
  /** P-256 signer public key, SPKI DER (the route accepts raw points and converts). */
  readonly signerSpki: Uint8Array
  readonly label?: string
}

export interface CreateTeeInput {
  readonly chain: WalletChain
  readonly keyPrefix: string
  readonly label?: string
  readonly allowLaunch?: boolean
  readonly vaultDestination?: string
}

export interface RecordBuiltInput {
  readonly accountId: string
  readonly walletId: string
  /** The agent key the build was made for; the relay accepts the claim only from it. */
  readonly keyId: string | null
  readonly chain: WalletChain
  /** Solana: wire transaction bytes (signature slots may be empty); EVM: serialized unsigned transaction. */
  readonly transaction: Uint8Array
  /** What was built (`launch`, `trade`, `stake`, `transfer`, ...), for the claim record. */
  readonly purpose: string
  /** Scopes the signing key must still hold at sign time (e.g. `transfer:bound` for a Withdraw transfer). */
  readonly requiredScopes?: ReadonlyArray<string>
  /** When the transaction can no longer land (Solana: blockhash expiry). Null: never provable (Hood). */
  readonly txExpiresAtMs?: number | null
}

export interface SignInput {
  readonly claimId: string
  readonly transaction: Uint8Array
  /** Imported wallets: P-256 ECDSA (raw r||s) by the wallet's signer key over the transaction bytes. */
  readonly authorizationSignature?: Uint8Array
}

export type RebindInput =
  | { readonly _tag: "Preview"; readonly toKeyPrefix: string; readonly wallets: ReadonlyArray<string>; readonly labelPrefix?: string }
  | { readonly _tag: "Commit"; readonly toKeyPrefix: string; readonly walletIds: ReadonlyArray<string>; readonly expect: Readonly<Record<string, string>> }

/** Reads whether a signed (forwarded) transaction settled on chain. */
export interface ClaimReconciler {
  readonly outcome: (claim: {
    readonly claimId: string
    readonly chain: WalletChain
    readonly signature: string
  }) => Effect.Effect<"confirmed" | "failed" | "pending", "unavailable">
}

/** No chain reader wired: a forwarded sign stays open until settled or provably expired. */
export const pendingReconciler: ClaimReconciler = { outcome: () => Effect.succeed("pending") }

export interface WalletServiceOptions {
  readonly plans: ReadonlyArray<Plan>
  readonly keys: KeyDirectory
  readonly reconciler?: ClaimReconciler
  readonly nowMs?: () => number
}

export interface SignResult {
  readonly walletId: string
  readonly chain: WalletChain
  readonly claimId: string
  readonly signature: string
  readonly signedTransaction: string
}

export interface RebindResponse {
  readonly success: true
  readonly dryRun: boolean
  readonly toKey: Record<string, unknown>
  readonly rebound: ReadonlyArray<Record<string, unknown>>
  readonly unchanged: ReadonlyArray<Record<string, unknown>>
}

export interface WalletServiceShape {
  readonly list: (p: Principal) => Effect.Effect<{ wallets: ReadonlyArray<WalletView>; embeddedWallets: ReadonlyArray<Omit<EmbeddedWallet, "providerWalletId">> }, SqlError>
  readonly linkChallenge: (p: Principal, chain: WalletChain, address: string) => string
  readonly link: (p: Principal, input: LinkInput) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly revoke: (p: Principal, walletId: string) => Effect.Effect<Record<string, unknown>, WalletRefusal | SqlError>
  readonly importInit: (p: Principal, chain: WalletChain, address: string) => Effect.Effect<Record<string, unknown>, WalletRefusal | SqlError>
  readonly importSubmit: (p: Principal, input: ImportSubmitInput) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly createTee: (p: Principal, input: CreateTeeInput) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly update: (p: Principal, walletId: string, patch: { allowLaunch?: boolean; label?: string }) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  /** Stakes out a single-use sign claim for a transaction the service built (launch, trade, staking ...). */
  readonly recordBuilt: (input: RecordBuiltInput) => Effect.Effect<{ claimId: string; expiresAtMs: number }, WalletRefusal | SqlError>
  /** The sign relay: signs a recorded transaction once. */
  readonly signClaimed: (p: Principal, walletId: string, input: SignInput) => Effect.Effect<SignResult, WalletRefusal | SqlError>
  /** Records what became of a forwarded sign (the launch service after confirm, a sweeper after expiry). */
  readonly settleClaim: (claimId: string, outcome: "confirmed" | "failed" | "expired") => Effect.Effect<void, SqlError>
  /** A spend-capable wallet the key may use as payer on `chain` (self-signed builds), else the refusal. */
  readonly resolvePayer: (p: Principal, walletId: string, chain: WalletChain, purpose: "launch" | "spend") => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly rebind: (p: Principal, input: RebindInput) => Effect.Effect<RebindResponse, WalletRefusal | SqlError>
  readonly rebinds: (p: Principal, walletId: string | undefined, limit: number) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, SqlError>
}

export class WalletService extends Context.Tag("curvestream/WalletService")<WalletService, WalletServiceShape>() {}

const randomId = (prefix: string): string => `${prefix}_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url")}`

const sha256Hex = (bytes: Uint8Array): Effect.Effect<string> =>
  Effect.promise(async () => Buffer.from(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes))).toString("hex"))

/** Claims bind the message: on Solana the signed message bytes (signatures may be added by co-signers). */
const claimedMessage = (chain: WalletChain, transaction: Uint8Array): Uint8Array | undefined => {
  if (chain === "evm") return transaction
  try {
    return new Uint8Array(getTransactionDecoder().decode(transaction).messageBytes)
  } catch {
    return undefined
  }
}

const providerRefusal = (e: WalletProviderError): WalletRefusal => {
  switch (e.reason) {
    case "policy_denied":
      return refuse("SPEND_POLICY_DENIED", e.message, {
        extra: { reason: e.rule ?? "policy", ...(e.instruction !== undefined ? { instruction: e.instruction } : {}) }
      })
    case "not_embedded":
      return refuse("AGENT_WALLET_NOT_EMBEDDED", e.message)
    case "not_delegated":
      return refuse("AGENT_WALLET_NOT_DELEGATED", e.message)
    case "delegation_revoked":
      return refuse("DELEGATION_REVOKED", e.message)
    case "not_a_signer":
    case "bad_transaction":
    case "not_found":
      return refuse("UNRECOGNIZED_TRANSACTION", e.message, { extra: { reason: e.reason } })
    case "key_unavailable":
      return refuse("INTERNAL", e.message)
  }
}

export const make = (options: WalletServiceOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* WalletProvider
    const masterKey: MasterKey = yield* WalletMasterKey
    const reconciler = options.reconciler ?? pendingReconciler
    const nowMs = options.nowMs ?? Date.now
    const now = () => new Date(nowMs())

    const planOf = (p: Principal) => planById(options.plans, p.plan)

    const requireLinkingPlan = (p: Principal) =>
      planOf(p).capabilities.linkedWallets
        ? Effect.void
        : Effect.fail(refuse("TIER_REQUIRED", "Linked, imported and TEE wallets need the Pro or Max plan", { extra: { requiredPlans: ["pro", "max"] } }))

    const rowById = (accountId: string, id: string) =>
      Effect.map(
        sql<WalletRow>`SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE id = ${id} AND account_id = ${accountId}`,
        (rows) => rows[0]
      )

    const accountRows = (accountId: string) =>
      sql<WalletRow>`SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE account_id = ${accountId} ORDER BY seq`

    const lockAccount = (accountId: string) => sql`SELECT pg_advisory_xact_lock(hashtext(${"wallets:" + accountId}))`

    const activeByAddress = (chain: WalletChain, address: string) =>
      Effect.map(
        sql<{ id: string; account_id: string }>`
          SELECT id, account_id FROM wallets WHERE chain = ${chain} AND address_key = ${addressKey(chain, address)} AND revoked_at IS NULL`,
        (rows) => rows[0]
      )

    const alreadyLinked = (chain: WalletChain, address: string) =>
      refuse("WALLET_ALREADY_LINKED", `${address} already has an active linked-wallet row (on this or another account)`, {
        extra: { chain, address }
      })

    /** The admission checks of a new row: not linked anywhere, under the plan's count. Run inside the account lock. */
    const admit = (p: Principal, chain: WalletChain, address: string) =>
      Effect.gen(function* () {
        if ((yield* activeByAddress(chain, address)) !== undefined) return yield* alreadyLinked(chain, address)
        const limit = planOf(p).limits.linkedWallets
        const [count] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM wallets WHERE account_id = ${p.accountId} AND revoked_at IS NULL`
        if ((count?.n ?? 0) >= limit) {
          return yield* refuse("WALLET_LIMIT_REACHED", `The account has the maximum of ${limit} active linked wallets; revoke one first`, {
            extra: { limit }
          })
        }
      })

    /** Inserts a row after `admit`, in one transaction under the account lock. */
    const insertRow = (
      p: Principal,
      row: {
        chain: WalletChain
        address: string
        kind: WalletKind
        label: string | null
        allowLaunch: boolean
        boundKeyId: string | null
        boundKeyPrefix: string | null
        providerWalletId: string | null
        policyId: string | null
        vaultDestination: string | null
      }
    ) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* lockAccount(p.accountId)
          yield* admit(p, row.chain, row.address)
          const id = randomId("wal")
          const inserted = yield* sql<WalletRow>`
            INSERT INTO wallets (id, account_id, chain, address, address_key, kind, label, allow_launch, bound_key_id, bound_key_prefix,
              provider_wallet_id, policy_id, vault_destination, created_at)
            VALUES (${id}, ${p.accountId}, ${row.chain}, ${row.address}, ${addressKey(row.chain, row.address)}, ${row.kind}, ${row.label},
              ${row.allowLaunch}, ${row.boundKeyId}, ${row.boundKeyPrefix}, ${row.providerWalletId}, ${row.policyId}, ${row.vaultDestination}, ${now()})
            ON CONFLICT (chain, address_key) WHERE revoked_at IS NULL DO NOTHING
            RETURNING ${sql.literal(WALLET_COLUMNS)}`
          const first = inserted[0]
          if (first === undefined) return yield* alreadyLinked(row.chain, row.address)
          return first
        })
      )

    // --- list, link, revoke, update -------------------------------------------------------------

    const list = (p: Principal) =>
      Effect.gen(function* () {
        const rows = yield* sql<WalletRow>`
          SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE account_id = ${p.accountId} AND revoked_at IS NULL ORDER BY seq`
        const embedded = yield* provider.embeddedWallets(p.accountId)
        return {
          wallets: rows.map(walletView),
          embeddedWallets: embedded.map(({ chain, address, delegation }) => ({ chain, address, delegation }))
        }
      })

    const link = (p: Principal, input: LinkInput) =>
      Effect.gen(function* () {
        yield* requireLinkingPlan(p)
        const verified = yield* provider.verifyOwnership(p.accountId, input.chain, input.address, input.signature)
        if (!verified) {
          return yield* refuse("VALIDATION_FAILED", "signature does not prove control of the address (sign the challenge with that wallet)", {
            field: "signature",
            extra: { challenge: provider.linkChallenge(p.accountId, input.chain, input.address) }
          })
        }
        const row = yield* insertRow(p, {
          chain: input.chain,
          address: input.address,
          kind: "linked",
          label: input.label ?? null,
          allowLaunch: false,
          boundKeyId: null,
          boundKeyPrefix: null,
          providerWalletId: null,
          policyId: null,
          vaultDestination: null
        })
        return walletView(row)
      }).pipe(Effect.withSpan("WalletService.link"))

    const neutralize = (policyId: string) =>
      provider.setPolicyState(policyId, "cleared").pipe(
        Effect.as(true),
        Effect.catchAllCause(() => Effect.succeed(false))
      )

    const revoke = (p: Principal, walletId: string) =>
      Effect.gen(function* () {
        const row = yield* rowById(p.accountId, walletId)
        if (row === undefined) return yield* notFound(`No wallet ${walletId} on this account`)
        let revokedAt = row.revoked_at
        if (revokedAt === null) {
          const [updated] = yield* sql<{ revoked_at: Date }>`
            UPDATE wallets SET revoked_at = ${now()} WHERE id = ${walletId} AND revoked_at IS NULL RETURNING revoked_at`
          revokedAt = updated?.revoked_at ?? (yield* rowById(p.accountId, walletId))?.revoked_at ?? now()
        }
        const body: Record<string, unknown> = { success: true, id: walletId, revokedAt: iso(revokedAt) }
        if (row.policy_id !== null) {
          // Best effort; a retry of the revoke tries again until the rules are cleared.
          let neutralized = row.policy_neutralized === true
          if (!neutralized) {
            neutralized = yield* neutralize(row.policy_id)
            yield* sql`UPDATE wallets SET policy_neutralized = ${neutralized} WHERE id = ${walletId}`
          }
          body.policyNeutralized = neutralized
        }
        return body
      }).pipe(Effect.withSpan("WalletService.revoke"))

    const update = (p: Principal, walletId: string, patch: { allowLaunch?: boolean; label?: string }) =>
      Effect.gen(function* () {
        const row = yield* rowById(p.accountId, walletId)
        if (row === undefined || row.revoked_at !== null) return yield* notFound(`No active wallet ${walletId} on this account`)
        if (patch.allowLaunch !== undefined && row.kind !== "tee") {
          return yield* refuse("VALIDATION_FAILED", "allowLaunch applies to TEE wallets only", { field: "allowLaunch" })
        }
        const [updated] = yield* sql<WalletRow>`
          UPDATE wallets SET
            allow_launch = ${patch.allowLaunch ?? row.allow_launch},
            label = ${patch.label ?? row.label}
          WHERE id = ${walletId} AND revoked_at IS NULL
          RETURNING ${sql.literal(WALLET_COLUMNS)}`
        if (updated === undefined) return yield* notFound(`No active wallet ${walletId} on this account`)
        return walletView(updated)
      })

    // --- import -----------------------------------------------------------------------------------

    const importInit = (p: Principal, chain: WalletChain, address: string) =>
      Effect.gen(function* () {
        yield* requireLinkingPlan(p)
        // Fail early on what would refuse the link; submit checks again (it links last).
        yield* sql.withTransaction(Effect.zipRight(lockAccount(p.accountId), admit(p, chain, address)))
        const recipient = yield* Effect.promise(() => generateRecipient())
        const id = randomId("imp")
        const sealed = yield* masterKey.seal(recipient.privateKey, `wallet_imports:${id}`)
        recipient.privateKey.fill(0)
        const createdAtMs = nowMs()
        const expiresAtMs = createdAtMs + IMPORT_TTL_MS
        const publicKey = Buffer.from(recipient.publicKey).toString("base64")
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* lockAccount(p.accountId)
            yield* sql`
              INSERT INTO wallet_imports (id, account_id, key_id, chain, address, public_key, private_key_sealed, created_at, expires_at)
              VALUES (${id}, ${p.accountId}, ${p.keyId}, ${chain}, ${address}, ${publicKey}, ${sealed}, ${new Date(createdAtMs)}, ${new Date(expiresAtMs)})`
            // Bounded: used, expired and the oldest beyond the per-account maximum go.
            yield* sql`
              DELETE FROM wallet_imports WHERE account_id = ${p.accountId} AND id NOT IN (
                SELECT id FROM wallet_imports
                WHERE account_id = ${p.accountId} AND consumed_at IS NULL AND expires_at > ${new Date(createdAtMs)}
                ORDER BY created_at DESC, id DESC LIMIT ${OPEN_IMPORTS_PER_ACCOUNT_MAX})`
          })
        )
        return {
          success: true,
          importId: id,
          chain,
          address,
          encryptionPublicKey: publicKey,
          hpke: HPKE_PARAMETERS,
          expiresAt: expiresAtMs
        }
      }).pipe(Effect.withSpan("WalletService.importInit"))

    interface ImportRow {
      readonly id: string
      readonly chain: WalletChain
      readonly address: string
      readonly private_key_sealed: string
    }

    const importSubmit = (p: Principal, input: ImportSubmitInput) =>
      Effect.gen(function* () {
        yield* requireLinkingPlan(p)
        const open = yield* sql<ImportRow>`
          SELECT id, chain, address, private_key_sealed FROM wallet_imports
          WHERE account_id = ${p.accountId} AND consumed_at IS NULL AND expires_at > ${now()}
          ORDER BY created_at DESC, id DESC LIMIT ${OPEN_IMPORTS_PER_ACCOUNT_MAX}`
        if (open.length === 0) {
          return yield* refuse("VALIDATION_FAILED", "No open import on this account (call import/init first; an init lasts 10 minutes)", {
            field: "ciphertext",
            extra: { reason: "no_open_import" }
          })
        }
        // HPKE authenticates: only the init whose key the client sealed to opens it.
        let matched: { row: ImportRow; plaintext: Uint8Array } | undefined
        for (const row of open) {
          const privateKey = yield* masterKey.open(row.private_key_sealed, `wallet_imports:${row.id}`).pipe(Effect.option)
          if (privateKey._tag === "None") continue
          const plaintext = yield* Effect.promise(() => openSealed(privateKey.value, input.encapsulatedKey, input.ciphertext))
          privateKey.value.fill(0)
          if (plaintext !== undefined) {
            matched = { row, plaintext }
            break
          }
        }
        if (matched === undefined) {
          return yield* refuse("VALIDATION_FAILED", "ciphertext does not open under any open import's key (expired, used, or sealed to another key)", {
            field: "ciphertext",
            extra: { reason: "not_opened" }
          })
        }
        const { row, plaintext } = matched
        const secret = yield* Effect.promise(() => parseImportedSecret(row.chain, new TextDecoder().decode(plaintext)))
        plaintext.fill(0)
        if (secret === undefined) {
          return yield* refuse("VALIDATION_FAILED", row.chain === "evm" ? "plaintext is not a 32-byte hex private key" : "plaintext is not a base58 Solana secret key", {
            field: "ciphertext",
            extra: { reason: "not_a_key" }
          })
        }
        const derived = yield* Effect.promise(() => addressOfSecret(row.chain, secret))
        if (addressKey(row.chain, derived) !== addressKey(row.chain, row.address)) {
          secret.fill(0)
          return yield* refuse("VALIDATION_FAILED", `the sealed key does not control ${row.address}, the address given at init`, {
            field: "ciphertext",
            extra: { reason: "address_mismatch" }
          })
        }
        // Single use: consume the init before anything reaches the provider.
        const consumed = yield* sql`UPDATE wallet_imports SET consumed_at = ${now()} WHERE id = ${row.id} AND consumed_at IS NULL RETURNING id`
        if (consumed.length === 0) {
          secret.fill(0)
          return yield* refuse("VALIDATION_FAILED", "this import was already submitted", { field: "ciphertext", extra: { reason: "no_open_import" } })
        }
        // Provider: 1-of-1 signer quorum, the fixed backstop policy, then the import with both attached.
        const quorumId = yield* provider.registerSignerQuorum(input.signerSpki)
        const policyId = yield* provider.createBackstopPolicy
        const imported = yield* provider
          .importWallet({ accountId: p.accountId, chain: row.chain, secret, quorumId, policyId })
          .pipe(Effect.ensuring(Effect.sync(() => secret.fill(0))))
        // Link last; when linking fails after the import, the policy falls back to default-deny.
        const linked = yield* insertRow(p, {
          chain: row.chain,
          address: imported.address,
          kind: "imported",
          label: input.label ?? null,
          allowLaunch: false,
          boundKeyId: null,
          boundKeyPrefix: null,
          providerWalletId: imported.providerWalletId,
          policyId,
          vaultDestination: null
        }).pipe(Effect.tapError(() => provider.setPolicyState(policyId, "default_deny").pipe(Effect.ignore)))
        return walletView(linked)
      }).pipe(Effect.withSpan("WalletService.importSubmit"))

    // --- TEE wallets --------------------------------------------------------------------------------

    /** Why a key cannot hold TEE wallets (rebind target rules), or undefined when it can. */
    const keyUnfit = (key: KeyInfo | undefined): { reason: string; message: string } | undefined => {
      if (key === undefined) return { reason: "not_found", message: "No key with this prefix on this account" }
      if (key.revokedAtMs !== null) return { reason: "revoked", message: "Key has been revoked" }
      if (key.expiresAtMs !== null && key.expiresAtMs <= nowMs()) return { reason: "expired", message: "Key has expired" }
      if (key.environment !== "production") return { reason: "test_key", message: "A test key cannot hold TEE wallets" }
      if (!key.scopes.includes("swap:write")) return { reason: "missing_scope", message: "The key lacks swap:write" }
      return undefined
    }

    const createTee = (p: Principal, input: CreateTeeInput) =>
      Effect.gen(function* () {
        yield* requireLinkingPlan(p)
        const key = yield* options.keys.findByPrefix(p.accountId, input.keyPrefix).pipe(Effect.orDie)
        const unfit = keyUnfit(key)
        if (unfit !== undefined || key === undefined) {
          return yield* refuse("VALIDATION_FAILED", unfit?.message ?? "unknown key", { field: "keyPrefix", extra: { reason: unfit?.reason ?? "not_found" } })
        }
        // Count first, so a full account creates nothing at the provider.
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM wallets WHERE account_id = ${p.accountId} AND revoked_at IS NULL`
        const limit = planOf(p).limits.linkedWallets
        if ((count?.n ?? 0) >= limit) {
          return yield* refuse("WALLET_LIMIT_REACHED", `The account has the maximum of ${limit} active linked wallets; revoke one first`, { extra: { limit } })
        }
        const policyId = yield* provider.createBackstopPolicy
        const created = yield* provider.createTeeWallet({ accountId: p.accountId, chain: input.chain, policyId })
        const row = yield* insertRow(p, {
          chain: input.chain,
          address: created.address,
          kind: "tee",
          label: input.label ?? null,
          allowLaunch: input.allowLaunch ?? false,
          boundKeyId: key.keyId,
          boundKeyPrefix: key.keyPrefix,
          providerWalletId: created.providerWalletId,
          policyId,
          vaultDestination: input.vaultDestination ?? null
        }).pipe(Effect.tapError(() => provider.setPolicyState(policyId, "default_deny").pipe(Effect.ignore)))
        return walletView(row)
      }).pipe(Effect.withSpan("WalletService.createTee"))

    // --- build claims and the sign relay -----------------------------------------------------------

    const payerRefusal = (reason: string, message: string) =>
      refuse("VALIDATION_FAILED", message, { field: "linkedWalletId", extra: { reason } })

    /** The payer rules of a self-signed build (spec launch 2.3): exists, active, spend-capable, chain, TEE binding. */
    const checkPayer = (row: WalletRow | undefined, keyId: string | null, chain: WalletChain, purpose: "launch" | "spend") => {
      if (row === undefined) return payerRefusal("not_found", "No such wallet on this account")
      if (row.revoked_at !== null) return payerRefusal("revoked", "The wallet is revoked")
      if (row.kind === "linked") return payerRefusal("wallet_not_signable", "An attribution-only link cannot sign")
      if (row.chain !== chain) return payerRefusal("chain_mismatch", `The wallet is on ${row.chain}, not ${chain}`)
      if (row.kind === "tee" && row.bound_key_id !== keyId) return payerRefusal("key_not_bound", "The TEE wallet is bound to another key")
      if (row.kind === "tee" && purpose === "launch" && !row.allow_launch) {
        return payerRefusal("launch_not_allowed", "The owner has not turned on allowLaunch for this TEE wallet")
      }
      return undefined
    }

    const resolvePayer = (p: Principal, walletId: string, chain: WalletChain, purpose: "launch" | "spend") =>
      Effect.gen(function* () {
        const row = yield* rowById(p.accountId, walletId)
        const refusal = checkPayer(row, p.keyId, chain, purpose)
        if (refusal !== undefined || row === undefined) return yield* refusal ?? payerRefusal("not_found", "No such wallet on this account")
        return walletView(row)
      })

    const recordBuilt = (input: RecordBuiltInput) =>
      Effect.gen(function* () {
        const row = yield* rowById(input.accountId, input.walletId)
        const refusal = checkPayer(row, input.keyId, input.chain, "spend")
        if (refusal !== undefined) return yield* refusal
        const message = claimedMessage(input.chain, input.transaction)
        if (message === undefined) return yield* refuse("VALIDATION_FAILED", "transaction does not decode", { field: "transaction" })
        const hash = yield* sha256Hex(message)
        const id = randomId("clm")
        const createdAtMs = nowMs()
        const expiresAtMs = createdAtMs + CLAIM_LIFETIME_MS
        const txExpiresAtMs = input.txExpiresAtMs === undefined ? (input.chain === "solana" ? expiresAtMs : null) : input.txExpiresAtMs
        yield* sql`
          INSERT INTO sign_claims (id, account_id, wallet_id, key_id, chain, purpose, message_hash, required_scopes, state, created_at, expires_at, tx_expires_at)
          VALUES (${id}, ${input.accountId}, ${input.walletId}, ${input.keyId}, ${input.chain}, ${input.purpose}, ${hash},
            ${JSON.stringify(input.requiredScopes ?? [])}::jsonb, 'open', ${new Date(createdAtMs)}, ${new Date(expiresAtMs)},
            ${txExpiresAtMs === null ? null : new Date(txExpiresAtMs)})`
        return { claimId: id, expiresAtMs }
      }).pipe(Effect.withSpan("WalletService.recordBuilt"))

    const unrecognized = (message: string, reason: string) => refuse("UNRECOGNIZED_TRANSACTION", message, { extra: { reason } })

    const signClaimed = (p: Principal, walletId: string, input: SignInput) =>
      Effect.gen(function* () {
        const row = yield* rowById(p.accountId, walletId)
        if (row === undefined || row.revoked_at !== null) return yield* notFound(`No active wallet ${walletId} on this account`)
        if (row.kind === "linked" || row.provider_wallet_id === null) {
          return yield* unrecognized("An attribution-only link cannot sign", "wallet_not_signable")
        }
        if (row.kind === "tee" && row.bound_key_id !== p.keyId) {
          return yield* unrecognized("The TEE wallet is not bound to this key", "key_not_bound")
        }
        const message = claimedMessage(row.chain, input.transaction)
        if (message === undefined) return yield* unrecognized("transaction does not decode", "undecodable")
        const hash = yield* sha256Hex(message)
        const [claim] = yield* sql<{ id: string; required_scopes: string; state: string }>`
          SELECT id, required_scopes::text AS required_scopes, state FROM sign_claims
          WHERE id = ${input.claimId} AND account_id = ${p.accountId} AND wallet_id = ${walletId}
            AND key_id IS NOT DISTINCT FROM ${p.keyId} AND message_hash = ${hash}
            AND state = 'open' AND expires_at > ${now()}`
        if (claim === undefined) {
          return yield* unrecognized("No open build claim matches this transaction (unknown, expired, used, or bytes altered); build again", "no_matching_claim")
        }
        const required = JSON.parse(claim.required_scopes) as ReadonlyArray<string>
        const missing = required.filter((s) => !holdsScope(p, s))
        if (missing.length > 0) {
          return yield* refuse("SCOPE_MISSING", `This build needs ${missing.join(", ")}, which the key no longer holds`, { extra: { scope: missing[0] } })
        }
        if (row.kind === "imported") {
          const sig = input.authorizationSignature
          const authorized = sig !== undefined && (yield* provider.verifyQuorumAuthorization(row.provider_wallet_id, input.transaction, sig))
          if (!authorized) {
            return yield* unrecognized("authorizationSignature is missing or not by the wallet's signer key", "signer_authorization_failed")
          }
        }
        const signed = yield* provider.sign(row.provider_wallet_id, input.transaction).pipe(Effect.mapError((e) => ("_tag" in e && e._tag === "WalletProviderError" ? providerRefusal(e) : e)))
        // Consume once; a racing request that lost gets nothing.
        const consumed = yield* sql`
          UPDATE sign_claims SET state = 'signed', signed_at = ${now()}, signature = ${signed.signature}
          WHERE id = ${claim.id} AND state = 'open' AND expires_at > ${now()} RETURNING id`
        if (consumed.length === 0) return yield* unrecognized("The claim was used by another request", "no_matching_claim")
        return { walletId, chain: row.chain, claimId: claim.id, signature: signed.signature, signedTransaction: signed.signedTransaction }
      }).pipe(Effect.withSpan("WalletService.signClaimed"))

    const settleClaim = (claimId: string, outcome: "confirmed" | "failed" | "expired") =>
      Effect.asVoid(sql`
        UPDATE sign_claims SET state = ${outcome}, settled_at = ${now()}
        WHERE id = ${claimId} AND state IN ('open', 'signed')`)

    // --- rebind -------------------------------------------------------------------------------------

    const rebindTargetInvalid = (reason: string, message: string) => refuse("REBIND_TARGET_INVALID", message, { extra: { reason } })
    const walletInvalid = (reason: string, message: string, extra: Record<string, unknown>) =>
      refuse("REBIND_WALLET_INVALID", message, { extra: { reason, ...extra } })

    const checkTeeRow = (row: WalletRow, selector?: string) => {
      const at = { walletId: row.id, ...(selector !== undefined ? { selector } : {}) }
      if (row.kind !== "tee") return walletInvalid("not_tee", `${row.id} is not a TEE wallet`, at)
      if (row.revoked_at !== null) return walletInvalid("inactive", `${row.id} is not active`, at)
      if (row.authority_status !== "verified_active") {
        return walletInvalid("authority_not_verified", `${row.id} is not at a verified-active remote authority`, at)
      }
      return undefined
    }

    const resolveSelectors = (rows: ReadonlyArray<WalletRow>, selectors: ReadonlyArray<string>, labelPrefix: string | undefined) =>
      Effect.gen(function* () {
        const chosen = new Map<string, WalletRow>()
        for (const selector of selectors) {
          let row = rows.find((r) => r.id === selector)
          if (row === undefined) {
            const keys = new Set<string>()
            for (const chain of ["solana", "evm"] as const) {
              const c = canonicalAddress(chain, selector)
              if (c !== undefined) keys.add(`${chain}:${addressKey(chain, c)}`)
            }
            const byAddress = rows.filter((r) => keys.has(`${r.chain}:${r.address_key}`))
            row = byAddress.find((r) => r.revoked_at === null) ?? byAddress[0]
          }
          if (row === undefined) {
            const byLabel = rows.filter((r) => r.kind === "tee" && r.revoked_at === null && r.label === selector)
            if (byLabel.length > 1) {
              return yield* walletInvalid("ambiguous", `The label '${selector}' matches ${byLabel.length} wallets`, {
                selector,
                matches: byLabel.map((r) => ({ id: r.id, address: r.address, label: r.label, chain: r.chain }))
              })
            }
            row = byLabel[0]
          }
          if (row === undefined) return yield* walletInvalid("not_found", `No wallet matches '${selector}'`, { selector })
          const bad = checkTeeRow(row, selector)
          if (bad !== undefined) return yield* bad
          chosen.set(row.id, row)
        }
        if (labelPrefix !== undefined) {
          for (const r of rows) {
            if (r.kind === "tee" && r.revoked_at === null && r.label !== null && r.label.startsWith(labelPrefix)) {
              const bad = checkTeeRow(r)
              if (bad !== undefined) return yield* bad
              chosen.set(r.id, r)
            }
          }
        }
        return [...chosen.values()]
      })

    const tooMany = (count: number) =>
      refuse("REBIND_TOO_MANY", `A rebind moves 1 to ${REBIND_WALLETS_MAX} wallets; this one selects ${count}`, {
        extra: { max: REBIND_WALLETS_MAX, count }
      })

    interface ClaimRow {
      readonly id: string
      readonly wallet_id: string
      readonly chain: WalletChain
      readonly state: string
      readonly expires_at: Date
      readonly tx_expires_at: Date | null
      readonly signature: string | null
    }

    /** Open builds, then forwarded signs (reconciled against the chain), for the wallets that would move. */
    const checkClaims = (walletIds: ReadonlyArray<string>, persist: boolean) =>
      Effect.gen(function* () {
        if (walletIds.length === 0) return
        const t = now()
        const claims = yield* sql<ClaimRow>`
          SELECT id, wallet_id, chain, state, expires_at, tx_expires_at, signature FROM sign_claims
          WHERE wallet_id IN ${sql.in([...walletIds])} AND state IN ('open', 'signed')`
        const openBuilds = claims.filter((c) => c.state === "open" && new Date(c.expires_at).getTime() > t.getTime())
        if (openBuilds.length > 0) {
          const ids = [...new Set(openBuilds.map((c) => c.wallet_id))]
          const retryAfter = Math.max(...openBuilds.map((c) => new Date(c.expires_at).getTime()))
          return yield* refuse("REBIND_BUILD_OPEN", "A build for a wallet is inside its 30-minute claim window", {
            extra: { walletIds: ids, retryAfter }
          })
        }
        const stillOpen: Array<{ claim: ClaimRow; reason: "pending" | "unexpirable" }> = []
        for (const c of claims) {
          if (c.state !== "signed") continue
          if (c.chain === "solana" && c.tx_expires_at !== null && new Date(c.tx_expires_at).getTime() <= t.getTime()) {
            if (persist) yield* settleClaim(c.id, "expired")
            continue
          }
          const outcome = yield* reconciler
            .outcome({ claimId: c.id, chain: c.chain, signature: c.signature ?? "" })
            .pipe(
              Effect.catchAll(() =>
                Effect.fail(
                  refuse("REBIND_RECONCILE_INCOMPLETE", "Could not read the chain for a forwarded sign; nothing changed, retry", {
                    extra: { walletIds: [c.wallet_id] }
                  })
                )
              )
            )
          if (outcome === "pending") stillOpen.push({ claim: c, reason: c.chain === "evm" ? "unexpirable" : "pending" })
          else if (persist) yield* settleClaim(c.id, outcome)
        }
        const first = stillOpen[0]
        if (first !== undefined) {
          return yield* refuse("REBIND_FORWARD_OPEN", "A forwarded sign is not yet confirmed, failed or provably expired", {
            extra: { reason: first.reason, walletIds: [...new Set(stillOpen.map((s) => s.claim.wallet_id))] }
          })
        }
      })

    const toKeyView = (key: KeyInfo, allowLaunchWallets: number) => {
      const zero = new Set((key.spendLimits ?? []).filter((l) => BigInt(l.maxPerTxRaw) === 0n).map((l) => l.asset))
      return {
        keyPrefix: key.keyPrefix,
        label: key.label,
        paused: key.paused,
        walletScope: key.walletScope,
        tradeReady: { sol: !zero.has("sol"), usdc: !zero.has("usdc") },
        hoodTradeReady: { eth: !zero.has("eth"), usdg: !zero.has("usdg") },
        missingCaps: [...zero].sort(),
        launchScope: { launchWrite: key.scopes.includes("launch:write"), allowLaunchWallets }
      }
    }

    const moved = (r: WalletRow, auditId?: string) => ({
      id: r.id,
      address: r.address,
      label: r.label,
      fromKeyPrefix: r.bound_key_prefix,
      allowLaunch: r.allow_launch,
      chain: r.chain,
      ...(auditId !== undefined ? { auditId } : {})
    })
    const unchangedView = (r: WalletRow) => ({ id: r.id, address: r.address, label: r.label, allowLaunch: r.allow_launch, chain: r.chain })

    const allowLaunchAfter = (accountId: string, key: KeyInfo, movingAllow: number) =>
      Effect.map(
        sql<{ n: number }>`
          SELECT count(*)::int AS n FROM wallets
          WHERE account_id = ${accountId} AND bound_key_id = ${key.keyId} AND kind = 'tee' AND allow_launch AND revoked_at IS NULL`,
        (rows) => (rows[0]?.n ?? 0) + movingAllow
      )

    const checkScopeRoom = (key: KeyInfo, moving: ReadonlyArray<WalletRow>) =>
      Effect.gen(function* () {
        if (key.walletScope !== "selected" || moving.length === 0) return
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM key_wallet_assignments WHERE key_id = ${key.keyId}`
        const already = yield* sql<{ wallet_id: string }>`
          SELECT wallet_id FROM key_wallet_assignments WHERE key_id = ${key.keyId} AND wallet_id IN ${sql.in(moving.map((r) => r.id))}`
        const added = moving.length - already.length
        if ((count?.n ?? 0) + added > SELECTED_SCOPE_ASSIGNMENTS_MAX) {
          return yield* refuse("REBIND_SCOPE_FULL", `The target key's selected wallet scope would pass ${SELECTED_SCOPE_ASSIGNMENTS_MAX} assignments`, {
            extra: { max: SELECTED_SCOPE_ASSIGNMENTS_MAX }
          })
        }
      })

    const resolveTarget = (p: Principal, prefix: string) =>
      Effect.gen(function* () {
        const key = yield* options.keys.findByPrefix(p.accountId, prefix).pipe(Effect.orDie)
        const unfit = keyUnfit(key)
        if (unfit !== undefined || key === undefined) {
          return yield* rebindTargetInvalid(unfit?.reason ?? "not_found", unfit?.message ?? "No key with this prefix on this account")
        }
        return key
      })

    const preview = (p: Principal, input: Extract<RebindInput, { _tag: "Preview" }>) =>
      Effect.gen(function* () {
        if (input.wallets.length > REBIND_WALLETS_MAX) return yield* tooMany(input.wallets.length)
        const key = yield* resolveTarget(p, input.toKeyPrefix)
        const rows = yield* accountRows(p.accountId)
        const selected = yield* resolveSelectors(rows, input.wallets, input.labelPrefix)
        if (selected.length === 0 || selected.length > REBIND_WALLETS_MAX) return yield* tooMany(selected.length)
        const moving = selected.filter((r) => r.bound_key_id !== key.keyId)
        const unchanged = selected.filter((r) => r.bound_key_id === key.keyId)
        yield* checkClaims(moving.map((r) => r.id), false)
        yield* checkScopeRoom(key, moving)
        const allow = yield* allowLaunchAfter(p.accountId, key, moving.filter((r) => r.allow_launch).length)
        return {
          success: true as const,
          dryRun: true,
          toKey: toKeyView(key, allow),
          rebound: moving.map((r) => moved(r)),
          unchanged: unchanged.map(unchangedView)
        }
      })

    const commit = (p: Principal, input: Extract<RebindInput, { _tag: "Commit" }>) =>
      Effect.gen(function* () {
        const ids = [...new Set(input.walletIds)]
        if (ids.length === 0 || ids.length > REBIND_WALLETS_MAX) return yield* tooMany(ids.length)
        const key = yield* resolveTarget(p, input.toKeyPrefix)
        // Chain reads happen before the transaction (settlements are facts, kept either way).
        const pre = (yield* accountRows(p.accountId)).filter((r) => ids.includes(r.id) && r.bound_key_id !== key.keyId)
        yield* checkClaims(pre.map((r) => r.id), true)
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* lockAccount(p.accountId)
            const rows = yield* sql<WalletRow>`
              SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE account_id = ${p.accountId} AND id IN ${sql.in(ids)} FOR UPDATE`
            const byId = new Map(rows.map((r) => [r.id, r]))
            for (const id of ids) {
              const row = byId.get(id)
              if (row === undefined) return yield* walletInvalid("not_found", `No wallet ${id} on this account`, { walletId: id })
              const bad = checkTeeRow(row)
              if (bad !== undefined) return yield* bad
            }
            const stale = ids.filter((id) => byId.get(id)?.bound_key_prefix !== input.expect[id])
            if (stale.length > 0) {
              return yield* refuse("REBIND_STALE", "A binding changed since the preview; preview again", {
                extra: { walletIds: stale, current: Object.fromEntries(stale.map((id) => [id, byId.get(id)?.bound_key_prefix ?? null])) }
              })
            }
            const selected = ids.map((id) => byId.get(id) as WalletRow)
            const moving = selected.filter((r) => r.bound_key_id !== key.keyId)
            const unchanged = selected.filter((r) => r.bound_key_id === key.keyId)
            yield* checkClaims(moving.map((r) => r.id), true)
            yield* checkScopeRoom(key, moving)
            const at = now()
            const rebound: Array<Record<string, unknown>> = []
            for (const r of moving) {
              const auditId = randomId("rbd")
              yield* sql`UPDATE wallets SET bound_key_id = ${key.keyId}, bound_key_prefix = ${key.keyPrefix} WHERE id = ${r.id}`
              yield* sql`
                INSERT INTO tee_rebinds (id, account_id, wallet_id, from_key_id, from_key_prefix, to_key_id, to_key_prefix, actor, actor_device_prefix, at)
                VALUES (${auditId}, ${p.accountId}, ${r.id}, ${r.bound_key_id ?? ""}, ${r.bound_key_prefix ?? ""}, ${key.keyId}, ${key.keyPrefix},
                  ${p.credential === "device" ? "device" : "session"}, ${p.credential === "device" ? p.devicePrefix : null}, ${at})`
              if (r.bound_key_id !== null) yield* sql`DELETE FROM key_wallet_assignments WHERE key_id = ${r.bound_key_id} AND wallet_id = ${r.id}`
              if (key.walletScope === "selected") {
                yield* sql`
                  INSERT INTO key_wallet_assignments (key_id, wallet_id, account_id, created_at) VALUES (${key.keyId}, ${r.id}, ${p.accountId}, ${at})
                  ON CONFLICT (key_id, wallet_id) DO NOTHING`
              }
              rebound.push(moved(r, auditId))
            }
            const allow = yield* allowLaunchAfter(p.accountId, key, 0)
            return {
              success: true as const,
              dryRun: false,
              toKey: toKeyView(key, allow),
              rebound,
              unchanged: unchanged.map(unchangedView)
            }
          })
        )
      })

    const rebind = (p: Principal, input: RebindInput) =>
      (input._tag === "Preview" ? preview(p, input) : commit(p, input)).pipe(Effect.withSpan("WalletService.rebind", { attributes: { mode: input._tag } }))

    const rebinds = (p: Principal, walletId: string | undefined, limit: number) =>
      Effect.map(
        sql<{
          id: string
          wallet_id: string
          address: string | null
          chain: string | null
          from_key_prefix: string
          to_key_prefix: string
          actor: string
          actor_device_prefix: string | null
          at: Date
        }>`
          SELECT r.id, r.wallet_id, w.address, w.chain, r.from_key_prefix, r.to_key_prefix, r.actor, r.actor_device_prefix, r.at
          FROM tee_rebinds r LEFT JOIN wallets w ON w.id = r.wallet_id
          WHERE r.account_id = ${p.accountId} ${walletId !== undefined ? sql`AND r.wallet_id = ${walletId}` : sql``}
          ORDER BY r.seq DESC LIMIT ${limit}`,
        (rows) =>
          rows.map((r) => ({
            auditId: r.id,
            walletId: r.wallet_id,
            address: r.address,
            chain: r.chain,
            fromKeyPrefix: r.from_key_prefix,
            toKeyPrefix: r.to_key_prefix,
            actor: r.actor,
            ...(r.actor === "device" ? { actorDevicePrefix: r.actor_device_prefix } : {}),
            at: iso(r.at)
          }))
      )

    const service: WalletServiceShape = {
      list,
      linkChallenge: (p, chain, address) => provider.linkChallenge(p.accountId, chain, address),
      link,
      revoke,
      importInit,
      importSubmit,
      createTee,
      update,
      recordBuilt,
      signClaimed,
      settleClaim,
      resolvePayer,
      rebind,
      rebinds
    }
    return service
  })

export const layer = (options: WalletServiceOptions): Layer.Layer<WalletService, never, SqlClient.SqlClient | WalletProvider | WalletMasterKey> =>
  Layer.effect(WalletService, make(options))
