/**
 * A real engine for launch tests (`src/main.ts` as a child, embedded PGlite, both localnets, real
 * HTTP) with what the launch conformance tests need around it:
 *
 * - Accounts seeded into the data directory BEFORE the engine starts (the embedded database admits
 *   one process; the operator CLI's own commands and the engine's wallet provider on the same
 *   master key), each with one embedded wallet that cannot sign and the other chain's delegation
 *   active (so keys can be issued): `notDelegated` / `revoked` (Solana agent access never approved /
 *   revoked), `evmNotDelegated` / `evmRevoked` (the same on the EVM wallet); `free`, a Free
 *   account with both wallets delegated; and `noSolanaWallet`, with no embedded Solana wallet.
 * - Keys issued through the real key routes (`POST /api/v1/agent/keys`) with a session token.
 * - Chain probes over the localnets' RPC (`localnet.json`): a Solana wallet's lamports, whether an
 *   account exists, an EVM wallet's nonce and balance; and the mint a launch attempt would create
 *   (derived from the engine's mint secret in the data directory).
 * - `readDatabase`: after the engine stopped, the same PGlite opened in this process to read what
 *   was recorded (the engine's database admits no second client while it runs).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createPublicClient, getAddress, http } from "viem"
import { runCommand } from "../../src/cli.js"
import { launchMintSigner } from "../../src/chain/solana/launch/LaunchMint.js"
import * as Database from "../../src/db/Database.js"
import accountsMigration from "../../src/db/migrations/0003_accounts.js"
import { migrations } from "../../src/db/migrations/index.js"
import * as MasterKey from "../../src/services/wallets/MasterKey.js"
import { layerLocal as walletProviderLayer, WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { type Engine, startEngine } from "./engine.js"

export interface Account {
  readonly accountId: string
  readonly sessionToken: string
}

export interface HttpAnswer {
  readonly status: number
  readonly headers: Headers
  /** The parsed JSON body (any shape), or the text when it is not JSON. */
  readonly body: any
}

