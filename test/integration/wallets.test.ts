/**
 * Wallet routes over real HTTP (uWS) on PGlite: link-existing, revoke, the HPKE import sealed by
 * an independent RFC 9180 implementation, and the sign relay with its single-use build claims and
 * the backstop policy on real serialized transactions. Every refusal asserts status, code and
 * field or reason, and that nothing was recorded (the tables are queried).
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createKeyPairFromPrivateKeyBytes,
  createTransactionMessage,
  getAddressFromPublicKey,
  getBase58Decoder,
  getBase58Encoder,
  getBase64Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Instruction,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes
} from "@solana/kit"
import { type Hex, parseEther, recoverTransactionAddress, serializeTransaction } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { Effect } from "effect"
import type { webcrypto } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import { startWalletHarness, type WalletHarness } from "../support/walletHarness.js"
import { sealForImport } from "../support/hpkeSealer.js"
import { CLAIM_LIFETIME_MS } from "../../src/services/wallets/WalletService.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { checkAnswersInThisFile } from "../support/contractRoutes.js"

// Every answer is checked against the wallet routes' own OpenAPI document (test/support/contract.ts).
checkAnswersInThisFile()

/** The harness of the backend suite running now (suites run one after the other). */
let h: WalletHarness

const utf8 = (s: string) => new TextEncoder().encode(s)
const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64")

type CryptoKey = webcrypto.CryptoKey
type CryptoKeyPair = webcrypto.CryptoKeyPair

interface SolKey {
  readonly seed: Uint8Array
  readonly address: string
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
}

const solanaKey = async (): Promise<SolKey> => {
  const seed = crypto.getRandomValues(new Uint8Array(32))
  const pair = await createKeyPairFromPrivateKeyBytes(seed)
  return { seed, address: await getAddressFromPublicKey(pair.publicKey), privateKey: pair.privateKey, publicKey: pair.publicKey }
}

const challenge = async (as: string, chain: string, addr: string): Promise<string> => {
  const r = await h.call("GET", `/api/v1/agent/wallets/link-challenge?chain=${chain}&address=${addr}`, as)
  expect(r.status).toBe(200)
  return r.body.message as string
}

const solanaLinkBody = async (as: string, key: SolKey, label?: string) => {
  const message = await challenge(as, "solana", key.address)
  const signature = getBase58Decoder().decode(await signBytes(key.privateKey, utf8(message)))
  return { chain: "solana", address: key.address, signature, ...(label !== undefined ? { label } : {}) }
}

const walletRows = (accountId: string) =>
  h.query<{ id: string; address: string; kind: string; revoked_at: Date | null }>(
    (sql) => sql`SELECT id, address, kind, revoked_at FROM wallets WHERE account_id = ${accountId} ORDER BY seq`
  )

const activeCount = async (accountId: string) => (await walletRows(accountId)).filter((r) => r.revoked_at === null).length

const BLOCKHASH = "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as Blockhash
const SYSTEM = address("11111111111111111111111111111111")
const TOKEN = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
const TOKEN_2022 = address("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb")

const u64 = (n: bigint) => {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, n, true)
  return b
}
const transferIx = (from: string, to: string, lamports: bigint): Instruction => ({
  programAddress: SYSTEM,
  accounts: [
    { address: address(from), role: AccountRole.WRITABLE_SIGNER },
    { address: address(to), role: AccountRole.WRITABLE }
  ],
  data: Uint8Array.from([2, 0, 0, 0, ...u64(lamports)])
})
const tokenIx = (program: string, data: number[], owner: string, account: string, other: string): Instruction => ({
  programAddress: address(program),
  accounts: [
    { address: address(account), role: AccountRole.WRITABLE },
    { address: address(other), role: AccountRole.READONLY },
    { address: address(owner), role: AccountRole.READONLY_SIGNER }
  ],
  data: Uint8Array.from(data)
})

/** An unsigned v0 wire transaction paid by `payer` (what the service would build). */
const solanaTx = (payer: string, instructions: ReadonlyArray<Instruction>): Uint8Array =>
  new Uint8Array(
    getTransactionEncoder().encode(
      compileTransaction(
        appendTransactionMessageInstructions(
          instructions,
          setTransactionMessageLifetimeUsingBlockhash(
            { blockhash: BLOCKHASH, lastValidBlockHeight: 10n },
            setTransactionMessageFeePayer(address(payer), createTransactionMessage({ version: 0 }))
          )
        )
      )
    )
  )

const p256Signer = async () => {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey))
  return {
    publicKeyB64: b64(raw),
    authorize: async (bytes: Uint8Array) =>
      b64(new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, new Uint8Array(bytes))))
  }
}

