/**
 * `npm ci` needs every optional platform package its dependencies pin to have a lock entry. Our
 * registry mirrors only some platforms, so `npm install` leaves those entries out; after any
 * dependency change run `node scripts/complete-lockfile.mjs`. This test fails when that was
 * forgotten, before CI's `npm ci` would.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { projectRoot } from "../support/engine.js"

interface LockEntry {
  readonly version?: string
  readonly optionalDependencies?: Record<string, string>
}

describe("package-lock.json", () => {
  it("has an entry for every pinned optional dependency", () => {
    const lock = JSON.parse(readFileSync(projectRoot + "package-lock.json", "utf8")) as { packages: Record<string, LockEntry> }
    const missing: string[] = []
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
        if (!/^\d+\.\d+\.\d+/.test(version)) continue
        const nested = `${path === "" ? "" : path + "/"}node_modules/${name}`
        if (lock.packages[nested] === undefined && lock.packages[`node_modules/${name}`] === undefined) missing.push(`${name}@${version}`)
      }
    }
    expect(missing).toEqual([])
  })
})
