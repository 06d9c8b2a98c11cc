/**
 * The wallet routes' request decoders: each accepted shape beside the refusals, each refusal
 * naming its field, and every length bound at the bound and one past it. Over HTTP:
 * `test/integration/wallets.test.ts` and `wallets.rebind.test.ts`.
 */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import type { ApiError } from "../../src/domain/ApiError.js"
import { isApiError } from "../QueryParams.js"
import type { Decoded } from "./ServiceCall.js"
import {
  decodeChallengeQuery,
  decodeCreateTeeBody,
  decodeImportInitBody,
  decodeImportSubmitBody,
  decodeLinkBody,
  decodeRebindBody,
  decodeRebindsQuery,
  decodeSignBody,
  decodeUpdateBody,
  ID_MAX_CHARS,
  LABEL_MAX_CHARS,
  SELECTOR_MAX_CHARS
} from "./WalletDecoders.js"

const SOL = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
const EVM_LOWER = "0x52908400098527886e0f7030069857d2e4169ee7"
const EVM_CHECKSUMMED = "0x52908400098527886E0F7030069857D2E4169EE7"

/** A decoder's result, synchronous (`Decoded`) or an effect (the import body's signer check). */
type Result<A> = Decoded<A> | Effect.Effect<A, ApiError>
const run = <A>(e: Result<A>) => Effect.runPromise(Effect.either(Effect.isEffect(e) ? e : isApiError(e) ? Effect.fail(e) : Effect.succeed(e)))
const ok = async <A>(e: Result<A>): Promise<A> => {
  const r = await run(e)
  if (Either.isLeft(r)) throw new Error(`refused: ${r.left.field} ${r.left.message}`)
  return r.right
}
/** The field a refusal names (every decoder refusal is VALIDATION_FAILED). */
const refused = async (e: Result<unknown>): Promise<string | undefined> => {
  const r = await run(e)
  if (Either.isRight(r)) throw new Error(`accepted: ${JSON.stringify(r.right)}`)
  expect(r.left.code).toBe("VALIDATION_FAILED")
  return r.left.field
}
const b64 = (n: number, first = 1) => Buffer.from(Uint8Array.from({ length: n }, (_, i) => (i === 0 ? first : i % 251))).toString("base64")

describe("body shape", () => {
  it("every body decoder refuses a non-object body naming `body`", async () => {
    for (const decode of [decodeLinkBody, decodeUpdateBody, decodeImportInitBody, decodeImportSubmitBody, decodeSignBody, decodeCreateTeeBody, decodeRebindBody]) {
      for (const body of [undefined, null, "x", [1], 3]) expect(await refused(decode(body))).toBe("body")
    }
  })
})

describe("chain and address", () => {
  it("reads solana, evm and hood (the EVM chain) and canonicalizes EVM addresses", async () => {
    expect(await ok(decodeImportInitBody({ chain: "solana", address: SOL }))).toEqual({ chain: "solana", address: SOL })
    expect(await ok(decodeImportInitBody({ chain: "hood", address: EVM_LOWER }))).toEqual({ chain: "evm", address: EVM_CHECKSUMMED })
    expect(await ok(decodeChallengeQuery(`chain=evm&address=${EVM_LOWER}`))).toEqual({ chain: "evm", address: EVM_CHECKSUMMED })
  })

  it("refuses an unknown chain, an address of the other chain and a bad EIP-55 checksum", async () => {
    expect(await refused(decodeImportInitBody({ chain: "bitcoin", address: SOL }))).toBe("chain")
    expect(await refused(decodeImportInitBody({ chain: "evm", address: SOL }))).toBe("address")
    expect(await refused(decodeImportInitBody({ chain: "solana", address: EVM_LOWER }))).toBe("address")
    expect(await refused(decodeImportInitBody({ chain: "evm", address: "0x52908400098527886E0F7030069857D2E4169Ee7" }))).toBe("address")
    expect(await refused(decodeChallengeQuery(`chain=solana`))).toBe("address")
    expect(await refused(decodeChallengeQuery(``))).toBe("chain")
  })
})

