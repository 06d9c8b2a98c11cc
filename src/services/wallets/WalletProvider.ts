/**
 * The wallet provider: who custodies keys and signs with them. The service talks to it as it
 * would to a hosted provider (embedded wallets with per-chain delegation, signer quorums,
 * policies, key import, TEE wallets); `layerLocal` is the local implementation over the `wp_*`
 * tables (migration 0005).
 *
 * Invariants of the local implementation:
 * - Private keys exist in plaintext only inside one call; at rest they are sealed under the
 *   master key (AES-256-GCM, bound to the provider wallet id).
 * - Delegation is read from the database on every use (`resolveDelegation`, `signWithEmbedded`);
 *   nothing caches it, so a revoke applies to the very next signature.
 * - Every signature passes the wallet's policy first (`BackstopPolicy`): a policy in
 *   `default_deny` or `cleared` state denies everything, an `active` one applies the ceilings
 *   and the Solana instruction denials. A denied transaction is not signed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { type BackstopRules, DEFAULT_CEILING_LAMPORTS, DEFAULT_CEILING_WEI, evaluate } from "./BackstopPolicy.js"
import { addressOfSecret, generateSecret, type WalletChain } from "./ChainKeys.js"
import { makeProviderPolicies, randomId } from "./internal/ProviderPolicies.js"
import { linkChallenge, signEvm, signSolana, verifyOwnership, verifyQuorumAuthorization } from "./internal/LocalSigning.js"
import { layerTest as masterKeyTest, type MasterKey, type MasterKeyError, WalletMasterKey } from "./MasterKey.js"
import { WalletProviderError } from "./WalletProviderError.js"

export { WalletProviderError } from "./WalletProviderError.js"

export type Custody = "embedded" | "imported" | "tee"
export type DelegationState = "active" | "revoked" | "none"

export interface ProviderWallet {
  readonly providerWalletId: string
  readonly accountId: string
  readonly chain: WalletChain
  readonly address: string
  readonly custody: Custody
  readonly policyId: string | null
  readonly quorumId: string | null
}

export interface EmbeddedWallet {
  readonly providerWalletId: string
  readonly chain: WalletChain
  readonly address: string
  readonly delegation: DelegationState
}

export interface SignedTransaction {
  /** Solana: the wallet's base58 signature; EVM: the signed transaction's hash. */
  readonly signature: string
  /** Solana: base64 wire transaction with the wallet's signature in its slot; EVM: 0x-hex signed transaction. */
  readonly signedTransaction: string
}

export type PolicyState = "active" | "default_deny" | "cleared"

