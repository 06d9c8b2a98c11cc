/**
 * What launch tests do through a started engine: read the local account's key, upload an image,
 * wait for a job to settle, list the `new` feed's markets of a name, import a wallet over HPKE and
 * have the sign relay sign a build. Every call goes through the typed client
 * (`clients/typescript`), and so through the contract check the global `fetch` makes.
 */
import type { Client } from "openapi-fetch"
import { engineClient, type MainPaths } from "../../clients/typescript/index.js"
import { webcrypto } from "node:crypto"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import type { Engine } from "./engine.js"
import { eventually } from "./eventually.js"
import { sealForImport } from "./hpkeSealer.js"
import { solidImage } from "./testImages.js"

export const localCredentials = (dataDir: string): { accountId: string; sessionToken: string; agentKey: string } =>
  JSON.parse(readFileSync(path.join(dataDir, "local-credentials.json"), "utf8"))

/** The typed client of the main listener as an agent key, made at each call (the engine may restart on other ports, the key may change). */
export type AgentClient = () => Client<MainPaths>

/** The agent client of the key `key()` answers on the listener `url()` answers. */
export const agentClient =
  (url: () => string, key: () => string): AgentClient =>
  () =>
    engineClient({ baseUrl: url(), apiKey: key() })

/** Image bytes as the body of a typed call: sent as they are (the document types a binary body as a string). */
export const rawBody = (bytes: Uint8Array | FormData) => ({ body: bytes as unknown as string, bodySerializer: (b: unknown) => b })

/** Uploads a small square PNG with `key`; its hosted URL. */
export const uploadImage = async (engine: Engine, key: string, side = 32): Promise<string> => {
  const { data, error, response } = await agentClient(() => engine.url, () => key)().POST("/api/v1/uploads/agent-image", {
    ...rawBody(await solidImage("png", side, side)),
    headers: { "content-type": "image/png" }
  })
  if (data === undefined) throw new Error(`upload answered ${response.status}: ${JSON.stringify(error)}`)
  return data.imageUrl
}

/** Polls the job until `confirmed` or `failed` (deadline 60 s); the job record. */
export const settledJob = (agent: AgentClient, engine: () => Engine, clientLaunchId: string) =>
  eventually(
    async () => {
      const { data } = await agent().GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } })
      return data?.job?.status === "confirmed" || data?.job?.status === "failed" ? (data.job as Record<string, any>) : undefined
    },
    { what: `launch ${clientLaunchId} to settle`, deadlineMs: 60_000, intervalMs: 100, detail: () => engine().output().slice(-3000) }
  )

/** The `new` feed's markets named `name` on `chain`, once there is at least one (deadline 30 s). */
export const marketsNamed = (engine: Engine, chain: "solana" | "hood", name: string) =>
  eventually(
    async () => {
      const { data } = await engineClient({ baseUrl: engine.url }).GET("/api/v1/markets/feed", { params: { query: { bucket: "new", chain, limit: 100 } } })
      if (data === undefined) return undefined
      const rows = (data.tokens as Array<{ name: string; address: string }>).filter((t) => t.name === name)
      return rows.length > 0 ? rows : undefined
    },
    { what: `the ${chain} market ${name} in the new feed`, deadlineMs: 30_000, intervalMs: 100 }
  )

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64")

/**
 * Imports a wallet over the HPKE import routes as a client does it (RFC 9180 sealing of the key
 * text); its id and the P-256 signer that authorizes the relay's signs of it.
 */
export const importWallet = async (agent: AgentClient, chain: "solana" | "evm", address: string, secretText: string) => {
  const init = await agent().POST("/api/v1/agent/wallets/import/init", { body: { chain, address } })
  if (init.data === undefined) throw new Error(`import init answered ${init.response.status}: ${JSON.stringify(init.error)}`)
  const sealed = sealForImport(new Uint8Array(Buffer.from(init.data.encryptionPublicKey, "base64")), secretText)
  const signer = (await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair
  const raw = new Uint8Array(await webcrypto.subtle.exportKey("raw", signer.publicKey))
  const submit = await agent().POST("/api/v1/agent/wallets/import/submit", { body: { ciphertext: b64(sealed.ciphertext), encapsulatedKey: b64(sealed.enc), signerPublicKey: b64(raw) } })
  if (submit.data === undefined) throw new Error(`import submit answered ${submit.response.status}: ${JSON.stringify(submit.error)}`)
  const walletId = submit.data.wallet.id
  return {
    walletId,
    authorize: async (bytes: Uint8Array) => b64(new Uint8Array(await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signer.privateKey, new Uint8Array(bytes))))
  }
}

/** The sign relay over HTTP: signs a claimed build (`transaction` as the build gave it, `bytes` its wire bytes). */
export const relaySign = async (
  agent: AgentClient,
  wallet: { readonly walletId: string; readonly authorize: (bytes: Uint8Array) => Promise<string> },
  claimId: string,
  transaction: string,
  bytes: Uint8Array
): Promise<{ signature: string; signedTransaction: string }> => {
  const signed = await agent().POST("/api/v1/agent/wallets/{id}/sign", {
    params: { path: { id: wallet.walletId } },
    body: { claimId, transaction, authorizationSignature: await wallet.authorize(bytes) }
  })
  if (signed.data === undefined) throw new Error(`the relay answered ${signed.response.status}: ${JSON.stringify(signed.error)}`)
  return signed.data
}
