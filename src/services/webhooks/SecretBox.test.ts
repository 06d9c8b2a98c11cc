import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { keyFileName, loadOrCreateKeyFile, makeSecretBox, parseMasterKey, resolveMasterKey, SecretBoxError } from "./SecretBox.js"

const key = (byte: number) => new Uint8Array(32).fill(byte)
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

describe("SecretBox (AES-256-GCM at rest)", () => {
  it("opens what it sealed, only with the same key and the same row", async () => {
    const box = await run(makeSecretBox(key(1)))
    const sealed = await run(box.seal("whsec_secret", "wh_1"))
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    expect(sealed).not.toContain("whsec_secret")
    expect(await run(box.open(sealed, "wh_1"))).toBe("whsec_secret")
    // fresh IV every time
    expect(await run(box.seal("whsec_secret", "wh_1"))).not.toBe(sealed)
    // another row's additional data: refused as corrupt
    const otherRow = await run(Effect.either(box.open(sealed, "wh_2")))
    expect(Either.isLeft(otherRow) && otherRow.left.reason).toBe("corrupt")
    // a flipped ciphertext bit
    const last = sealed.at(-2) === "A" ? "B" : "A"
    const tampered = await run(Effect.either(box.open(sealed.slice(0, -2) + last + sealed.slice(-1), "wh_1")))
    expect(Either.isLeft(tampered) && tampered.left.reason).toBe("corrupt")
    // another master key: named as such
    const other = await run(makeSecretBox(key(2)))
    const wrong = await run(Effect.either(other.open(sealed, "wh_1")))
    expect(Either.isLeft(wrong) && wrong.left.reason).toBe("wrong_key")
  })

  it("refuses keys that are not 32 bytes", async () => {
    const r = await run(Effect.either(makeSecretBox(new Uint8Array(31))))
    expect(Either.isLeft(r) && r.left.reason).toBe("bad_key")
    expect(parseMasterKey("00".repeat(32))).toEqual(new Uint8Array(32))
    expect(parseMasterKey(Buffer.from(key(7)).toString("base64"))).toEqual(key(7))
    expect(parseMasterKey(Buffer.from(key(7)).toString("base64url"))).toEqual(key(7))
    expect(parseMasterKey("00".repeat(31))).toBeInstanceOf(SecretBoxError)
    expect(parseMasterKey("not a key")).toBeInstanceOf(SecretBoxError)
  })

  it("embedded mode: generates the key file once (0600) and reads it back; a server database needs the configured key", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "whkey-"))
    try {
      const first = await run(loadOrCreateKeyFile(dir))
      const second = await run(resolveMasterKey({ configured: undefined, dataDir: dir }))
      expect(second).toEqual(first)
      expect(first.byteLength).toBe(32)
      expect(fs.statSync(path.join(dir, keyFileName)).mode & 0o777).toBe(0o600)
      const configured = await run(resolveMasterKey({ configured: "11".repeat(32), dataDir: dir }))
      expect(configured).toEqual(key(0x11))
      const none = await run(Effect.either(resolveMasterKey({ configured: undefined, dataDir: undefined })))
      expect(Either.isLeft(none) && none.left.message).toContain("WEBHOOK_SECRET_KEY")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