export interface WalletProviderShape {
  /** The account's embedded wallet on `chain`, created on first call (one per account and chain). */
  readonly ensureEmbeddedWallet: (accountId: string, chain: WalletChain) => Effect.Effect<EmbeddedWallet, SqlError>
  readonly embeddedWallets: (accountId: string) => Effect.Effect<ReadonlyArray<EmbeddedWallet>, SqlError>
  /** Turns agent access for one chain on or off; fails `not_embedded` without an embedded wallet there. */
  readonly setDelegation: (accountId: string, chain: WalletChain, state: "active" | "revoked") => Effect.Effect<void, WalletProviderError | SqlError>
  /** Read live on every call: the embedded wallet when delegated, else `not_embedded` / `not_delegated` / `delegation_revoked`. */
  readonly resolveDelegation: (accountId: string, chain: WalletChain) => Effect.Effect<EmbeddedWallet, WalletProviderError | SqlError>
  /** Signs with the embedded wallet after resolving delegation afresh and applying its policy. */
  readonly signWithEmbedded: (accountId: string, chain: WalletChain, transaction: Uint8Array) => Effect.Effect<SignedTransaction, WalletProviderError | SqlError>
  /** The message an owner signs with an existing wallet to prove it for link-existing. */
  readonly linkChallenge: (accountId: string, chain: WalletChain, address: string) => string
  /** Verifies a link proof: ed25519 (base58 signature) on Solana, EIP-191 personal_sign on EVM. */
  readonly verifyOwnership: (accountId: string, chain: WalletChain, address: string, signature: string) => Effect.Effect<boolean>
  /** Registers a 1-of-1 quorum of one P-256 signer key (SPKI DER). */
  readonly registerSignerQuorum: (signerSpki: Uint8Array) => Effect.Effect<string, SqlError>
  /** Creates the fixed backstop policy (ceilings from the layer options). */
  readonly createBackstopPolicy: Effect.Effect<string, SqlError>
  readonly setPolicyState: (policyId: string, state: PolicyState) => Effect.Effect<void, SqlError>
  readonly policyState: (policyId: string) => Effect.Effect<PolicyState | undefined, SqlError>
  /** Imports a key with its signer quorum and policy attached, in one call. */
  readonly importWallet: (input: {
    readonly accountId: string
    readonly chain: WalletChain
    readonly secret: Uint8Array
    readonly quorumId: string
    readonly policyId: string
  }) => Effect.Effect<ProviderWallet, SqlError>
  /** Creates a TEE-custodied wallet with the given policy. */
  readonly createTeeWallet: (input: { readonly accountId: string; readonly chain: WalletChain; readonly policyId: string }) => Effect.Effect<ProviderWallet, SqlError>
  /** True when `signature` (P-256 ECDSA over SHA-256, raw r||s, base64) by the wallet's quorum key covers `payload`. */
  readonly verifyQuorumAuthorization: (providerWalletId: string, payload: Uint8Array, signature: Uint8Array) => Effect.Effect<boolean, SqlError>
  /** Signs under the wallet's policy. */
  readonly sign: (providerWalletId: string, transaction: Uint8Array) => Effect.Effect<SignedTransaction, WalletProviderError | SqlError>
}

export class WalletProvider extends Context.Tag("curvestream/WalletProvider")<WalletProvider, WalletProviderShape>() {}

export interface LocalWalletProviderOptions {
  /** `AGENT_WALLET_CEILING_LAMPORTS` (default 50 SOL). */
  readonly ceilingLamports?: bigint
  /** `AGENT_WALLET_CEILING_WEI` (default 10 ETH). */
  readonly ceilingWei?: bigint
}

interface WpRow {
  readonly id: string
  readonly account_id: string
  readonly chain: WalletChain
  readonly address: string
  readonly custody: Custody
  readonly secret_sealed: string
  readonly quorum_id: string | null
  readonly policy_id: string | null
}

const sealAad = (providerWalletId: string) => `wp_wallets:${providerWalletId}`

const toEmbedded = (r: Pick<WpRow, "id" | "chain" | "address"> & { delegation: DelegationState | null }): EmbeddedWallet => ({
  providerWalletId: r.id,
  chain: r.chain,
  address: r.address,
  delegation: r.delegation ?? "none"
})

/** What the local provider's parts share. */
interface LocalContext {
  readonly sql: SqlClient.SqlClient
  readonly masterKey: MasterKey
  readonly now: () => Date
  readonly policyFrom: ReturnType<typeof makeProviderPolicies>["policyFrom"]
}

interface NewWallet {
  readonly accountId: string
  readonly chain: WalletChain
  readonly custody: Custody
  readonly secret: Uint8Array
  readonly quorumId: string | null
  readonly policyId: string | null
}