const walletSuite = (databaseUrl: () => Promise<string | undefined>) => {
  beforeAll(async () => {
    h = await startWalletHarness({ databaseUrl: await databaseUrl() })
  }, 120_000)

  afterAll(async () => {
    await h?.close()
  }, 120_000)

describe("link-existing", () => {
  it("is refused on Free (TIER_REQUIRED) and records nothing", async () => {
    const key = await solanaKey()
    for (const as of ["sess-f", "key-f"]) {
      const r = await h.call("POST", "/api/v1/agent/wallets", as, { chain: "solana", address: key.address, signature: "x" })
      expect(r.status).toBe(403)
      expect(r.body.error.code).toBe("TIER_REQUIRED")
    }
    expect(await walletRows("acct-f")).toEqual([])
  })

  it("names the first bad field", async () => {
    const key = await solanaKey()
    const good = await solanaLinkBody("key-a1", key)
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, chain: "bitcoin" }, "chain"],
      [{ ...good, address: "not-an-address" }, "address"],
      [{ ...good, chain: "evm" }, "address"],
      [{ ...good, signature: "" }, "signature"],
      [{ ...good, label: "   " }, "label"],
      [{ ...good, label: "x".repeat(65) }, "label"]
    ]
    for (const [body, field] of cases) {
      const r = await h.call("POST", "/api/v1/agent/wallets", "key-a1", body)
      expect(r.status, field).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", field })
    }
    const notObject = await h.call("POST", "/api/v1/agent/wallets", "key-a1", [1])
    expect(notObject.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "body" })
    expect(await walletRows("acct-a")).toEqual([])
  })

  it("refuses a signature that does not prove control of the address, returning the challenge", async () => {
    const key = await solanaKey()
    const impostor = await solanaKey()
    const body = await solanaLinkBody("key-a1", impostor)
    const r = await h.call("POST", "/api/v1/agent/wallets", "key-a1", { ...body, address: key.address })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "signature" })
    expect(r.body.error.challenge).toContain(key.address)
    expect(await walletRows("acct-a")).toEqual([])
  })

  it("links a Solana and an EVM wallet with every field of the row", async () => {
    const key = await solanaKey()
    const r = await h.call("POST", "/api/v1/agent/wallets", "key-a1", await solanaLinkBody("key-a1", key, "  trading  "))
    expect(r.status).toBe(200)
    expect(Object.keys(r.body.wallet).sort()).toEqual(["address", "allowLaunch", "chain", "createdAt", "id", "label", "walletKind"])
    expect(r.body.wallet).toMatchObject({ chain: "solana", address: key.address, walletKind: "linked", label: "trading", allowLaunch: false })

    const evm = privateKeyToAccount(generatePrivateKey())
    const lower = evm.address.toLowerCase()
    const message = await challenge("sess-a", "evm", lower)
    const e = await h.call("POST", "/api/v1/agent/wallets", "sess-a", { chain: "evm", address: lower, signature: await evm.signMessage({ message }) })
    expect(e.status).toBe(200)
    expect(e.body.wallet).toMatchObject({ chain: "evm", address: evm.address, walletKind: "linked" }) // stored EIP-55

    const list = await h.call("GET", "/api/v1/agent/wallets", "key-a-read")
    expect(list.status).toBe(200)
    expect(list.body.wallets.map((w: { address: string }) => w.address)).toEqual([key.address, evm.address])
    expect(list.body.embeddedWallets).toEqual([])
  })

  it("refuses an address already linked, on this account or another (WALLET_ALREADY_LINKED)", async () => {
    const key = await solanaKey()
    expect((await h.call("POST", "/api/v1/agent/wallets", "key-a1", await solanaLinkBody("key-a1", key))).status).toBe(200)
    const before = await walletRows("acct-a")
    const again = await h.call("POST", "/api/v1/agent/wallets", "key-a2", await solanaLinkBody("key-a2", key))
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe("WALLET_ALREADY_LINKED")
    const other = await h.call("POST", "/api/v1/agent/wallets", "key-b1", await solanaLinkBody("key-b1", key))
    expect(other.status).toBe(409)
    expect(other.body.error.code).toBe("WALLET_ALREADY_LINKED")
    expect(await walletRows("acct-a")).toEqual(before)
    expect(await walletRows("acct-b")).toEqual([])
    // EVM addresses compare case-insensitively.
    const evm = privateKeyToAccount(generatePrivateKey())
    const msg = await challenge("sess-a", "evm", evm.address)
    expect((await h.call("POST", "/api/v1/agent/wallets", "sess-a", { chain: "evm", address: evm.address, signature: await evm.signMessage({ message: msg }) })).status).toBe(200)
    const upper = "0x" + evm.address.slice(2).toUpperCase()
    const msgB = await challenge("sess-b", "evm", upper)
    const dup = await h.call("POST", "/api/v1/agent/wallets", "sess-b", { chain: "evm", address: upper, signature: await evm.signMessage({ message: msgB }) })
    expect(dup.body.error?.code).toBe("WALLET_ALREADY_LINKED")
  })

  it("stops at the plan's linked-wallet count (Pro: 10) with WALLET_LIMIT_REACHED, and a revoke frees a slot", async () => {
    const ids: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await h.call("POST", "/api/v1/agent/wallets", "sess-l", await solanaLinkBody("sess-l", await solanaKey()))
      expect(r.status).toBe(200)
      ids.push(r.body.wallet.id)
    }
    const eleventh = await h.call("POST", "/api/v1/agent/wallets", "sess-l", await solanaLinkBody("sess-l", await solanaKey()))
    expect(eleventh.status).toBe(400)
    expect(eleventh.body.error).toMatchObject({ code: "WALLET_LIMIT_REACHED", limit: 10 })
    expect(await activeCount("acct-l")).toBe(10)
    expect((await h.call("DELETE", `/api/v1/agent/wallets/${ids[0]}`, "sess-l")).status).toBe(200)
    expect((await h.call("POST", "/api/v1/agent/wallets", "sess-l", await solanaLinkBody("sess-l", await solanaKey()))).status).toBe(200)
    expect(await activeCount("acct-l")).toBe(10)
  })

  it("holds the limit under concurrent links", async () => {
    const bodies = await Promise.all(Array.from({ length: 5 }, async () => solanaLinkBody("sess-l", await solanaKey())))
    const results = await Promise.all(bodies.map((b) => h.call("POST", "/api/v1/agent/wallets", "sess-l", b)))
    expect(results.every((r) => r.status === 400 && r.body.error.code === "WALLET_LIMIT_REACHED")).toBe(true)
    expect(await activeCount("acct-l")).toBe(10)
  })

  it("takes an agent key or a session, never a device token or nothing", async () => {
    expect((await h.call("GET", "/api/v1/agent/wallets", "dev-a")).body.error.code).toBe("UNAUTHORIZED")
    const none = await h.call("GET", "/api/v1/agent/wallets", undefined)
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe("UNAUTHORIZED")
  })
})

