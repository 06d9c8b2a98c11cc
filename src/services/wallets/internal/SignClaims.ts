/**
 * The sign relay's single-use build claims (spec document 2, 2.3; launch document 2.3's payer
 * rules): a service that builds a transaction for a spend-capable wallet stakes out a claim with
 * `recordBuilt`; the relay signs only a transaction that matches an open claim; whoever learns
 * what became of a forwarded sign settles its claim.
 *
 * Invariants:
 * - The relay signs only a transaction this service recorded with `recordBuilt`: same wallet,
 *   same key, same message bytes, within the claim's 30-minute lifetime, once. The claim is
 *   consumed by one conditional UPDATE after the provider signed, so two racing requests cannot
 *   both receive a signature; a refused request consumes nothing.
 * - A claim binds the message, not the signatures: on Solana co-signers may fill other slots.
 * - The wallet's binding and the key's scopes are read at sign time: a rebind or a narrowed key
 *   applies to the very next sign.
 */
import { getTransactionDecoder } from "@solana/kit"
import { Effect } from "effect"
import type { WalletChain } from "../ChainKeys.js"
import { holdsScope, type Principal } from "../Principal.js"
import type { WalletProviderError } from "../WalletProvider.js"
import { type SigningFailureCause, walletRefusal } from "../WalletRefusal.js"
import { payerError, type PayerErrorReason, type SignClaimError, signClaimError, type SignClaimErrorReason } from "../WalletError.js"
import { CLAIM_LIFETIME_MS } from "../WalletLimits.js"
import { randomId, type WalletContext, type WalletRow, type WalletRows, walletView } from "./WalletRows.js"

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

export interface SignResult {
  readonly walletId: string
  readonly chain: WalletChain
  readonly claimId: string
  readonly signature: string
  readonly signedTransaction: string
}

export type ClaimOutcome = "confirmed" | "failed" | "expired"
export type ClaimState = "open" | "signed" | ClaimOutcome

/** Claims bind the message: on Solana the signed message bytes (signatures may be added by co-signers). Undefined: does not decode. Pure. */
export const claimedMessage = (chain: WalletChain, transaction: Uint8Array): Uint8Array | undefined => {
  if (chain === "evm") return transaction
  try {
    return new Uint8Array(getTransactionDecoder().decode(transaction).messageBytes)
  } catch {
    return undefined
  }
}

/** When a claim's transaction can no longer land: the caller's figure, else the claim's own expiry on Solana, never on EVM. Pure. */
export const claimTxExpiresAtMs = (chain: WalletChain, given: number | null | undefined, claimExpiresAtMs: number): number | null =>
  given === undefined ? (chain === "solana" ? claimExpiresAtMs : null) : given

/** The payer rules of a self-signed build (spec launch 2.3): exists, active, spend-capable, chain, TEE binding. Pure. */
export const payerProblem = (
  row: WalletRow | undefined,
  keyId: string | null,
  chain: WalletChain,
  purpose: "launch" | "spend"
): { readonly reason: PayerErrorReason; readonly message: string } | undefined => {
  if (row === undefined) return { reason: "not_found", message: "No such wallet on this account" }
  if (row.revoked_at !== null) return { reason: "revoked", message: "The wallet is revoked" }
  if (row.kind === "linked") return { reason: "wallet_not_signable", message: "An attribution-only link cannot sign" }
  if (row.chain !== chain) return { reason: "chain_mismatch", message: `The wallet is on ${row.chain}, not ${chain}` }
  if (row.kind === "tee" && row.bound_key_id !== keyId) return { reason: "key_not_bound", message: "The TEE wallet is bound to another key" }
  if (row.kind === "tee" && purpose === "launch" && !row.allow_launch) {
    return { reason: "launch_not_allowed", message: "The owner has not turned on allowLaunch for this TEE wallet" }
  }
  return undefined
}

/** The scopes of `required` the signing key no longer holds (owners hold every scope). Pure. */
export const missingScopes = (p: Principal, required: ReadonlyArray<string>): ReadonlyArray<string> => required.filter((s) => !holdsScope(p, s))

const sha256Hex = (bytes: Uint8Array): Effect.Effect<string> =>
  Effect.promise(async () => Buffer.from(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes))).toString("hex"))

/** What the relay answers when the provider could not sign: the spec's rows name the provider's own reason. */
const signingFailures: { readonly [C in SigningFailureCause]: SignClaimErrorReason } = {
  key_unavailable: "key_unavailable",
  not_a_signer: "not_a_signer",
  bad_transaction: "bad_transaction",
  not_found: "provider_wallet_not_found"
}