const insertWallet = (c: LocalContext, input: NewWallet) =>
  Effect.gen(function* () {
    const id = randomId("wpw")
    const address = yield* Effect.promise(() => addressOfSecret(input.chain, input.secret))
    const sealed = yield* c.masterKey.seal(input.secret, sealAad(id))
    yield* c.sql`
      INSERT INTO wp_wallets (id, account_id, chain, address, custody, secret_sealed, quorum_id, policy_id, created_at)
      VALUES (${id}, ${input.accountId}, ${input.chain}, ${address}, ${input.custody}, ${sealed}, ${input.quorumId}, ${input.policyId}, ${c.now()})`
    return {
      providerWalletId: id,
      accountId: input.accountId,
      chain: input.chain,
      address,
      custody: input.custody,
      policyId: input.policyId,
      quorumId: input.quorumId
    } satisfies ProviderWallet
  })

const rowsOfEmbedded = (c: LocalContext, accountId: string) =>
  c.sql<WpRow & { delegation: DelegationState | null }>`
    SELECT w.id, w.account_id, w.chain, w.address, w.custody, w.secret_sealed, w.quorum_id, w.policy_id, d.state AS delegation
    FROM wp_wallets w LEFT JOIN wp_delegations d ON d.account_id = w.account_id AND d.chain = w.chain
    WHERE w.account_id = ${accountId} AND w.custody = 'embedded' ORDER BY w.chain`

/** The account's embedded wallet on `chain` and its delegation: what `resolveDelegation` reads (no key material, one row). */
const embeddedOn = (c: LocalContext, accountId: string, chain: WalletChain) =>
  c.sql<Pick<WpRow, "id" | "chain" | "address"> & { delegation: DelegationState | null }>`
    SELECT w.id, w.chain, w.address, d.state AS delegation
    FROM wp_wallets w LEFT JOIN wp_delegations d ON d.account_id = w.account_id AND d.chain = w.chain
    WHERE w.account_id = ${accountId} AND w.chain = ${chain} AND w.custody = 'embedded'`

const unsealSecret = (c: LocalContext, row: WpRow) =>
  c.masterKey
    .open(row.secret_sealed, sealAad(row.id))
    .pipe(
      Effect.catchAll((e: MasterKeyError) =>
        Effect.fail(new WalletProviderError({ reason: "key_unavailable", message: `wallet key cannot be opened: ${e.message}` }))
      )
    )

type WalletPolicyRow = WpRow & { readonly policy_state: PolicyState | null; readonly policy_rules: string | null }

/** A wallet's columns and its policy's (`LEFT JOIN`: null when it has none). */
const walletAndPolicy = (c: LocalContext) => c.sql`
      SELECT w.id, w.account_id, w.chain, w.address, w.custody, w.secret_sealed, w.quorum_id, w.policy_id,
        p.state AS policy_state, p.rules::text AS policy_rules`

const policyOfRow = (c: LocalContext, row: WalletPolicyRow) =>
  c.policyFrom(row.policy_state === null || row.policy_rules === null ? undefined : { state: row.policy_state, rules: row.policy_rules })

/** The wallet's row and its policy's in one statement (the policy's columns null: none, `default_deny`). */
const loadWalletAndPolicy = (c: LocalContext, providerWalletId: string) =>
  Effect.gen(function* () {
    const [row] = yield* c.sql<WalletPolicyRow>`
      ${walletAndPolicy(c)} FROM wp_wallets w LEFT JOIN wp_policies p ON p.id = w.policy_id WHERE w.id = ${providerWalletId}`
    if (row === undefined) return yield* new WalletProviderError({ reason: "not_found", message: "no such provider wallet" })
    return row
  })

/** The refusal of an embedded wallet's agent use on `chain` (none, never approved, revoked), or undefined: delegated. */
const delegationRefusal = (row: { readonly delegation: DelegationState | null } | undefined, chain: WalletChain): WalletProviderError | undefined => {
  if (row === undefined) return new WalletProviderError({ reason: "not_embedded", message: `no embedded ${chain} wallet on this account` })
  if (row.delegation === null) return new WalletProviderError({ reason: "not_delegated", message: `agent access to the embedded ${chain} wallet was never approved` })
  if (row.delegation === "revoked") return new WalletProviderError({ reason: "delegation_revoked", message: `agent access to the embedded ${chain} wallet is revoked` })
  return undefined
}

