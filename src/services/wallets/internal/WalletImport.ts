/**
 * HPKE import (spec document 2, 2.3): init hands out a fresh recipient key, sealed at rest under
 * the master key and bound to its `wallet_imports` row; submit opens the client's sealed key with
 * whichever open init it was sealed to, checks that it controls the address given at init, and
 * imports it with a 1-of-1 signer quorum and the backstop policy attached, linking last.
 *
 * Invariants:
 * - An init is single use: submit consumes it (one conditional UPDATE) before anything reaches the
 *   provider, so two submits of one ciphertext import once.
 * - At most `OPEN_IMPORTS_PER_ACCOUNT_MAX` inits are kept per account (used, expired and the oldest
 *   beyond the bound are deleted at the next init); each lasts `IMPORT_TTL_MS`.
 * - Key bytes are zeroed once used: the recipient key after sealing, the opened plaintext after
 *   parsing, the secret after the import or a refusal.
 * - When linking fails after the import, the wallet's policy falls back to default-deny.
 */
import { Effect } from "effect"
import { addressKey, addressOfSecret, parseImportedSecret, type WalletChain } from "../ChainKeys.js"
import { generateRecipient, HPKE_PARAMETERS, openSealed } from "../Hpke.js"
import type { Principal } from "../Principal.js"
import { walletError } from "../WalletError.js"
import { IMPORT_TTL_MS, OPEN_IMPORTS_PER_ACCOUNT_MAX } from "../WalletLimits.js"
import { randomId, type WalletContext, type WalletRows, walletView } from "./WalletRows.js"

export interface ImportSubmitInput {
  readonly ciphertext: Uint8Array
  readonly encapsulatedKey: Uint8Array
  /** P-256 signer public key, SPKI DER (the route accepts raw points and converts). */
  readonly signerSpki: Uint8Array
  readonly label?: string
}

/** An open import: the key to seal to, and when the init lapses. */
export interface ImportInit {
  readonly importId: string
  readonly chain: WalletChain
  readonly address: string
  /** The recipient's P-256 public key, base64 of the uncompressed point. */
  readonly encryptionPublicKey: string
  readonly hpke: typeof HPKE_PARAMETERS
  readonly expiresAtMs: number
}

interface ImportRow {
  readonly id: string
  readonly chain: WalletChain
  readonly address: string
  readonly private_key_sealed: string
}

export const makeWalletImport = (ctx: WalletContext, rows: WalletRows) => {
  const { sql, provider, masterKey } = ctx

  const importInit = (p: Principal, chain: WalletChain, address: string) =>
    Effect.gen(function* () {
      yield* rows.requireLinkingPlan(p)
      // Fail early on what would refuse the link; submit checks again (it links last).
      yield* rows.precheck(p, chain, address)
      const recipient = yield* Effect.promise(() => generateRecipient())
      const id = randomId("imp")
      const sealed = yield* masterKey.seal(recipient.privateKey, `wallet_imports:${id}`)
      recipient.privateKey.fill(0)
      const createdAtMs = yield* ctx.clock.currentTimeMillis
      const expiresAtMs = createdAtMs + IMPORT_TTL_MS
      const publicKey = Buffer.from(recipient.publicKey).toString("base64")
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* rows.lockAccount(p.accountId)
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
      const init: ImportInit = { importId: id, chain, address, encryptionPublicKey: publicKey, hpke: HPKE_PARAMETERS, expiresAtMs }
      return init
    }).pipe(Effect.withSpan("WalletService.importInit"))

  /** The open init whose key opens the sealed key, with the plaintext; HPKE authenticates, so only that init opens it. */
  const openWithAnyInit = (open: ReadonlyArray<ImportRow>, input: ImportSubmitInput) =>
    Effect.gen(function* () {
      for (const row of open) {
        const privateKey = yield* masterKey.open(row.private_key_sealed, `wallet_imports:${row.id}`).pipe(Effect.option)
        if (privateKey._tag === "None") continue
        const plaintext = yield* Effect.promise(() => openSealed(privateKey.value, input.encapsulatedKey, input.ciphertext))
        privateKey.value.fill(0)
        if (plaintext !== undefined) return { row, plaintext }
      }
      return undefined
    })

  const importSubmit = (p: Principal, input: ImportSubmitInput) =>
    Effect.gen(function* () {
      yield* rows.requireLinkingPlan(p)
      const open = yield* sql<ImportRow>`
        SELECT id, chain, address, private_key_sealed FROM wallet_imports
        WHERE account_id = ${p.accountId} AND consumed_at IS NULL AND expires_at > ${rows.now()}
        ORDER BY created_at DESC, id DESC LIMIT ${OPEN_IMPORTS_PER_ACCOUNT_MAX}`
      if (open.length === 0) {
        return yield* walletError("no_open_import", "No open import on this account (call import/init first; an init lasts 10 minutes)")
      }
      const matched = yield* openWithAnyInit(open, input)
      if (matched === undefined) {
        return yield* walletError("import_not_opened", "ciphertext does not open under any open import's key (expired, used, or sealed to another key)")
      }
      const { row, plaintext } = matched
      const secret = yield* Effect.promise(() => parseImportedSecret(row.chain, new TextDecoder().decode(plaintext)))
      plaintext.fill(0)
      if (secret === undefined) {
        return yield* walletError("import_not_a_key", row.chain === "evm" ? "plaintext is not a 32-byte hex private key" : "plaintext is not a base58 Solana secret key")
      }
      const derived = yield* Effect.promise(() => addressOfSecret(row.chain, secret))
      if (addressKey(row.chain, derived) !== addressKey(row.chain, row.address)) {
        secret.fill(0)
        return yield* walletError("import_address_mismatch", `the sealed key does not control ${row.address}, the address given at init`)
      }
      // Single use: consume the init before anything reaches the provider.
      const consumed = yield* sql`UPDATE wallet_imports SET consumed_at = ${rows.now()} WHERE id = ${row.id} AND consumed_at IS NULL RETURNING id`
      if (consumed.length === 0) {
        secret.fill(0)
        return yield* walletError("no_open_import", "this import was already submitted")
      }
      // Provider: 1-of-1 signer quorum, the fixed backstop policy, then the import with both attached.
      const quorumId = yield* provider.registerSignerQuorum(input.signerSpki)
      const policyId = yield* provider.createBackstopPolicy
      const imported = yield* provider
        .importWallet({ accountId: p.accountId, chain: row.chain, secret, quorumId, policyId })
        .pipe(Effect.ensuring(Effect.sync(() => secret.fill(0))))
      // Link last; when linking fails after the import, the policy falls back to default-deny.
      const linked = yield* rows.insertCustodied(p, {
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
      })
      return walletView(linked)
    }).pipe(Effect.withSpan("WalletService.importSubmit"))

  return { importInit, importSubmit }
}