describe("embedded wallets and delegation", () => {
  it("one embedded wallet per account and chain; delegation is read on every signature, never cached", async () => {
    const acct = "acct-m"
    const failed = async (e: Effect.Effect<unknown, unknown>) => {
      const r = await Effect.runPromise(Effect.either(e))
      return r._tag === "Left" ? (r.left as { reason?: string }).reason : "ok"
    }
    expect(await failed(h.provider.resolveDelegation(acct, "solana"))).toBe("not_embedded")
    const sol = await Effect.runPromise(h.provider.ensureEmbeddedWallet(acct, "solana"))
    const evm = await Effect.runPromise(h.provider.ensureEmbeddedWallet(acct, "evm"))
    expect(await Effect.runPromise(h.provider.ensureEmbeddedWallet(acct, "solana"))).toEqual(sol)
    expect(sol.delegation).toBe("none")
    expect(evm.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    const tx = solanaTx(sol.address, [transferIx(sol.address, "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", 1n)])
    expect(await failed(h.provider.signWithEmbedded(acct, "solana", tx))).toBe("not_delegated")
    await Effect.runPromise(h.provider.setDelegation(acct, "solana", "active"))
    const signed = await Effect.runPromise(h.provider.signWithEmbedded(acct, "solana", tx))
    expect(signed.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/)
    await Effect.runPromise(h.provider.setDelegation(acct, "solana", "revoked"))
    expect(await failed(h.provider.signWithEmbedded(acct, "solana", tx))).toBe("delegation_revoked")
    expect(await failed(h.provider.signWithEmbedded(acct, "evm", new Uint8Array(4)))).toBe("not_delegated") // per chain
    await Effect.runPromise(h.provider.setDelegation(acct, "solana", "active"))
    expect((await Effect.runPromise(h.provider.signWithEmbedded(acct, "solana", tx))).signature).toBe(signed.signature) // ed25519 is deterministic
    // The embedded wallet's backstop applies too.
    const over = solanaTx(sol.address, [transferIx(sol.address, "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", 50_000_000_001n)])
    expect(await failed(h.provider.signWithEmbedded(acct, "solana", over))).toBe("policy_denied")
    // The wallet's row and its policy are read in one statement: a wallet with no policy signs nothing
    // (default-deny); its policy back, it signs again.
    const [stored0] = await h.query<{ policy_id: string }>((sql) => sql`SELECT policy_id FROM wp_wallets WHERE account_id = ${acct} AND chain = 'solana'`)
    const policyId = stored0!.policy_id
    await h.query((sql) => sql`UPDATE wp_wallets SET policy_id = NULL WHERE account_id = ${acct} AND chain = 'solana'`)
    expect(await failed(h.provider.signWithEmbedded(acct, "solana", tx))).toBe("policy_denied")
    await h.query((sql) => sql`UPDATE wp_wallets SET policy_id = ${policyId} WHERE account_id = ${acct} AND chain = 'solana'`)
    expect((await Effect.runPromise(h.provider.signWithEmbedded(acct, "solana", tx))).signature).toBe(signed.signature)
    const list = await h.call("GET", "/api/v1/agent/wallets", "sess-m")
    expect(list.body.embeddedWallets).toEqual([
      { chain: "evm", address: evm.address, delegation: "none" },
      { chain: "solana", address: sol.address, delegation: "active" }
    ])
    const stored = await h.query<{ secret_sealed: string }>((sql) => sql`SELECT secret_sealed FROM wp_wallets WHERE account_id = ${acct}`)
    expect(stored).toHaveLength(2)
    expect(stored.every((r) => r.secret_sealed.startsWith("v1."))).toBe(true)
  })
})

describe("revoke", () => {
  it("answers 404 for an unknown or another account's id and touches nothing", async () => {
    const key = await solanaKey()
    const b = await h.call("POST", "/api/v1/agent/wallets", "key-b1", await solanaLinkBody("key-b1", key))
    expect(b.status).toBe(200)
    for (const id of ["wal_unknown", b.body.wallet.id]) {
      const r = await h.call("DELETE", `/api/v1/agent/wallets/${id}`, "key-a1")
      expect(r.status).toBe(404)
      expect(r.body.error.code).toBe("VALIDATION_FAILED")
    }
    expect((await walletRows("acct-b")).every((r) => r.revoked_at === null)).toBe(true)
  })

  it("tombstones an attribution-only link, idempotently, without policyNeutralized; the address can be linked again", async () => {
    const key = await solanaKey()
    const linked = await h.call("POST", "/api/v1/agent/wallets", "key-a1", await solanaLinkBody("key-a1", key))
    const id = linked.body.wallet.id
    const first = await h.call("DELETE", `/api/v1/agent/wallets/${id}`, "key-a2")
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ success: true, id, revokedAt: expect.any(String) })
    const second = await h.call("DELETE", `/api/v1/agent/wallets/${id}`, "sess-a")
    expect(second.body).toEqual(first.body)
    const rows = await walletRows("acct-a")
    expect(rows.find((r) => r.id === id)?.revoked_at).not.toBeNull()
    const list = await h.call("GET", "/api/v1/agent/wallets", "sess-a")
    expect(list.body.wallets.some((w: { id: string }) => w.id === id)).toBe(false)
    const relink = await h.call("POST", "/api/v1/agent/wallets", "key-a1", await solanaLinkBody("key-a1", key))
    expect(relink.status).toBe(200)
    expect(relink.body.wallet.id).not.toBe(id)
  })
})

