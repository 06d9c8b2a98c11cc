/**
 * What launch tests do through a started engine: read the local account's key, upload an image,
 * wait for a job to settle, list the `new` feed's markets of a name, import a wallet over HPKE and
 * have the sign relay sign a build.
 */
import { webcrypto } from "node:crypto"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import type { Engine } from "./engine.js"
import { eventually } from "./eventually.js"
import { sealForImport } from "./hpkeSealer.js"
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

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64")

/**
 * Imports a wallet over the HPKE import routes as a client does it (RFC 9180 sealing of the key
 * text); its id and the P-256 signer that authorizes the relay's signs of it.
 */
export const importWallet = async (call: Call, chain: "solana" | "evm", address: string, secretText: string) => {
  const init = await call("POST", "/api/v1/agent/wallets/import/init", { chain, address })
  if (init.status !== 200) throw new Error(`import init answered ${init.status}: ${JSON.stringify(init.body)}`)
  const sealed = sealForImport(new Uint8Array(Buffer.from(init.body.encryptionPublicKey, "base64")), secretText)
  const signer = (await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair
  const raw = new Uint8Array(await webcrypto.subtle.exportKey("raw", signer.publicKey))
  const submit = await call("POST", "/api/v1/agent/wallets/import/submit", { ciphertext: b64(sealed.ciphertext), encapsulatedKey: b64(sealed.enc), signerPublicKey: b64(raw) })
  if (submit.status !== 200) throw new Error(`import submit answered ${submit.status}: ${JSON.stringify(submit.body)}`)
  const walletId = (submit.body.wallet?.id ?? submit.body.id) as string
  return {
    walletId,
    authorize: async (bytes: Uint8Array) => b64(new Uint8Array(await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signer.privateKey, new Uint8Array(bytes))))
  }
}

/** The sign relay over HTTP: signs a claimed build (`transaction` as the build gave it, `bytes` its wire bytes). */
export const relaySign = async (
  call: Call,
  wallet: { readonly walletId: string; readonly authorize: (bytes: Uint8Array) => Promise<string> },
  claimId: string,
  transaction: string,
  bytes: Uint8Array
): Promise<{ signature: string; signedTransaction: string }> => {
  const signed = await call("POST", `/api/v1/agent/wallets/${wallet.walletId}/sign`, { claimId, transaction, authorizationSignature: await wallet.authorize(bytes) })
  if (signed.status !== 200) throw new Error(`the relay answered ${signed.status}: ${JSON.stringify(signed.body)}`)
  return signed.body
}