/**
 * The account's embedded wallet on `chain`, its delegation and its policy in one statement: what
 * `signWithEmbedded` checks before it signs (the delegation read on every signature, as ever).
 */
const loadEmbeddedForSigning = (c: LocalContext, accountId: string, chain: WalletChain) =>
  Effect.gen(function* () {
    const [row] = yield* c.sql<WalletPolicyRow & { delegation: DelegationState | null }>`
      ${walletAndPolicy(c)}, d.state AS delegation
      FROM wp_wallets w LEFT JOIN wp_delegations d ON d.account_id = w.account_id AND d.chain = w.chain
        LEFT JOIN wp_policies p ON p.id = w.policy_id
      WHERE w.account_id = ${accountId} AND w.chain = ${chain} AND w.custody = 'embedded'`
    const refused = delegationRefusal(row, chain)
    if (refused !== undefined) return yield* refused
    return row!
  })

/** Signs with the wallet's row under its policy (the key unsealed for this call only). */
const signRow = (c: LocalContext, row: WalletPolicyRow, transaction: Uint8Array) =>
  Effect.gen(function* () {
    const policy = policyOfRow(c, row)
    if (policy.state !== "active") {
      return yield* new WalletProviderError({
        reason: "policy_denied",
        rule: "default_deny",
        message: `the wallet's policy is ${policy.state === "cleared" ? "cleared" : "default-deny"}; nothing is signed`
      })
    }
    const decision = evaluate(policy.rules, row.chain, transaction, row.address)
    if (decision._tag === "Deny") {
      return yield* new WalletProviderError({
        reason: "policy_denied",
        rule: decision.reason,
        message: decision.message,
        ...(decision.instruction !== undefined ? { instruction: decision.instruction } : {})
      })
    }
    const secret = yield* unsealSecret(c, row)
    return yield* (row.chain === "solana" ? signSolana(row.address, secret, transaction) : signEvm(secret, transaction)).pipe(
      Effect.ensuring(Effect.sync(() => secret.fill(0)))
    )
  })

/** Signs under the wallet's policy (the key unsealed for this call only). */
const signUnderPolicy = (c: LocalContext, providerWalletId: string, transaction: Uint8Array) =>
  Effect.flatMap(loadWalletAndPolicy(c, providerWalletId), (row) => signRow(c, row, transaction)).pipe(Effect.withSpan("WalletProvider.sign"))

/** Signs with the account's embedded wallet: delegated (read now), then under its policy; one statement reads all three. */
const signEmbeddedUnderPolicy = (c: LocalContext, accountId: string, chain: WalletChain, transaction: Uint8Array) =>
  Effect.flatMap(loadEmbeddedForSigning(c, accountId, chain), (row) => signRow(c, row, transaction)).pipe(Effect.withSpan("WalletProvider.sign"))