export interface LaunchWorld {
  readonly engine: Engine
  readonly url: string
  readonly dataDir: string
  readonly local: Account & { readonly agentKey: string }
  readonly notDelegated: Account
  readonly revoked: Account
  readonly evmNotDelegated: Account
  readonly evmRevoked: Account
  /** On the Free plan, both wallets delegated (and unfunded). */
  readonly free: Account
  /** On Max, no embedded Solana wallet at all (its EVM one delegated, so keys can be issued). */
  readonly noSolanaWallet: Account
  readonly call: (method: string, route: string, o?: { key?: string; bearer?: string; body?: unknown; rawBody?: Uint8Array; contentType?: string }) => Promise<HttpAnswer>
  /** Issues a key through the key routes; returns the plaintext key and its prefix. */
  readonly issueKey: (owner: Account, body: Record<string, unknown>) => Promise<{ readonly key: string; readonly keyPrefix: string }>
  readonly solanaLamports: (address: string) => Promise<bigint>
  readonly solanaAccountExists: (address: string) => Promise<boolean>
  readonly evmNonce: (address: string) => Promise<number>
  readonly evmBalance: (address: string) => Promise<bigint>
  /** The mint attempt 1 of this launch would create on Solana. */
  readonly launchMint: (accountId: string, clientLaunchId: string, attempt?: number) => Promise<string>
  /** Stops the engine (SIGTERM, so PGlite flushes) and reads its database in this process. */
  readonly readDatabase: <A>(read: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Promise<A>
  readonly cleanup: () => void
}

const seedLayer = (dataDir: string) => {
  const db = Database.layer({ url: undefined, dataDir })
  return walletProviderLayer({}).pipe(Layer.provide(MasterKey.layer({ masterKey: undefined, dataDir })), Layer.provideMerge(db))
}

/** The accounts whose embedded wallet on one chain cannot sign, seeded before the engine's first start. */
const seedAccounts = (dataDir: string) =>
  Effect.gen(function* () {
    yield* Database.runMigrations({ ...migrations, "0003_accounts": accountsMigration })
    const provider = yield* WalletProvider
    /** `absent`: no embedded wallet on that chain at all. */
    type State = "active" | "none" | "revoked" | "absent"
    const make = (name: string, plan: "free" | "max", solana: State, evm: State) =>
      Effect.gen(function* () {
        const created = (yield* runCommand(["create-account", "--plan", plan, "--name", name], Date.now())) as { accountId: string; sessionToken: string }
        for (const [chain, state] of [["solana", solana], ["evm", evm]] as const) {
          if (state === "absent") continue
          yield* provider.ensureEmbeddedWallet(created.accountId, chain)
          if (state !== "none") yield* provider.setDelegation(created.accountId, chain, state)
        }
        return { accountId: created.accountId, sessionToken: created.sessionToken }
      })
    return {
      notDelegated: yield* make("not-delegated", "max", "none", "active"),
      revoked: yield* make("revoked", "max", "revoked", "active"),
      evmNotDelegated: yield* make("evm-not-delegated", "max", "active", "none"),
      evmRevoked: yield* make("evm-revoked", "max", "active", "revoked"),
      free: yield* make("free", "free", "active", "active"),
      noSolanaWallet: yield* make("no-solana-wallet", "max", "absent", "active")
    }
  }).pipe(Effect.provide(seedLayer(dataDir)))

export const startLaunchWorld = async (env: Record<string, string>): Promise<LaunchWorld> => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "curvestream-launch-"))
  const seeded = await Effect.runPromise(seedAccounts(dataDir))
  const engine = await startEngine({ dataDir, env: { HEADLESS_LAUNCH_ENABLED: "true", ...env }, args: ["--quiet"], readyTimeoutMs: 300_000 })
  const local = JSON.parse(readFileSync(path.join(dataDir, "local-credentials.json"), "utf8")) as Account & { agentKey: string }
  const localnet = JSON.parse(readFileSync(path.join(dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string }; hood: { rpcUrl: string } }
  const mintSecret = Uint8Array.from(Buffer.from(readFileSync(path.join(dataDir, "launch-mint-secret"), "utf8").trim(), "base64"))
  const evm = createPublicClient({ transport: http(localnet.hood.rpcUrl) })

  const call: LaunchWorld["call"] = async (method, route, o = {}) => {
    const headers: Record<string, string> = {}
    if (o.key !== undefined) headers["x-api-key"] = o.key
    if (o.bearer !== undefined) headers.authorization = `Bearer ${o.bearer}`
    let body: Uint8Array | string | undefined
    if (o.rawBody !== undefined) {
      headers["content-type"] = o.contentType ?? "application/octet-stream"
      body = o.rawBody
    } else if (o.body !== undefined) {
      headers["content-type"] = "application/json"
      body = JSON.stringify(o.body)
    }
    const res = await fetch(`${engine.url}${route}`, { method, headers, ...(body !== undefined ? { body } : {}) })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, headers: res.headers, body: parsed }
  }

  const solanaRpc = async (method: string, params: ReadonlyArray<unknown>) => {
    const res = await fetch(localnet.solana.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
    })
    const out = (await res.json()) as { result?: { value: unknown }; error?: unknown }
    if (out.error !== undefined) throw new Error(`${method}: ${JSON.stringify(out.error)}`)
    return out.result!.value
  }

  return {
    engine,
    url: engine.url,
    dataDir,
    local,
    ...seeded,
    call,
    issueKey: async (owner, body) => {
      const r = await call("POST", "/api/v1/agent/keys", { bearer: owner.sessionToken, body })
      if (r.status !== 200) throw new Error(`key issue failed: ${r.status} ${JSON.stringify(r.body)}`)
      return { key: r.body.key as string, keyPrefix: r.body.keyPrefix as string }
    },
    solanaLamports: async (address) => BigInt(String(await solanaRpc("getBalance", [address, { commitment: "confirmed" }]))),
    solanaAccountExists: async (address) => (await solanaRpc("getAccountInfo", [address, { encoding: "base64", commitment: "confirmed" }])) !== null,
    evmNonce: (address) => evm.getTransactionCount({ address: getAddress(address), blockTag: "latest" }),
    evmBalance: (address) => evm.getBalance({ address: getAddress(address) }),
    launchMint: async (accountId, clientLaunchId, attempt = 1) => (await launchMintSigner(mintSecret, { accountId, clientLaunchId, attempt })).address,
    readDatabase: async <A>(read: Effect.Effect<A, unknown, SqlClient.SqlClient>): Promise<A> => {
      const stopped = await engine.stop("SIGTERM", 60_000)
      if (stopped.code !== 0) throw new Error(`engine exited with ${stopped.code ?? stopped.signal}:\n${engine.output().slice(-4000)}`)
      return Effect.runPromise(Effect.provide(read, Database.layer({ url: undefined, dataDir })))
    },
    cleanup: () => engine.cleanup()
  }
}