describe("link", () => {
  it("takes a signature of 1 to 256 characters and a label trimmed to 1 to 64 characters; a null label is absent", async () => {
    expect(await ok(decodeLinkBody({ chain: "solana", address: SOL, signature: "s".repeat(256), label: `  ${"l".repeat(LABEL_MAX_CHARS)}  ` }))).toEqual({
      chain: "solana",
      address: SOL,
      signature: "s".repeat(256),
      label: "l".repeat(LABEL_MAX_CHARS)
    })
    expect(await ok(decodeLinkBody({ chain: "solana", address: SOL, signature: "s", label: null }))).not.toHaveProperty("label")
  })

  it("refuses the first bad field", async () => {
    expect(await refused(decodeLinkBody({ chain: "solana", address: SOL, signature: "s".repeat(257) }))).toBe("signature")
    expect(await refused(decodeLinkBody({ chain: "solana", address: SOL, signature: "" }))).toBe("signature")
    expect(await refused(decodeLinkBody({ chain: "solana", address: SOL, signature: "s", label: "l".repeat(LABEL_MAX_CHARS + 1) }))).toBe("label")
    expect(await refused(decodeLinkBody({ chain: "solana", address: SOL, signature: "s", label: "   " }))).toBe("label")
    expect(await refused(decodeLinkBody({ chain: "solana", address: "nope", signature: 5, label: 5 }))).toBe("address")
  })
})

describe("update", () => {
  it("takes allowLaunch, label or both; at least one", async () => {
    expect(await ok(decodeUpdateBody({ allowLaunch: false }))).toEqual({ allowLaunch: false })
    expect(await ok(decodeUpdateBody({ label: " x " }))).toEqual({ label: "x" })
    expect(await ok(decodeUpdateBody({ allowLaunch: true, label: "x" }))).toEqual({ allowLaunch: true, label: "x" })
    expect(await refused(decodeUpdateBody({}))).toBe("body")
    expect(await refused(decodeUpdateBody({ allowLaunch: null, label: null }))).toBe("body")
    expect(await refused(decodeUpdateBody({ allowLaunch: "yes" }))).toBe("allowLaunch")
    expect(await refused(decodeUpdateBody({ allowLaunch: true, label: "" }))).toBe("label")
  })
})

describe("import submit", () => {
  const signer = async () => {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])
    return {
      raw: Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64"),
      spki: new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey))
    }
  }

  it("takes the sealed key, an uncompressed encapsulated key and the signer key as a raw point or SPKI (converted to SPKI)", async () => {
    const key = await signer()
    const body = { ciphertext: b64(17), encapsulatedKey: b64(65, 4), signerPublicKey: key.raw }
    const decoded = await ok(decodeImportSubmitBody(body))
    expect(decoded.signerSpki).toEqual(key.spki)
    expect(decoded.ciphertext.byteLength).toBe(17)
    expect((await ok(decodeImportSubmitBody({ ...body, signerPublicKey: Buffer.from(key.spki).toString("base64"), label: "imp" }))).signerSpki).toEqual(key.spki)
  })

  it("refuses short ciphertext, a compressed or wrong-length encapsulated key, a signer key off the curve, then a bad label", async () => {
    const key = await signer()
    const body = { ciphertext: b64(17), encapsulatedKey: b64(65, 4), signerPublicKey: key.raw }
    expect(await refused(decodeImportSubmitBody({ ...body, ciphertext: b64(16) }))).toBe("ciphertext")
    expect(await refused(decodeImportSubmitBody({ ...body, ciphertext: "not base64!" }))).toBe("ciphertext")
    expect(await refused(decodeImportSubmitBody({ ...body, encapsulatedKey: b64(65, 2) }))).toBe("encapsulatedKey")
    expect(await refused(decodeImportSubmitBody({ ...body, encapsulatedKey: b64(64, 4) }))).toBe("encapsulatedKey")
    expect(await refused(decodeImportSubmitBody({ ...body, signerPublicKey: b64(65, 4) }))).toBe("signerPublicKey")
    expect(await refused(decodeImportSubmitBody({ ...body, signerPublicKey: b64(64, 4) }))).toBe("signerPublicKey")
    expect(await refused(decodeImportSubmitBody({ ...body, label: 7 }))).toBe("label")
  })
})

