import { Effect, Either, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { loadMasterKey, MASTER_KEY_FILE, masterKeyFromBytes } from "./MasterKey.js"

const run = Effect.runPromise

describe("wallet master key", () => {
  it("seals with a fresh IV and opens only with the same row binding", async () => {
    const key = await run(masterKeyFromBytes(new Uint8Array(32).fill(7)))
    const secret = Uint8Array.of(1, 2, 3, 4)
    const a = await run(key.seal(secret, "wp_wallets:a"))
    const b = await run(key.seal(secret, "wp_wallets:a"))
    expect(a).not.toBe(b)
    expect(a.startsWith(`v1.${key.id}.`)).toBe(true)
    expect(await run(key.open(a, "wp_wallets:a"))).toEqual(secret)
    const moved = await run(Effect.either(key.open(a, "wp_wallets:b")))
    expect(Either.isLeft(moved) && moved.left.reason).toBe("decrypt_failed")
  })

  it("tells a wrong master key from a corrupted value", async () => {
    const k1 = await run(masterKeyFromBytes(new Uint8Array(32).fill(1)))
    const k2 = await run(masterKeyFromBytes(new Uint8Array(32).fill(2)))
    const sealed = await run(k1.seal(Uint8Array.of(9), "x"))
    const wrong = await run(Effect.either(k2.open(sealed, "x")))
    expect(Either.isLeft(wrong) && wrong.left.reason).toBe("wrong_master_key")
    const parts = sealed.split(".")
    const tampered = [parts[0], parts[1], parts[2], Buffer.from("garbage-bytes-here").toString("base64url")].join(".")
    const bad = await run(Effect.either(k1.open(tampered, "x")))
    expect(Either.isLeft(bad) && bad.left.reason).toBe("decrypt_failed")
  })

  it("refuses a configured key that is not 32 bytes", async () => {
    const r = await run(Effect.either(loadMasterKey({ masterKey: Redacted.make(Buffer.alloc(16).toString("base64")), dataDir: undefined })))
    expect(Either.isLeft(r) && r.left.reason).toBe("invalid_key")
  })

  it("embedded mode generates the key once under the data directory (0600) and reuses it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wallet-mk-"))
    try {
      const first = await run(loadMasterKey({ masterKey: undefined, dataDir: dir }))
      const sealed = await run(first.seal(Uint8Array.of(5), "row"))
      const second = await run(loadMasterKey({ masterKey: undefined, dataDir: dir }))
      expect(second.id).toBe(first.id)
      expect(await run(second.open(sealed, "row"))).toEqual(Uint8Array.of(5))
      expect(fs.statSync(path.join(dir, MASTER_KEY_FILE)).mode & 0o777).toBe(0o600)
      // The configured key wins over the file.
      const configured = await run(loadMasterKey({ masterKey: Redacted.make(Buffer.alloc(32, 3).toString("base64")), dataDir: dir }))
      expect(configured.id).not.toBe(first.id)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
