/**
 * What launch tests do through a started engine: read the local account's key, upload an image,
 * wait for a job to settle, and list the `new` feed's markets of a name.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import type { Engine } from "./engine.js"
import { eventually } from "./eventually.js"
import { solidImage } from "./testImages.js"

export const localCredentials = (dataDir: string): { accountId: string; sessionToken: string; agentKey: string } =>
  JSON.parse(readFileSync(path.join(dataDir, "local-credentials.json"), "utf8"))

/** Uploads a small square PNG with `key`; its hosted URL. */
export const uploadImage = async (engine: Engine, key: string, side = 32): Promise<string> => {
  const res = await fetch(`${engine.url}/api/v1/uploads/agent-image`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "image/png" },
    body: await solidImage("png", side, side)
  })
  if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { imageUrl: string }).imageUrl
}

type Call = (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any }>

/** Polls the job until `confirmed` or `failed` (deadline 60 s); the job record. */
export const settledJob = (call: Call, engine: () => Engine, clientLaunchId: string) =>
  eventually(
    async () => {
      const j = await call("GET", `/api/v1/launch/headless/jobs/${encodeURIComponent(clientLaunchId)}`)
      return j.body?.job?.status === "confirmed" || j.body?.job?.status === "failed" ? (j.body.job as Record<string, any>) : undefined
    },
    { what: `launch ${clientLaunchId} to settle`, deadlineMs: 60_000, intervalMs: 100, detail: () => engine().output().slice(-3000) }
  )

/** The `new` feed's markets named `name` on `chain`, once there is at least one (deadline 30 s). */
export const marketsNamed = (engine: Engine, chain: "solana" | "hood", name: string) =>
  eventually(
    async () => {
      const res = await fetch(`${engine.url}/api/v1/markets/feed?bucket=new&chain=${chain}&limit=100`)
      if (res.status !== 200) return undefined
      const rows = ((await res.json()) as { tokens: Array<{ name: string; address: string }> }).tokens.filter((t) => t.name === name)
      return rows.length > 0 ? rows : undefined
    },
    { what: `the ${chain} market ${name} in the new feed`, deadlineMs: 30_000, intervalMs: 100 }
  )