interface Imported {
  readonly walletId: string
  readonly address: string
  readonly authorize: (bytes: Uint8Array) => Promise<string>
}

const importSolana = async (as: string, key: SolKey, label?: string): Promise<{ status: number; body: any; signer: Awaited<ReturnType<typeof p256Signer>> }> => {
  const init = await h.call("POST", "/api/v1/agent/wallets/import/init", as, { chain: "solana", address: key.address })
  expect(init.status).toBe(200)
  const sealed = sealForImport(new Uint8Array(Buffer.from(init.body.encryptionPublicKey, "base64")), await exportSecretText("solana", key.seed))
  const signer = await p256Signer()
  const r = await h.call("POST", "/api/v1/agent/wallets/import/submit", as, {
    ciphertext: b64(sealed.ciphertext),
    encapsulatedKey: b64(sealed.enc),
    signerPublicKey: signer.publicKeyB64,
    ...(label !== undefined ? { label } : {})
  })
  return { ...r, signer }
}

describe("HPKE import", () => {
  it("is gated: Free is TIER_REQUIRED, a key without launch:write SCOPE_MISSING, a device token UNAUTHORIZED", async () => {
    const key = await solanaKey()
    const free = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-f", { chain: "solana", address: key.address })
    expect(free.status).toBe(403)
    expect(free.body.error.code).toBe("TIER_REQUIRED")
    const read = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-a-read", { chain: "solana", address: key.address })
    expect(read.status).toBe(403)
    expect(read.body.error).toMatchObject({ code: "SCOPE_MISSING", scope: "launch:write" })
    expect((await h.call("POST", "/api/v1/agent/wallets/import/init", "dev-a", { chain: "solana", address: key.address })).status).toBe(401)
    expect(await h.query((sql) => sql`SELECT id FROM wallet_imports`)).toEqual([])
  })

  it("init publishes the suite and an encryption key; init for a linked address is WALLET_ALREADY_LINKED", async () => {
    const key = await solanaKey()
    const init = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-a1", { chain: "solana", address: key.address })
    expect(init.body).toMatchObject({
      success: true,
      chain: "solana",
      address: key.address,
      hpke: { mode: "base", kemId: 16, kdfId: 1, aeadId: 3 },
      expiresAt: h.clock.ms + 10 * 60_000
    })
    expect(Buffer.from(init.body.encryptionPublicKey, "base64")).toHaveLength(65)
    await h.call("POST", "/api/v1/agent/wallets", "key-a1", await solanaLinkBody("key-a1", key))
    const again = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-a1", { chain: "solana", address: key.address })
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe("WALLET_ALREADY_LINKED")
  })

  it("imports a Solana key sealed by the independent sealer; the key is stored only sealed", async () => {
    const key = await solanaKey()
    const r = await importSolana("key-a1", key, "imported-sol")
    expect(r.status).toBe(200)
    expect(r.body.wallet).toMatchObject({ chain: "solana", address: key.address, walletKind: "imported", label: "imported-sol", allowLaunch: false })
    const [row] = await h.query<{ provider_wallet_id: string; policy_id: string }>(
      (sql) => sql`SELECT provider_wallet_id, policy_id FROM wallets WHERE id = ${r.body.wallet.id}`
    )
    const [wp] = await h.query<{ secret_sealed: string; quorum: string; state: string; rules: string }>(
      (sql) => sql`SELECT w.secret_sealed, q.public_keys::text AS quorum, p.state, p.rules::text AS rules
        FROM wp_wallets w JOIN wp_signer_quorums q ON q.id = w.quorum_id JOIN wp_policies p ON p.id = w.policy_id
        WHERE w.id = ${row?.provider_wallet_id ?? ""}`
    )
    expect(wp?.state).toBe("active")
    expect(JSON.parse(wp?.rules ?? "{}")).toMatchObject({ ceilingLamports: "50000000000", ceilingWei: "10000000000000000000" })
    expect(JSON.parse(wp?.quorum ?? "[]")).toHaveLength(1)
    const sealedText = wp?.secret_sealed ?? ""
    for (const form of [Buffer.from(key.seed).toString("hex"), Buffer.from(key.seed).toString("base64"), getBase58Decoder().decode(key.seed)]) {
      expect(sealedText.includes(form)).toBe(false)
    }
    // Single use: the same submission again finds no open import.
    const consumed = await h.query<{ consumed_at: Date | null }>((sql) => sql`SELECT consumed_at FROM wallet_imports WHERE address = ${key.address}`)
    expect(consumed.every((c) => c.consumed_at !== null)).toBe(true)
  })

  it("refuses a replayed submission, a seal to another key, a key for another address; nothing is linked", async () => {
    const key = await solanaKey()
    const init = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-a1", { chain: "solana", address: key.address })
    const pub = new Uint8Array(Buffer.from(init.body.encryptionPublicKey, "base64"))
    const signer = await p256Signer()
    // Sealed to a key nobody holds.
    const stranger = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair
    const strangerPub = new Uint8Array(await crypto.subtle.exportKey("raw", stranger.publicKey))
    const wrongKey = sealForImport(strangerPub, await exportSecretText("solana", key.seed))
    const r1 = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", {
      ciphertext: b64(wrongKey.ciphertext),
      encapsulatedKey: b64(wrongKey.enc),
      signerPublicKey: signer.publicKeyB64
    })
    expect(r1.status).toBe(400)
    expect(r1.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "ciphertext", reason: "not_opened" })
    // The right recipient, but the key of another wallet.
    const other = await solanaKey()
    const mismatch = sealForImport(pub, await exportSecretText("solana", other.seed))
    const r2 = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", {
      ciphertext: b64(mismatch.ciphertext),
      encapsulatedKey: b64(mismatch.enc),
      signerPublicKey: signer.publicKeyB64
    })
    expect(r2.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "ciphertext", reason: "address_mismatch" })
    // Not a key at all.
    const junk = sealForImport(pub, "hello")
    const r3 = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", {
      ciphertext: b64(junk.ciphertext),
      encapsulatedKey: b64(junk.enc),
      signerPublicKey: signer.publicKeyB64
    })
    expect(r3.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "ciphertext", reason: "not_a_key" })
    const open = await h.query<{ consumed_at: Date | null }>((sql) => sql`SELECT consumed_at FROM wallet_imports WHERE id = ${init.body.importId}`)
    expect(open[0]?.consumed_at).toBeNull()
    expect((await walletRows("acct-a")).some((r) => r.address === key.address || r.address === other.address)).toBe(false)
    // The right one still works once; then the replay is refused.
    const good = sealForImport(pub, await exportSecretText("solana", key.seed))
    const body = { ciphertext: b64(good.ciphertext), encapsulatedKey: b64(good.enc), signerPublicKey: signer.publicKeyB64 }
    expect((await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", body)).status).toBe(200)
    const replay = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", body)
    expect(replay.status).toBe(400)
    expect(replay.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "ciphertext" })
    expect((await walletRows("acct-a")).filter((r) => r.address === key.address)).toHaveLength(1)
  })

  it("refuses an import whose init expired (10 minutes)", async () => {
    const key = await solanaKey()
    const init = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-a1", { chain: "solana", address: key.address })
    const sealed = sealForImport(new Uint8Array(Buffer.from(init.body.encryptionPublicKey, "base64")), await exportSecretText("solana", key.seed))
    h.clock.ms += 10 * 60_000
    try {
      const r = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", {
        ciphertext: b64(sealed.ciphertext),
        encapsulatedKey: b64(sealed.enc),
        signerPublicKey: (await p256Signer()).publicKeyB64
      })
      expect(r.status).toBe(400)
      expect(r.body.error.field).toBe("ciphertext")
    } finally {
      h.clock.ms -= 10 * 60_000
    }
    expect((await walletRows("acct-a")).some((r) => r.address === key.address)).toBe(false)
  })

  it("names malformed submit fields", async () => {
    const signer = await p256Signer()
    const good = { ciphertext: b64(new Uint8Array(40)), encapsulatedKey: b64(Uint8Array.of(4, ...new Uint8Array(64))), signerPublicKey: signer.publicKeyB64 }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, ciphertext: "***" }, "ciphertext"],
      [{ ...good, ciphertext: b64(new Uint8Array(600)) }, "ciphertext"],
      [{ ...good, encapsulatedKey: b64(new Uint8Array(33)) }, "encapsulatedKey"],
      [{ ...good, encapsulatedKey: b64(Uint8Array.of(5, ...new Uint8Array(64))) }, "encapsulatedKey"],
      [{ ...good, signerPublicKey: b64(Uint8Array.of(4, ...new Uint8Array(64))) }, "signerPublicKey"],
      [{ ...good, label: "" }, "label"]
    ]
    for (const [body, field] of cases) {
      const r = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", body)
      expect(r.status, field).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", field })
    }
  })

  it("imports an EVM key (hex)", async () => {
    const pk = generatePrivateKey()
    const account = privateKeyToAccount(pk)
    const init = await h.call("POST", "/api/v1/agent/wallets/import/init", "sess-a", { chain: "evm", address: account.address })
    const sealed = sealForImport(new Uint8Array(Buffer.from(init.body.encryptionPublicKey, "base64")), pk)
    const r = await h.call("POST", "/api/v1/agent/wallets/import/submit", "sess-a", {
      ciphertext: b64(sealed.ciphertext),
      encapsulatedKey: b64(sealed.enc),
      signerPublicKey: (await p256Signer()).publicKeyB64
    })
    expect(r.status).toBe(200)
    expect(r.body.wallet).toMatchObject({ chain: "evm", address: account.address, walletKind: "imported" })
  })

  it("when linking fails after the import, the policy is cleared to default-deny and no row is linked", async () => {
    const key = await solanaKey()
    const init = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-a1", { chain: "solana", address: key.address })
    // Another account links the address between init and submit.
    expect((await h.call("POST", "/api/v1/agent/wallets", "key-b1", await solanaLinkBody("key-b1", key))).status).toBe(200)
    const sealed = sealForImport(new Uint8Array(Buffer.from(init.body.encryptionPublicKey, "base64")), await exportSecretText("solana", key.seed))
    const r = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", {
      ciphertext: b64(sealed.ciphertext),
      encapsulatedKey: b64(sealed.enc),
      signerPublicKey: (await p256Signer()).publicKeyB64
    })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe("WALLET_ALREADY_LINKED")
    expect((await walletRows("acct-a")).some((w) => w.address === key.address)).toBe(false)
    const provider = await h.query<{ state: string }>(
      (sql) => sql`SELECT p.state FROM wp_wallets w JOIN wp_policies p ON p.id = w.policy_id WHERE w.account_id = 'acct-a' AND w.address = ${key.address}`
    )
    expect(provider).toEqual([{ state: "default_deny" }])
  })
})