describe("sign", () => {
  it("takes a claim id of 1 to 128 characters, base64 or 0x-hex transaction bytes and an optional 64-byte authorization", async () => {
    const id = "c".repeat(ID_MAX_CHARS)
    expect(await ok(decodeSignBody({ claimId: id, transaction: "0x0102" }))).toEqual({ claimId: id, transaction: Uint8Array.from([1, 2]) })
    const signed = await ok(decodeSignBody({ claimId: "c", transaction: b64(4096), authorizationSignature: b64(64) }))
    expect(signed.transaction.byteLength).toBe(4096)
    expect(signed.authorizationSignature?.byteLength).toBe(64)
    expect(await ok(decodeSignBody({ claimId: "c", transaction: "AQI", authorizationSignature: null }))).toEqual({ claimId: "c", transaction: Uint8Array.from([1, 2]) })
  })

  it("refuses at each bound", async () => {
    expect(await refused(decodeSignBody({ claimId: "c".repeat(ID_MAX_CHARS + 1), transaction: "0x01" }))).toBe("claimId")
    expect(await refused(decodeSignBody({ claimId: "c", transaction: b64(4097) }))).toBe("transaction")
    expect(await refused(decodeSignBody({ claimId: "c", transaction: "" }))).toBe("transaction")
    expect(await refused(decodeSignBody({ claimId: "c", transaction: "0x01", authorizationSignature: b64(63) }))).toBe("authorizationSignature")
    expect(await refused(decodeSignBody({ claimId: "c", transaction: "0x01", authorizationSignature: b64(65) }))).toBe("authorizationSignature")
  })
})

describe("create TEE", () => {
  it("takes chain and key prefix, and optionally label, allowLaunch and a vault on the same chain", async () => {
    expect(await ok(decodeCreateTeeBody({ chain: "solana", keyPrefix: "abcdefgh" }))).toEqual({ chain: "solana", keyPrefix: "abcdefgh" })
    expect(await ok(decodeCreateTeeBody({ chain: "evm", keyPrefix: "k", label: "v", allowLaunch: true, vaultDestination: EVM_LOWER }))).toEqual({
      chain: "evm",
      keyPrefix: "k",
      label: "v",
      allowLaunch: true,
      vaultDestination: EVM_CHECKSUMMED
    })
    expect(await ok(decodeCreateTeeBody({ chain: "solana", keyPrefix: "k", allowLaunch: false }))).toEqual({ chain: "solana", keyPrefix: "k" })
  })

  it("refuses the first bad field", async () => {
    expect(await refused(decodeCreateTeeBody({ chain: "solana" }))).toBe("keyPrefix")
    expect(await refused(decodeCreateTeeBody({ chain: "solana", keyPrefix: "k".repeat(ID_MAX_CHARS + 1) }))).toBe("keyPrefix")
    expect(await refused(decodeCreateTeeBody({ chain: "solana", keyPrefix: "k", allowLaunch: 1 }))).toBe("allowLaunch")
    expect(await refused(decodeCreateTeeBody({ chain: "solana", keyPrefix: "k", vaultDestination: EVM_LOWER }))).toBe("vaultDestination")
  })
})