export const makeLocal = (options: LocalWalletProviderOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const masterKey: MasterKey = yield* WalletMasterKey
    const rules: BackstopRules = {
      ceilingLamports: options.ceilingLamports ?? DEFAULT_CEILING_LAMPORTS,
      ceilingWei: options.ceilingWei ?? DEFAULT_CEILING_WEI
    }
    /** Time: the Effect `Clock` the provider is built under; a row's timestamp is read as its statement is built. */
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis())
    const policies = makeProviderPolicies(sql, rules, now)
    const { createBackstopPolicy, policyFrom } = policies
    const c: LocalContext = { sql, masterKey, now, policyFrom }
    const embeddedRows = (accountId: string) => rowsOfEmbedded(c, accountId)
    const sign = (providerWalletId: string, transaction: Uint8Array) => signUnderPolicy(c, providerWalletId, transaction)

    const ensureEmbeddedWallet = (accountId: string, chain: WalletChain) =>
      Effect.gen(function* () {
        const existing = (yield* embeddedRows(accountId)).find((r) => r.chain === chain)
        if (existing !== undefined) return toEmbedded(existing)
        const policyId = yield* createBackstopPolicy
        const secret = generateSecret(chain)
        const id = randomId("wpw")
        const address = yield* Effect.promise(() => addressOfSecret(chain, secret))
        const sealed = yield* masterKey.seal(secret, sealAad(id))
        // A concurrent first call may have created it: keep whichever row won.
        yield* sql`
          INSERT INTO wp_wallets (id, account_id, chain, address, custody, secret_sealed, quorum_id, policy_id, created_at)
          VALUES (${id}, ${accountId}, ${chain}, ${address}, 'embedded', ${sealed}, NULL, ${policyId}, ${now()})
          ON CONFLICT (account_id, chain) WHERE custody = 'embedded' DO NOTHING`
        const row = (yield* embeddedRows(accountId)).find((r) => r.chain === chain)
        if (row === undefined) return yield* Effect.dieMessage("embedded wallet vanished after insert")
        return toEmbedded(row)
      }).pipe(Effect.withSpan("WalletProvider.ensureEmbeddedWallet"))

    const resolveDelegation = (accountId: string, chain: WalletChain) =>
      Effect.gen(function* () {
        const [row] = yield* embeddedOn(c, accountId, chain)
        const refused = delegationRefusal(row, chain)
        if (refused !== undefined) return yield* refused
        return toEmbedded(row!)
      })

    const service: WalletProviderShape = {
      ensureEmbeddedWallet,
      embeddedWallets: (accountId) => Effect.map(embeddedRows(accountId), (rows) => rows.map(toEmbedded)),
      setDelegation: (accountId, chain, state) =>
        Effect.gen(function* () {
          const row = (yield* embeddedRows(accountId)).find((r) => r.chain === chain)
          if (row === undefined) {
            return yield* new WalletProviderError({ reason: "not_embedded", message: `no embedded ${chain} wallet on this account` })
          }
          yield* sql`
            INSERT INTO wp_delegations (account_id, chain, state, updated_at) VALUES (${accountId}, ${chain}, ${state}, ${now()})
            ON CONFLICT (account_id, chain) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`
        }),
      resolveDelegation,
      signWithEmbedded: (accountId, chain, transaction) => signEmbeddedUnderPolicy(c, accountId, chain, transaction),
      linkChallenge,
      verifyOwnership,
      registerSignerQuorum: policies.registerSignerQuorum,
      createBackstopPolicy,
      setPolicyState: policies.setPolicyState,
      policyState: policies.policyState,
      importWallet: (input) =>
        insertWallet(c, { accountId: input.accountId, chain: input.chain, custody: "imported", secret: input.secret, quorumId: input.quorumId, policyId: input.policyId }),
      createTeeWallet: (input) =>
        Effect.suspend(() =>
          insertWallet(c, { accountId: input.accountId, chain: input.chain, custody: "tee", secret: generateSecret(input.chain), quorumId: null, policyId: input.policyId })
        ),
      verifyQuorumAuthorization: (providerWalletId, payload, signature) => verifyQuorumAuthorization(sql, providerWalletId, payload, signature),
      sign
    }
    return service
  })

/** The local provider over the `wp_*` tables; keys sealed under `WalletMasterKey`. */
export const layerLocal = (options: LocalWalletProviderOptions): Layer.Layer<WalletProvider, never, SqlClient.SqlClient | WalletMasterKey> =>
  Layer.effect(WalletProvider, makeLocal(options))

/** The real local provider over `Database.layerTest` and `MasterKey.layerTest`, default ceilings. */
export const layerTest: Layer.Layer<WalletProvider, MasterKeyError | SqlError> = layerLocal({}).pipe(
  Layer.provide(Layer.merge(masterKeyTest, Database.layerTest))
)