describe("sign relay", () => {
  let wallet: Imported
  const dest = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"

  beforeAll(async () => {
    const key = await solanaKey()
    const r = await importSolana("key-a1", key)
    expect(r.status).toBe(200)
    wallet = { walletId: r.body.wallet.id, address: key.address, authorize: r.signer.authorize }
  })

  const build = async (instructions: ReadonlyArray<Instruction>, more: { keyId?: string; requiredScopes?: string[] } = {}) => {
    const tx = solanaTx(wallet.address, instructions)
    const claim = await Effect.runPromise(
      h.service.recordBuilt({
        accountId: "acct-a",
        walletId: wallet.walletId,
        keyId: more.keyId ?? "kid-a1",
        chain: "solana",
        transaction: tx,
        purpose: "test",
        ...(more.requiredScopes !== undefined ? { requiredScopes: more.requiredScopes } : {})
      })
    )
    return { tx, claimId: claim.claimId }
  }

  const sign = async (as: string, claimId: string, tx: Uint8Array, authorize = true) =>
    h.call("POST", `/api/v1/agent/wallets/${wallet.walletId}/sign`, as, {
      claimId,
      transaction: b64(tx),
      ...(authorize ? { authorizationSignature: await wallet.authorize(tx) } : {})
    })

  const claimState = async (claimId: string) =>
    (await h.query<{ state: string }>((sql) => sql`SELECT state FROM sign_claims WHERE id = ${claimId}`))[0]?.state

  it("signs a recorded build once; the signature verifies over the message", async () => {
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 1_000n)])
    const r = await sign("key-a1", claimId, tx)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ success: true, walletId: wallet.walletId, chain: "solana", claimId })
    const signed = getTransactionDecoder().decode(getBase64Encoder().encode(r.body.signedTransaction))
    const sig = signed.signatures[wallet.address as keyof typeof signed.signatures]
    expect(sig && getBase58Decoder().decode(sig)).toBe(r.body.signature)
    const pub = await crypto.subtle.importKey("raw", getBase58Encoder().encode(wallet.address) as Uint8Array<ArrayBuffer>, { name: "Ed25519" }, false, ["verify"])
    expect(await crypto.subtle.verify({ name: "Ed25519" }, pub, sig as Uint8Array<ArrayBuffer>, signed.messageBytes as unknown as Uint8Array<ArrayBuffer>)).toBe(true)
    expect(await claimState(claimId)).toBe("signed")
    const again = await sign("key-a1", claimId, tx)
    expect(again.status).toBe(403)
    expect(again.body.error).toMatchObject({ code: "UNRECOGNIZED_TRANSACTION", reason: "no_matching_claim" })
  })

  it("refuses what it did not build: unknown claim, altered bytes, another key, no signer authorization; the claim stays open", async () => {
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 5_000n)])
    const altered = solanaTx(wallet.address, [transferIx(wallet.address, dest, 5_001n)])
    const cases: Array<[string, string, Uint8Array, boolean, string]> = [
      ["key-a1", "clm_unknown", tx, true, "no_matching_claim"],
      ["key-a1", claimId, altered, true, "no_matching_claim"],
      ["key-a2", claimId, tx, true, "no_matching_claim"],
      ["key-a1", claimId, tx, false, "signer_authorization_failed"]
    ]
    for (const [as, id, bytes, authorize, reason] of cases) {
      const r = await sign(as, id, bytes, authorize)
      expect(r.status, reason).toBe(403)
      expect(r.body.error).toMatchObject({ code: "UNRECOGNIZED_TRANSACTION", reason })
    }
    // An authorization over other bytes does not count either.
    const forged = await h.call("POST", `/api/v1/agent/wallets/${wallet.walletId}/sign`, "key-a1", {
      claimId,
      transaction: b64(tx),
      authorizationSignature: await wallet.authorize(altered)
    })
    expect(forged.body.error).toMatchObject({ code: "UNRECOGNIZED_TRANSACTION", reason: "signer_authorization_failed" })
    expect(await claimState(claimId)).toBe("open")
    expect((await sign("key-a1", claimId, tx)).status).toBe(200)
  })

  it("takes an agent key with swap:write only", async () => {
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 1n)])
    const read = await sign("key-a-read", claimId, tx)
    expect(read.status).toBe(403)
    expect(read.body.error).toMatchObject({ code: "SCOPE_MISSING", scope: "swap:write" })
    expect((await sign("sess-a", claimId, tx)).body.error.code).toBe("UNAUTHORIZED")
    expect(await claimState(claimId)).toBe("open")
  })

  it("refuses a build whose required scope the key no longer holds (SCOPE_MISSING)", async () => {
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 1n)], { requiredScopes: ["transfer:bound"] })
    const r = await sign("key-a1", claimId, tx)
    expect(r.status).toBe(403)
    expect(r.body.error).toMatchObject({ code: "SCOPE_MISSING", scope: "transfer:bound" })
    expect(await claimState(claimId)).toBe("open")
  })

  it("refuses an expired claim (30 minutes)", async () => {
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 1n)])
    h.clock.ms += CLAIM_LIFETIME_MS
    try {
      const r = await sign("key-a1", claimId, tx)
      expect(r.body.error).toMatchObject({ code: "UNRECOGNIZED_TRANSACTION", reason: "no_matching_claim" })
    } finally {
      h.clock.ms -= CLAIM_LIFETIME_MS
    }
  })

  it("two racing signs of one claim: exactly one gets the signature", async () => {
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 7n)])
    const results = await Promise.all([sign("key-a1", claimId, tx), sign("key-a1", claimId, tx), sign("key-a1", claimId, tx)])
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    expect(results.filter((r) => r.status === 403 && r.body.error.code === "UNRECOGNIZED_TRANSACTION")).toHaveLength(2)
  })

  it("the backstop policy denies approve, approve-checked, set-authority and transfers over 50 SOL; nothing is consumed", async () => {
    const tokenAccount = (await solanaKey()).address
    const cases: Array<[string, ReadonlyArray<Instruction>, string]> = [
      ["approve", [tokenIx(TOKEN, [4, ...u64(1n)], wallet.address, tokenAccount, dest)], "denied_instruction"],
      ["approve_checked", [tokenIx(TOKEN_2022, [13, ...u64(1n), 6], wallet.address, tokenAccount, dest)], "denied_instruction"],
      ["set_authority", [tokenIx(TOKEN, [6, 2, 1, ...new Uint8Array(32)], wallet.address, tokenAccount, dest)], "denied_instruction"],
      ["ceiling", [transferIx(wallet.address, dest, 50_000_000_000n), transferIx(wallet.address, dest, 1n)], "ceiling"]
    ]
    for (const [name, ixs, reason] of cases) {
      const { tx, claimId } = await build(ixs)
      const r = await sign("key-a1", claimId, tx)
      expect(r.status, name).toBe(403)
      expect(r.body.error).toMatchObject({ code: "SPEND_POLICY_DENIED", reason })
      if (reason === "denied_instruction") expect(r.body.error.instruction).toBe(name)
      expect(await claimState(claimId)).toBe("open")
    }
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 50_000_000_000n)])
    expect((await sign("key-a1", claimId, tx)).status).toBe(200)
  })

  it("signs an EVM build; the signer recovers to the wallet; over 10 ETH is denied", async () => {
    const pk = generatePrivateKey()
    const account = privateKeyToAccount(pk)
    const init = await h.call("POST", "/api/v1/agent/wallets/import/init", "key-a1", { chain: "evm", address: account.address })
    const sealed = sealForImport(new Uint8Array(Buffer.from(init.body.encryptionPublicKey, "base64")), pk)
    const signer = await p256Signer()
    const imp = await h.call("POST", "/api/v1/agent/wallets/import/submit", "key-a1", {
      ciphertext: b64(sealed.ciphertext),
      encapsulatedKey: b64(sealed.enc),
      signerPublicKey: signer.publicKeyB64
    })
    const walletId = imp.body.wallet.id
    const evmTx = (value: bigint): Hex =>
      serializeTransaction({ chainId: 31337, type: "eip1559", nonce: 0, to: "0x000000000000000000000000000000000000dEaD", value, gas: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n })
    for (const [value, expected] of [[parseEther("1"), 200], [parseEther("10") + 1n, 403]] as const) {
      const hex = evmTx(value)
      const bytes = new Uint8Array(Buffer.from(hex.slice(2), "hex"))
      const claim = await Effect.runPromise(
        h.service.recordBuilt({ accountId: "acct-a", walletId, keyId: "kid-a1", chain: "evm", transaction: bytes, purpose: "test" })
      )
      const r = await h.call("POST", `/api/v1/agent/wallets/${walletId}/sign`, "key-a1", {
        claimId: claim.claimId,
        transaction: hex,
        authorizationSignature: await signer.authorize(bytes)
      })
      expect(r.status).toBe(expected)
      if (expected === 200) {
        expect(await recoverTransactionAddress({ serializedTransaction: r.body.signedTransaction })).toBe(account.address)
      } else {
        expect(r.body.error).toMatchObject({ code: "SPEND_POLICY_DENIED", reason: "ceiling" })
      }
    }
  })

  it("revoking the imported wallet neutralizes its policy (policyNeutralized: true) and the relay stops", async () => {
    const { tx, claimId } = await build([transferIx(wallet.address, dest, 1n)])
    const r = await h.call("DELETE", `/api/v1/agent/wallets/${wallet.walletId}`, "key-a1")
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ success: true, id: wallet.walletId, policyNeutralized: true })
    expect((await h.call("DELETE", `/api/v1/agent/wallets/${wallet.walletId}`, "key-a1")).body.policyNeutralized).toBe(true)
    const policy = await h.query<{ state: string }>(
      (sql) => sql`SELECT p.state FROM wallets w JOIN wp_policies p ON p.id = w.policy_id WHERE w.id = ${wallet.walletId}`
    )
    expect(policy).toEqual([{ state: "cleared" }])
    const s = await sign("key-a1", claimId, tx)
    expect(s.status).toBe(404)
    expect(await claimState(claimId)).toBe("open")
  })
})
}

describe("wallets on embedded PGlite", () => walletSuite(async () => undefined))

const serverUrl = postgresUrl()
describe.skipIf(serverUrl === undefined)(
  serverUrl === undefined ? `wallets on a PostgreSQL server (${noPostgresReason})` : "wallets on a PostgreSQL server",
  () => walletSuite(() => freshPostgresDatabase(serverUrl as string))
)