describe("rebind", () => {
  it("a preview takes selectors of 1 to 128 characters and an optional label prefix", async () => {
    const selector = "s".repeat(SELECTOR_MAX_CHARS)
    expect(await ok(decodeRebindBody({ dryRun: true, toKeyPrefix: "k", wallets: [selector], labelPrefix: "bot-" }))).toEqual({
      _tag: "Preview",
      toKeyPrefix: "k",
      wallets: [selector],
      labelPrefix: "bot-"
    })
    expect(await ok(decodeRebindBody({ dryRun: true, toKeyPrefix: "k", wallets: [] }))).toEqual({ _tag: "Preview", toKeyPrefix: "k", wallets: [] })
    expect(await refused(decodeRebindBody({ dryRun: true, toKeyPrefix: "k", wallets: ["s".repeat(SELECTOR_MAX_CHARS + 1)] }))).toBe("wallets")
    expect(await refused(decodeRebindBody({ dryRun: true, toKeyPrefix: "k", wallets: "w1" }))).toBe("wallets")
    expect(await refused(decodeRebindBody({ dryRun: true, toKeyPrefix: "k", wallets: [], labelPrefix: "" }))).toBe("labelPrefix")
    expect(await refused(decodeRebindBody({ dryRun: "yes", toKeyPrefix: "k", wallets: [] }))).toBe("dryRun")
    expect(await refused(decodeRebindBody({ dryRun: true, wallets: [] }))).toBe("toKeyPrefix")
  })

  it("a commit takes wallet ids with the binding each is expected to have; selectors are refused", async () => {
    expect(await ok(decodeRebindBody({ toKeyPrefix: "k", walletIds: ["w1", "w2"], expect: { w1: "a", w2: "b", w3: "c" } }))).toEqual({
      _tag: "Commit",
      toKeyPrefix: "k",
      walletIds: ["w1", "w2"],
      expect: { w1: "a", w2: "b" }
    })
    expect(await ok(decodeRebindBody({ dryRun: false, toKeyPrefix: "k", walletIds: ["w1"], expect: { w1: "a" }, wallets: null }))).toMatchObject({ _tag: "Commit" })
    expect(await refused(decodeRebindBody({ toKeyPrefix: "k", walletIds: ["w1"], expect: { w1: "a" }, wallets: ["w1"] }))).toBe("wallets")
    expect(await refused(decodeRebindBody({ toKeyPrefix: "k", walletIds: ["w1"], expect: { w1: "a" }, labelPrefix: "x" }))).toBe("labelPrefix")
    expect(await refused(decodeRebindBody({ toKeyPrefix: "k", walletIds: ["w1"] }))).toBe("expect")
    expect(await refused(decodeRebindBody({ toKeyPrefix: "k", walletIds: ["w1"], expect: ["a"] }))).toBe("expect")
    expect(await refused(decodeRebindBody({ toKeyPrefix: "k", walletIds: ["w1", "w2"], expect: { w1: "a" } }))).toBe("expect.w2")
    expect(await refused(decodeRebindBody({ toKeyPrefix: "k", walletIds: ["w".repeat(ID_MAX_CHARS + 1)], expect: {} }))).toBe("walletIds")
  })
})

describe("rebind history query", () => {
  it("limit defaults to 20 and is clamped to 1 to 100; an empty walletId reads as none", async () => {
    expect(await ok(decodeRebindsQuery(""))).toEqual({ walletId: undefined, limit: 20 })
    expect(await ok(decodeRebindsQuery("limit=0&walletId="))).toEqual({ walletId: undefined, limit: 1 })
    expect(await ok(decodeRebindsQuery("limit=-5&walletId=w1"))).toEqual({ walletId: "w1", limit: 1 })
    expect(await ok(decodeRebindsQuery("limit=100"))).toEqual({ walletId: undefined, limit: 100 })
    expect(await ok(decodeRebindsQuery("limit=101"))).toEqual({ walletId: undefined, limit: 100 })
    expect(await refused(decodeRebindsQuery("limit=ten"))).toBe("limit")
    expect(await refused(decodeRebindsQuery("limit=1.5"))).toBe("limit")
  })
})
