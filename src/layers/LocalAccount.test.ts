import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { firstLaunchBanner } from "./LocalAccount.js"

/** The checkout's root, where the banner's commands are run from (README "A first launch"). */
const root = fileURLToPath(new URL("../../", import.meta.url))

describe("the start banner's first launch", () => {
  it("uploads a file every clone has, the same one README's first launch uploads", () => {
    const banner = firstLaunchBanner("http://127.0.0.1:8080", true)
    const upload = banner.match(/--data-binary @(\S+) /)?.[1]
    expect(upload).toBeDefined()
    expect(existsSync(`${root}${upload}`), `${upload} is not in the checkout`).toBe(true)
    expect(readFileSync(`${root}README.md`, "utf8")).toContain(`--data-binary @${upload}`)
    expect(banner).toContain("http://127.0.0.1:8080/api/v1/uploads/agent-image")
    expect(banner).toContain("http://127.0.0.1:8080/api/v1/launch/headless")
  })

  it("says how to turn launches on when they are off", () => {
    expect(firstLaunchBanner("http://127.0.0.1:8080", false)).toContain("HEADLESS_LAUNCH_ENABLED=true")
  })
})
