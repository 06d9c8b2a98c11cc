/**
 * A real browser for the web page's tests: Debian's chromium (installed by `.ci/run`) driven by
 * playwright-core, which never downloads a browser of its own. Each launch gets a fresh profile
 * directory. `chromiumMissing` says why there is none; the caller fails under
 * `CURVESTREAM_REQUIRE_SERVERS=1` and skips otherwise, like the PostgreSQL tests.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"

export const CHROMIUM_PATH = "/usr/bin/chromium"

export const chromiumMissing = (): string | undefined => (existsSync(CHROMIUM_PATH) ? undefined : `no chromium at ${CHROMIUM_PATH} (Debian's \`chromium\` package; .ci/run installs it)`)

export interface Browser {
  readonly context: BrowserContext
  /** A new page recording its console errors and uncaught exceptions into `errors`. */
  page(): Promise<Page>
  readonly errors: Array<string>
  close(): Promise<void>
}

export const launchBrowser = async (): Promise<Browser> => {
  const profile = mkdtempSync(path.join(os.tmpdir(), "curvestream-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  const errors: Array<string> = []
  return {
    context,
    errors,
    page: async () => {
      const page = await context.newPage()
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(`${page.url()}: console error: ${m.text()}`)
      })
      page.on("pageerror", (e) => errors.push(`${page.url()}: uncaught: ${e.message}`))
      return page
    },
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }
}