/**
 * The provider's refusal to sign, as the relay's (`WalletRefusal` decides what it means); a
 * policy denial names its rule (and instruction). The relay keeps the provider's message.
 */
const providerRefusal = (e: WalletProviderError): SignClaimError => {
  const r = walletRefusal(e)
  const reason: SignClaimErrorReason = r.reason === "signing_failed" ? signingFailures[r.cause] : r.reason
  const details = {
    ...(r.rule !== undefined ? { reason: r.rule } : {}),
    ...(r.instruction !== undefined ? { instruction: r.instruction } : {})
  }
  return signClaimError(reason, e.message, reason === "policy_denied" ? { details } : {})
}

export const makeSignClaims = (ctx: WalletContext, rows: WalletRows) => {
  const { sql, provider } = ctx

  /** The wallet `p` may use as payer on `chain`, checked against the payer rules. */
  const payer = (accountId: string, walletId: string, keyId: string | null, chain: WalletChain, purpose: "launch" | "spend") =>
    Effect.gen(function* () {
      const row = yield* rows.rowById(accountId, walletId)
      const problem = payerProblem(row, keyId, chain, purpose)
      if (problem !== undefined || row === undefined) {
        return yield* payerError(problem?.reason ?? "not_found", problem?.message ?? "No such wallet on this account")
      }
      return row
    })

  const resolvePayer = (p: Principal, walletId: string, chain: WalletChain, purpose: "launch" | "spend") =>
    Effect.map(payer(p.accountId, walletId, p.keyId, chain, purpose), walletView)

  const recordBuilt = (input: RecordBuiltInput) =>
    Effect.gen(function* () {
      yield* payer(input.accountId, input.walletId, input.keyId, input.chain, "spend")
      const message = claimedMessage(input.chain, input.transaction)
      if (message === undefined) return yield* signClaimError("build_undecodable", "transaction does not decode")
      const hash = yield* sha256Hex(message)
      const id = randomId("clm")
      const createdAtMs = yield* ctx.clock.currentTimeMillis
      const expiresAtMs = createdAtMs + CLAIM_LIFETIME_MS
      const txExpiresAtMs = claimTxExpiresAtMs(input.chain, input.txExpiresAtMs, expiresAtMs)
      yield* sql`
        INSERT INTO sign_claims (id, account_id, wallet_id, key_id, chain, purpose, message_hash, required_scopes, state, created_at, expires_at, tx_expires_at)
        VALUES (${id}, ${input.accountId}, ${input.walletId}, ${input.keyId}, ${input.chain}, ${input.purpose}, ${hash},
          ${JSON.stringify(input.requiredScopes ?? [])}::jsonb, 'open', ${new Date(createdAtMs)}, ${new Date(expiresAtMs)},
          ${txExpiresAtMs === null ? null : new Date(txExpiresAtMs)})`
      return { claimId: id, expiresAtMs }
    }).pipe(Effect.withSpan("WalletService.recordBuilt"))

  const signClaimed = (p: Principal, walletId: string, input: SignInput) =>
    Effect.gen(function* () {
      const row = yield* rows.rowById(p.accountId, walletId)
      if (row === undefined || row.revoked_at !== null) return yield* signClaimError("wallet_not_found", `No active wallet ${walletId} on this account`)
      if (row.kind === "linked" || row.provider_wallet_id === null) {
        return yield* signClaimError("wallet_not_signable", "An attribution-only link cannot sign")
      }
      if (row.kind === "tee" && row.bound_key_id !== p.keyId) {
        return yield* signClaimError("key_not_bound", "The TEE wallet is not bound to this key")
      }
      const message = claimedMessage(row.chain, input.transaction)
      if (message === undefined) return yield* signClaimError("undecodable", "transaction does not decode")
      const hash = yield* sha256Hex(message)
      const [claim] = yield* sql<{ id: string; required_scopes: string; state: string }>`
        SELECT id, required_scopes::text AS required_scopes, state FROM sign_claims
        WHERE id = ${input.claimId} AND account_id = ${p.accountId} AND wallet_id = ${walletId}
          AND key_id IS NOT DISTINCT FROM ${p.keyId} AND message_hash = ${hash}
          AND state = 'open' AND expires_at > ${rows.now()}`
      if (claim === undefined) {
        return yield* signClaimError("no_matching_claim", "No open build claim matches this transaction (unknown, expired, used, or bytes altered); build again")
      }
      const missing = missingScopes(p, JSON.parse(claim.required_scopes) as ReadonlyArray<string>)
      if (missing.length > 0) {
        return yield* signClaimError("scope_missing", `This build needs ${missing.join(", ")}, which the key no longer holds`, { details: { scope: missing[0] } })
      }
      if (row.kind === "imported") {
        const sig = input.authorizationSignature
        const authorized = sig !== undefined && (yield* provider.verifyQuorumAuthorization(row.provider_wallet_id, input.transaction, sig))
        if (!authorized) {
          return yield* signClaimError("signer_authorization_failed", "authorizationSignature is missing or not by the wallet's signer key")
        }
      }
      const signed = yield* provider.sign(row.provider_wallet_id, input.transaction).pipe(Effect.mapError((e) => ("_tag" in e && e._tag === "WalletProviderError" ? providerRefusal(e) : e)))
      // Consume once; a racing request that lost gets nothing.
      const consumed = yield* sql`
        UPDATE sign_claims SET state = 'signed', signed_at = ${rows.now()}, signature = ${signed.signature}
        WHERE id = ${claim.id} AND state = 'open' AND expires_at > ${rows.now()} RETURNING id`
      if (consumed.length === 0) return yield* signClaimError("no_matching_claim", "The claim was used by another request")
      const result: SignResult = { walletId, chain: row.chain, claimId: claim.id, signature: signed.signature, signedTransaction: signed.signedTransaction }
      return result
    }).pipe(Effect.withSpan("WalletService.signClaimed"))

  const settleClaim = (claimId: string, outcome: ClaimOutcome) =>
    Effect.asVoid(sql`
      UPDATE sign_claims SET state = ${outcome}, settled_at = ${rows.now()}
      WHERE id = ${claimId} AND state IN ('open', 'signed')`)

  /** The claim's state (`open`, `signed`, `confirmed`, `failed`, `expired`) and the relay's signature once signed; undefined when unknown. */
  const claimStatus = (claimId: string) =>
    Effect.map(
      sql<{ state: ClaimState; signature: string | null }>`SELECT state, signature FROM sign_claims WHERE id = ${claimId}`,
      (rows) => rows[0]
    )

  /**
   * Expires a claim the relay never used once its lifetime passed (now: the service's clock, the
   * Effect `Clock` unless the service was given one, the same the relay's sign compares with):
   * true when this call moved it `open` → `expired`, so nothing can ever sign its bytes. One
   * conditional UPDATE, as the relay's consume is: of a sign and an expiry racing, one wins.
   */
  const expireUnsigned = (claimId: string) =>
    Effect.gen(function* () {
      const now = rows.now()
      const expired = yield* sql<{ id: string }>`
        UPDATE sign_claims SET state = 'expired', settled_at = ${now}
        WHERE id = ${claimId} AND state = 'open' AND expires_at <= ${now} RETURNING id`
      return expired.length > 0
    })

  /**
   * Expires a claim only while the relay has not signed it (`open` → `expired`, whatever its
   * lifetime): true when this call moved it. One conditional UPDATE, as the relay's consume is:
   * of a sign and this expiry racing, one wins, and a signed claim is never marked expired.
   */
  const expireOpen = (claimId: string) =>
    Effect.map(
      sql<{ id: string }>`UPDATE sign_claims SET state = 'expired', settled_at = ${rows.now()} WHERE id = ${claimId} AND state = 'open' RETURNING id`,
      (moved) => moved.length > 0
    )

  /**
   * Fails a claim the relay signed whose lifetime has passed (now: the service's clock): true when
   * this call moved it `signed` → `failed`. The caller decides first that its signed bytes are
   * unknown to the chain (a Hood TEE approval signed and never submitted, docs/decisions.md).
   */
  const failSignedPastLifetime = (claimId: string) =>
    Effect.gen(function* () {
      const now = rows.now()
      const failed = yield* sql<{ id: string }>`
        UPDATE sign_claims SET state = 'failed', settled_at = ${now}
        WHERE id = ${claimId} AND state = 'signed' AND expires_at <= ${now} RETURNING id`
      return failed.length > 0
    })

  /** Whether the relay signed the claim and its lifetime has passed (now: the service's clock, the one `failSignedPastLifetime` compares with). Reads only. */
  const signedPastLifetime = (claimId: string) =>
    Effect.map(
      sql<{ id: string }>`SELECT id FROM sign_claims WHERE id = ${claimId} AND state = 'signed' AND expires_at <= ${rows.now()}`,
      (found) => found.length > 0
    )

  return { resolvePayer, recordBuilt, signClaimed, settleClaim, claimStatus, expireUnsigned, expireOpen, signedPastLifetime, failSignedPastLifetime }
}
